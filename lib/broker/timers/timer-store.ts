/**
 * @module The timer store: delayed messages (delay levels, timer messages, retries) wait here until due,
 * then are appended to their real queue. Items are bucketed by due second: bucket `timer:<second>` holds
 * the messages due in that second (sort key due#msgId#nonce), and the partition `timerdue` lists the
 * buckets that hold some (sort key: the second). A sweep reads the due part of that list with one query,
 * then each due bucket with one query: nothing is ever scanned.
 *
 * Who sweeps: every API process while it serves sends and pulls (at most once per `sweepIntervalMs`,
 * alongside the request), the scheduled job as the backstop (once a minute on AWS, staying up while
 * buckets fall due within its minute), and the local broker on a timer. One mover per bucket at a time: a
 * mover claims the bucket's next `lease#<n>` record (a put on condition "no item has this key"), and a
 * claim older than `LEASE_MS` (a mover that died) can be taken over with the next round. A message is
 * appended before its item is deleted, so a mover dying in between delivers it again (at least once, as
 * RocketMQ's schedule service); a healthy mover delivers each message once.
 *
 * The list entry of a bucket is written after its items, and a mover deletes it only when the bucket is
 * empty, then reads the bucket once more and writes the entry back if an item came in meanwhile: an item
 * is never left without its entry.
 */
import { randomBytes } from "node:crypto";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { MessageConst, type MessageRecord } from "../../core/message.js";
import { decodeBatch, encodeBatch } from "../../core/message-codec.js";
import { MAX_BATCH_MESSAGES } from "../../protocol/index.js";
import { ConditionFailedError, type Item, type Table } from "../../storage/table.js";
import type { QueueLog, QueueRef } from "../queue-log/index.js";
import { dueKey, MAX_RUN_MS } from "../store/index.js";

/** The largest delayed message, encoded: what fits one DynamoDB item with room for its attributes. */
export const MAX_TIMER_RECORD_BYTES = 300 * 1024;
/** A mover's claim on a bucket is abandoned after this long (no request or run lasts longer). */
export const LEASE_MS = MAX_RUN_MS;
/** How long past its window a scheduled run may keep moving a page of messages it started. */
const RUN_OVERRUN_MS = 2000;
/** What a sweep alongside a request moves at most (the rest waits for the next sweep). */
export const REQUEST_SWEEP_BUDGET = 256;

const DUE_PK = "timerdue";
const bucketPk = (second: number): string => `timer:${second}`;
const secondKey = (second: number): string => String(second).padStart(12, "0");
/** Every message item of a bucket sorts at or before this (they start with digits; leases with `lease#`). */
const ITEMS_END = "9~";
const LEASE_PREFIX = "lease#";
/** Items read (and moved) per query page. */
const PAGE = 100;
/** Bytes per append when a bucket moves many messages to one queue (under the 4 MiB batch limit). */
const APPEND_BYTES = 3 * 1024 * 1024;

export interface DelayedMessage {
  queue: QueueRef;
  record: MessageRecord;
  dueAt: number;
}

export interface TimerSweepReport {
  /** Due buckets looked at. */
  buckets: number;
  /** Messages appended to their real queue. */
  moved: number;
  /** Buckets skipped because another mover holds them. */
  busy: number;
  /** Buckets that failed this sweep (tried again by the next). */
  failed: number;
}

export interface TimerStoreOptions {
  /** How long an item is kept after it is due if nobody moves it (DynamoDB TTL tidies up). */
  retentionMs: number;
  /** Sweeps alongside requests: at most one per process per this many ms. */
  sweepIntervalMs: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const emptyReport = (): TimerSweepReport => ({ buckets: 0, moved: 0, busy: 0, failed: 0 });

export class TimerStore {
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  #lastRequestSweep = 0;
  #requestSweep: Promise<void> | undefined;

  constructor(
    private readonly table: Table,
    private readonly queueLog: QueueLog,
    private readonly options: TimerStoreOptions,
  ) {
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Checks that a message fits a timer item (before anything is written). */
  checkSize(record: MessageRecord, index: number): void {
    const size = encodeBatch([record]).byteLength;
    if (size > MAX_TIMER_RECORD_BYTES) {
      throw new NimbusError(
        ErrorCode.MESSAGE_BODY_TOO_LARGE,
        `message ${index}: a delayed message is at most ${MAX_TIMER_RECORD_BYTES} bytes encoded, this one is ${size}`,
      );
    }
  }

  /** Stores delayed messages: their items first, then their buckets' list entries. */
  async schedule(messages: readonly DelayedMessage[]): Promise<void> {
    for (const [i, m] of messages.entries()) this.checkSize(m.record, i);
    await inParallel(messages, (m) => {
      const id = m.record.properties[MessageConst.UNIQ_KEY] ?? "";
      // Unconditional put: the nonce makes the key this writer's own.
      return this.table.put({
        pk: bucketPk(Math.floor(m.dueAt / 1000)),
        sk: `${dueKey(m.dueAt)}#${id}#${randomBytes(4).toString("hex")}`,
        topic: m.queue.topic,
        brokerName: m.queue.brokerName,
        queueId: m.queue.queueId,
        dueAt: m.dueAt,
        batch: encodeBatch([m.record]),
        expiresAt: Math.floor((m.dueAt + this.options.retentionMs) / 1000),
      });
    });
    const seconds = new Set(messages.map((m) => Math.floor(m.dueAt / 1000)));
    await Promise.all([...seconds].map((s) => this.#putEntry(s)));
  }

  /**
   * A sweep alongside a request: at most one per `sweepIntervalMs` per process; the request that starts it
   * waits for it (a Lambda freezes what runs after its answer), others meanwhile do not. Never fails.
   */
  sweepAlongside(): Promise<void> {
    if (this.#requestSweep !== undefined) return Promise.resolve();
    const now = this.#now();
    if (now - this.#lastRequestSweep < this.options.sweepIntervalMs) return Promise.resolve();
    this.#lastRequestSweep = now;
    this.#requestSweep = this.sweep(REQUEST_SWEEP_BUDGET)
      .then(
        () => undefined,
        (err: unknown) => console.error("nimbus: moving due delayed messages failed:", err),
      )
      .finally(() => {
        this.#requestSweep = undefined;
      });
    return this.#requestSweep;
  }

  /** Resolves when no sweep started by a request is running (before a process closes its store). */
  async settled(): Promise<void> {
    await this.#requestSweep;
  }

  /**
   * Moves the messages due now, up to `budget` of them, bucket by bucket in due order; takes no new page of
   * messages after `stopAt` (a run's end).
   */
  async sweep(budget = Number.POSITIVE_INFINITY, stopAt = Number.POSITIVE_INFINITY): Promise<TimerSweepReport> {
    const report = emptyReport();
    const now = this.#now();
    const due = await this.table.query(DUE_PK, {
      sk: { lte: secondKey(Math.floor(now / 1000)) },
      limit: PAGE,
      consistent: true,
    });
    for (const entry of due.items) {
      if (report.moved >= budget || this.#now() >= stopAt) break;
      report.buckets++;
      try {
        const moved = await this.#moveBucket(Number(entry.sk), now, budget - report.moved, stopAt);
        if (moved === undefined) report.busy++;
        else report.moved += moved;
      } catch (err) {
        report.failed++;
        console.error(`nimbus: moving delayed messages of second ${String(entry.sk)} failed:`, err);
      }
    }
    return report;
  }

  /**
   * The scheduled job: sweeps now, then stays up for `runMs` while buckets fall due within it, sweeping
   * each as its second starts (and every `pollMs` while a due bucket still holds messages).
   */
  async runScheduled(runMs: number, pollMs = 250): Promise<TimerSweepReport> {
    const total = emptyReport();
    const deadline = this.#now() + runMs;
    // The last sweep may run past the window, not past the run's limit (the function has 60 s for 55 s).
    const stopAt = deadline + RUN_OVERRUN_MS;
    for (;;) {
      const r = await this.sweep(Number.POSITIVE_INFINITY, stopAt);
      total.buckets += r.buckets;
      total.moved += r.moved;
      total.busy += r.busy;
      total.failed += r.failed;
      const now = this.#now();
      if (now >= deadline) return total;
      const next = (await this.table.query(DUE_PK, { limit: 1, consistent: true })).items[0];
      if (next === undefined) return total;
      const startsAt = Number(next.sk) * 1000;
      if (startsAt > deadline) return total;
      await this.#sleep(Math.min(deadline - now, Math.max(pollMs, startsAt - now)));
    }
  }

  /** Messages waiting, per due second (an operator's view; reads the list and each listed bucket). */
  async pending(): Promise<{ second: number; messages: number }[]> {
    const out: { second: number; messages: number }[] = [];
    let startAfter: string | number | undefined;
    do {
      const page = await this.table.query(DUE_PK, { limit: PAGE, consistent: true, startAfter });
      for (const entry of page.items) {
        const second = Number(entry.sk);
        out.push({ second, messages: (await this.#items(second, ITEMS_END, Number.POSITIVE_INFINITY)).length });
      }
      startAfter = page.lastSk;
    } while (startAfter !== undefined);
    return out;
  }

  /** Moves bucket `second`'s messages due by `now`; undefined when another mover holds it. */
  async #moveBucket(second: number, now: number, budget: number, stopAt: number): Promise<number | undefined> {
    const dueBy = `${dueKey(now)}~`;
    let moved = 0;
    // Nothing due yet in this second (or nothing left): no lease, only the entry's tidy-up below.
    if ((await this.#items(second, dueBy, 1)).length > 0) {
      const lease = await this.#claim(second, now);
      if (lease === undefined) return undefined;
      moved = await this.#moveClaimed(lease, second, dueBy, budget, stopAt);
      if (moved >= budget || this.#now() >= stopAt) return moved;
    }
    if ((await this.#items(second, ITEMS_END, 1)).length > 0) return moved;
    await this.table.delete({ pk: DUE_PK, sk: secondKey(second) });
    // An item written while the entry was being deleted: its writer's entry may be the one just deleted.
    if ((await this.#items(second, ITEMS_END, 1)).length > 0) await this.#putEntry(second);
    return moved;
  }

  /** Moves the bucket's due messages under `lease`, then releases it. */
  async #moveClaimed(lease: Item, second: number, dueBy: string, budget: number, stopAt: number): Promise<number> {
    let moved = 0;
    try {
      for (;;) {
        const items = await this.#items(second, dueBy, Math.min(PAGE, budget - moved));
        if (items.length === 0) return moved;
        moved += await this.#deliver(items);
        if (moved >= budget || this.#now() >= stopAt) return moved;
      }
    } finally {
      // Unconditional: only this mover writes its own round's record.
      await this.table.put({ ...lease, released: true });
    }
  }

  /** Appends the items' messages to their queues (one append per queue and size chunk), then deletes them. */
  async #deliver(items: Item[]): Promise<number> {
    const byQueue = new Map<string, { queue: QueueRef; items: Item[] }>();
    for (const item of items) {
      const queue = { topic: String(item.topic), brokerName: String(item.brokerName), queueId: Number(item.queueId) };
      const key = `${queue.topic}\u0000${queue.brokerName}\u0000${queue.queueId}`;
      const group = byQueue.get(key) ?? { queue, items: [] };
      group.items.push(item);
      byQueue.set(key, group);
    }
    let moved = 0;
    for (const { queue, items: group } of byQueue.values()) {
      for (const chunk of chunks(group)) {
        const records = chunk.flatMap((i) => decodeBatch(i.batch as Uint8Array));
        await this.queueLog.append(queue, records);
        await inParallel(chunk, (i) => this.table.delete({ pk: i.pk, sk: i.sk }));
        moved += chunk.length;
      }
    }
    return moved;
  }

  async #items(second: number, lte: string, limit: number): Promise<Item[]> {
    const items: Item[] = [];
    let startAfter: string | number | undefined;
    do {
      const page = await this.table.query(bucketPk(second), {
        sk: { lte },
        consistent: true,
        startAfter,
        ...(Number.isFinite(limit) ? { limit: limit - items.length } : {}),
      });
      items.push(...page.items);
      startAfter = page.lastSk;
    } while (startAfter !== undefined && items.length < limit);
    return items;
  }

  /**
   * Claims the bucket's next lease round, unless a mover holds a round younger than LEASE_MS. Condition
   * `attribute_not_exists(pk)` on `lease#<n>`: of movers racing for a round, one wins.
   */
  async #claim(second: number, now: number): Promise<Item | undefined> {
    const pk = bucketPk(second);
    const newest = (
      await this.table.query(pk, { sk: { gt: LEASE_PREFIX }, descending: true, limit: 1, consistent: true })
    ).items[0];
    if (newest !== undefined && newest.released !== true && now - Number(newest.claimedAt) < LEASE_MS) return undefined;
    const round = newest === undefined ? 1 : Number(String(newest.sk).slice(LEASE_PREFIX.length)) + 1;
    const lease: Item = {
      pk,
      sk: `${LEASE_PREFIX}${String(round).padStart(9, "0")}`,
      claimedAt: now,
      released: false,
      expiresAt: Math.floor((now + this.options.retentionMs) / 1000),
    };
    try {
      await this.table.put(lease, { condition: { exists: false } });
      return lease;
    } catch (err) {
      if (err instanceof ConditionFailedError) return undefined;
      throw err;
    }
  }

  async #putEntry(second: number): Promise<void> {
    // Unconditional: the entry only says "this bucket may hold messages"; writing it twice is harmless.
    await this.table.put({
      pk: DUE_PK,
      sk: secondKey(second),
      expiresAt: Math.floor((second * 1000 + this.options.retentionMs) / 1000),
    });
  }
}

/** Requests in flight at once for one batch of puts or deletes (a connection pool's worth). */
const PARALLEL_REQUESTS = 16;

/** Runs `run` on every item, at most PARALLEL_REQUESTS at once. */
async function inParallel<T>(items: readonly T[], run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_REQUESTS, items.length) }, worker));
}

/** Items in appendable groups: at most MAX_BATCH_MESSAGES and about APPEND_BYTES each. */
function chunks(items: Item[]): Item[][] {
  const out: Item[][] = [];
  let current: Item[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = (item.batch as Uint8Array).byteLength;
    if (current.length > 0 && (current.length >= MAX_BATCH_MESSAGES || bytes + size > APPEND_BYTES)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}
