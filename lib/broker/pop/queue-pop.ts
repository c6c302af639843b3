/**
 * @module One queue's part of a POP receive: first the group's messages of this queue whose invisible time
 * ended (redelivered with deliveryAttempt + 1 as a new round of their checkpoint, or moved to `%DLQ%<group>`
 * past the max attempts), then new messages from the group's POP offset (one new checkpoint). What this
 * process learned of the queue's checkpoints is cached: the POP offset (a lost race corrects it), the
 * unfinished checkpoints and their earliest deadline, so the window is read again only when a deadline
 * falls due, a scan interval passed, or (FIFO) a checkpoint is still in flight.
 */
import { BoundedMap } from "../../core/bounded-map.js";
import type { MessageFilter } from "../../core/filter/index.js";
import { MessageConst } from "../../core/message.js";
import type { QueueLog, QueueRef, StoredMessage } from "../queue-log/index.js";
import {
  type CheckpointState,
  type CheckpointStore,
  isDone,
  newNonce,
  type OffsetState,
  popPk,
  type RoundKind,
} from "./checkpoints.js";

/** A checkpoint's range spans at most this many queue offsets (filtered-out messages included). */
export const MAX_CHECKPOINT_SPAN = 256;
/** Lost races for a queue's next range before a receive moves on to its next queue. */
const MAX_CLAIM_TRIES = 8;
/** The low-water hint is written when it moved past this many checkpoints (or after LOW_WATER_WRITE_MS). */
const LOW_WATER_STEP = 16;
const LOW_WATER_WRITE_MS = 10_000;
/** (group, queue) pairs whose cache a process keeps: it serves few at once; the oldest is forgotten past this. */
const MAX_CACHED_QUEUES = 10_000;

export interface PopSettings {
  maxDeliveryAttempts: number;
  /**
   * The clock skew between API processes: a redelivery waits this long past the invisible time, and a queue new
   * to a group starts at the first message stored this long before the group's start.
   */
  redeliveryGraceMs: number;
  /** Another process's expired checkpoints are found within this (a window scan at least this often). */
  reviveScanMs: number;
  /** How long a move to the dead-letter queue may take before another process tries it again. */
  deadLetterMoveMs: number;
  /** How long POP state outlives its last write (the queue log's retention). */
  retentionMs: number;
}

export interface Delivery {
  queue: QueueRef;
  message: StoredMessage;
  start: number;
  round: number;
  nonce: string;
  deliveryAttempt: number;
  invisibleUntil: number;
}

interface QueueCache {
  popOffset: number | undefined;
  lowWater: number | undefined;
  lowWaterWrittenAt: number;
  scannedAt: number | undefined;
  /** Unfinished checkpoints as last seen. */
  window: CheckpointState[];
}

export interface QueuePopDeps {
  store: CheckpointStore;
  queueLog: QueueLog;
  settings: PopSettings;
  now: () => number;
  /** Stores a message in the group's dead-letter queue on the queue's broker. */
  toDeadLetter(group: string, queue: QueueRef, message: StoredMessage, deliveryAttempt: number): Promise<void>;
}

export class QueuePopper {
  readonly #caches = new BoundedMap<string, QueueCache>(MAX_CACHED_QUEUES);
  /** Per (group, queue): the claim of new messages in progress in this process, the next one goes after it. */
  readonly #claims = new Map<string, Promise<void>>();

  constructor(private readonly deps: QueuePopDeps) {}

  /** The earliest time a checkpoint this process knows of falls due for redelivery (undefined: none). */
  nextDeadline(group: string, queues: readonly QueueRef[]): number | undefined {
    let next: number | undefined;
    for (const q of queues) {
      const c = this.#caches.get(popPk(group, q));
      for (const ck of c?.window ?? []) {
        for (const o of ck.offsets.values()) {
          if (!o.acked) next = Math.min(next ?? Number.POSITIVE_INFINITY, o.invisibleUntil);
        }
      }
    }
    return next === undefined ? undefined : next + this.deps.settings.redeliveryGraceMs;
  }

  /** Acks seen by this process: the cached window forgets what is done. */
  acked(pk: string, start: number, offsets: readonly number[]): void {
    const ck = this.#caches.get(pk)?.window.find((w) => w.head.start === start);
    if (ck === undefined) return;
    for (const offset of offsets) {
      const o = ck.offsets.get(offset);
      if (o) o.acked = true;
    }
  }

  /** A round this process wrote (a changed invisible time): the cached window follows. */
  changed(pk: string, start: number, round: number, state: OffsetState): void {
    const ck = this.#caches.get(pk)?.window.find((w) => w.head.start === start);
    if (ck === undefined) return;
    ck.maxRound = Math.max(ck.maxRound, round);
    ck.offsets.set(state.offset, state);
  }

  /**
   * Up to `want` messages of `queue` for `group`: due redeliveries first, then new messages. `groupStartedAt`:
   * when the group started on the topic (lib/broker/pop/group-starts.ts), where a queue new to it begins.
   */
  async take(
    group: string,
    queue: QueueRef,
    filter: MessageFilter,
    want: number,
    invisibleMs: number,
    fifo: boolean,
    maxDeliveryAttempts: number,
    groupStartedAt: number,
  ): Promise<Delivery[]> {
    const pk = popPk(group, queue);
    const cache = this.#cache(pk);
    const now = this.deps.now();
    if (this.#scanDue(cache, now, fifo)) await this.#scan(pk, cache, now);
    const out = await this.#redeliver(group, queue, pk, cache, want, invisibleMs, maxDeliveryAttempts);
    // FIFO: nothing new from a queue while an earlier message of it is in flight.
    if (out.length >= want || (fifo && cache.window.some((ck) => !isDone(ck)))) return out;
    const more = want - out.length;
    // Receivers of one process claim a queue's next range one after another: racing each other for the same
    // range would only fail conditional puts (the condition still settles races between processes).
    out.push(
      ...(await this.#inLine(pk, () =>
        this.#receiveNew(queue, pk, cache, filter, more, invisibleMs, fifo, groupStartedAt),
      )),
    );
    return out;
  }

  async #inLine<T>(pk: string, work: () => Promise<T>): Promise<T> {
    const ahead = this.#claims.get(pk);
    let done = () => {};
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    const tail = ahead === undefined ? mine : ahead.then(() => mine);
    this.#claims.set(pk, tail);
    try {
      await ahead;
      return await work();
    } finally {
      done();
      if (this.#claims.get(pk) === tail) this.#claims.delete(pk);
    }
  }

  #cache(pk: string): QueueCache {
    let c = this.#caches.get(pk);
    if (c === undefined) {
      c = { popOffset: undefined, lowWater: undefined, lowWaterWrittenAt: 0, scannedAt: undefined, window: [] };
      this.#caches.set(pk, c);
    }
    return c;
  }

  #scanDue(c: QueueCache, now: number, fifo: boolean): boolean {
    if (c.scannedAt === undefined || now - c.scannedAt >= this.deps.settings.reviveScanMs) return true;
    const open = c.window.filter((ck) => !isDone(ck));
    if (fifo && open.length > 0) return true;
    const grace = this.deps.settings.redeliveryGraceMs;
    return open.some((ck) => [...ck.offsets.values()].some((o) => !o.acked && now >= o.invisibleUntil + grace));
  }

  /** Reads the unfinished checkpoints from the low-water mark on, and moves the mark past finished ones. */
  async #scan(pk: string, c: QueueCache, now: number): Promise<void> {
    const { store } = this.deps;
    const from = c.lowWater ?? (await store.lowWater(pk));
    const window = await store.window(pk, from);
    const firstOpen = window.findIndex((ck) => !isDone(ck));
    const last = window.at(-1);
    const low = firstOpen >= 0 ? (window[firstOpen]?.head.start ?? from) : last === undefined ? from : last.head.end;
    c.window = window.filter((ck) => !isDone(ck));
    c.scannedAt = now;
    if (last !== undefined) c.popOffset = Math.max(c.popOffset ?? 0, last.head.end);
    c.lowWater = low;
    const passed = firstOpen < 0 ? window.length : firstOpen;
    if (low > from && (passed >= LOW_WATER_STEP || now - c.lowWaterWrittenAt >= LOW_WATER_WRITE_MS)) {
      await store.setLowWater(pk, low, now);
      c.lowWaterWrittenAt = now;
    }
  }

  async #redeliver(
    group: string,
    queue: QueueRef,
    pk: string,
    c: QueueCache,
    want: number,
    invisibleMs: number,
    maxDeliveryAttempts: number,
  ): Promise<Delivery[]> {
    const { store, settings } = this.deps;
    const out: Delivery[] = [];
    const now = this.deps.now();
    for (const ck of c.window) {
      if (out.length >= want) break;
      const due = [...ck.offsets.values()]
        .filter((o) => !o.acked && now >= o.invisibleUntil + settings.redeliveryGraceMs)
        .sort((a, b) => a.offset - b.offset);
      if (due.length === 0) continue;
      const dead = due.filter((o) => o.deliveryAttempt >= maxDeliveryAttempts);
      const live = due.filter((o) => o.deliveryAttempt < maxDeliveryAttempts).slice(0, want - out.length);
      if (live.length > 0) {
        const round = ck.maxRound + 1;
        const invisibleUntil = now + invisibleMs;
        const entries = live.map((o) => ({ offset: o.offset, deliveryAttempt: o.deliveryAttempt + 1 }));
        if (!(await store.createRound(pk, ck.head.start, round, entries, invisibleUntil, "redeliver"))) {
          c.scannedAt = undefined; // another process took this round: read the window again next time
          continue;
        }
        this.#apply(ck, round, entries, invisibleUntil, "redeliver");
        const messages = await this.#readOffsets(
          queue,
          entries.map((e) => e.offset),
        );
        const gone: number[] = [];
        for (const e of entries) {
          const message = messages.get(e.offset);
          if (message === undefined) gone.push(e.offset);
          else out.push({ queue, message, start: ck.head.start, round, nonce: ck.head.nonce, ...e, invisibleUntil });
        }
        // Past retention the message itself is gone: nothing left to deliver.
        if (gone.length > 0)
          await this.#ackOwn(
            pk,
            ck,
            gone.map((offset) => ({ offset, round })),
          );
      }
      if (dead.length > 0) await this.#toDeadLetter(group, queue, pk, ck, dead);
    }
    return out;
  }

  /** Moves messages past the max attempts to `%DLQ%<group>`: a `dlq` round (one mover), the appends, the ack. */
  async #toDeadLetter(group: string, queue: QueueRef, pk: string, ck: CheckpointState, dead: OffsetState[]) {
    const round = ck.maxRound + 1;
    const entries = dead.map((o) => ({ offset: o.offset, deliveryAttempt: o.deliveryAttempt }));
    const until = this.deps.now() + this.deps.settings.deadLetterMoveMs;
    if (!(await this.deps.store.createRound(pk, ck.head.start, round, entries, until, "dlq"))) return;
    this.#apply(ck, round, entries, until, "dlq");
    const messages = await this.#readOffsets(
      queue,
      entries.map((e) => e.offset),
    );
    for (const e of entries) {
      const message = messages.get(e.offset);
      if (message !== undefined) await this.deps.toDeadLetter(group, queue, message, e.deliveryAttempt);
    }
    await this.#ackOwn(
      pk,
      ck,
      entries.map((e) => ({ offset: e.offset, round })),
    );
  }

  async #ackOwn(pk: string, ck: CheckpointState, acks: { offset: number; round: number }[]): Promise<void> {
    await this.deps.store.ack(pk, ck.head.start, acks, this.deps.now());
    for (const a of acks) {
      const o = ck.offsets.get(a.offset);
      if (o) o.acked = true;
    }
  }

  #apply(
    ck: CheckpointState,
    round: number,
    entries: { offset: number; deliveryAttempt: number }[],
    invisibleUntil: number,
    kind: RoundKind,
  ): void {
    ck.maxRound = round;
    for (const e of entries) ck.offsets.set(e.offset, { ...e, round, invisibleUntil, kind, acked: false });
  }

  async #receiveNew(
    queue: QueueRef,
    pk: string,
    c: QueueCache,
    filter: MessageFilter,
    want: number,
    invisibleMs: number,
    fifo: boolean,
    groupStartedAt: number,
  ): Promise<Delivery[]> {
    const { store, queueLog } = this.deps;
    for (let tries = 0; tries < MAX_CLAIM_TRIES; tries++) {
      const start = c.popOffset ?? (await this.#startOffset(queue, pk, groupStartedAt));
      c.popOffset = start;
      const read = await queueLog.read(queue, start, {
        maxMessages: want,
        maxScanMessages: MAX_CHECKPOINT_SPAN,
        ...(filter.matchesEverything ? {} : { filter: (m) => filter.matches(m) }),
      });
      if (read.status === "OFFSET_ILLEGAL" && read.nextBeginOffset < start) return []; // the queue was recreated
      let messages = read.messages;
      let end = read.nextBeginOffset;
      if (fifo) ({ messages, end } = oneOfEachGroup(messages, end));
      if (end <= start) return [];
      const now = this.deps.now();
      const head = {
        start,
        end,
        offsets: messages.map((m) => m.queueOffset),
        invisibleUntil: now + invisibleMs,
        nonce: newNonce(),
      };
      const created = await store.create(pk, head, now);
      if (!created.created) {
        // Another receiver took this range: go on from its end (or read the chain again).
        c.popOffset = created.end > start ? created.end : undefined;
        continue;
      }
      c.popOffset = end;
      const state: CheckpointState = { head, maxRound: 1, offsets: new Map() };
      this.#apply(
        state,
        1,
        head.offsets.map((offset) => ({ offset, deliveryAttempt: 1 })),
        head.invisibleUntil,
        "redeliver",
      );
      for (const o of state.offsets.values()) o.kind = "receive";
      if (head.offsets.length > 0) c.window.push(state);
      return messages.map((message) => ({
        queue,
        message,
        start,
        round: 1,
        nonce: head.nonce,
        deliveryAttempt: 1,
        invisibleUntil: head.invisibleUntil,
      }));
    }
    return [];
  }

  /**
   * Where the group's POP offset of the queue is: the newest checkpoint's end; on a queue the group never
   * received from (or whose state lapsed with the retention), the first message stored from the group's start
   * (less the clock skew between processes; never before the retention), recorded as its low-water mark (a
   * create: of first receivers racing, one position wins). A message whose send began after the group started
   * is at or above it: it was reserved, then stamped, after the start.
   */
  async #startOffset(queue: QueueRef, pk: string, groupStartedAt: number): Promise<number> {
    const { store, queueLog, settings } = this.deps;
    const newest = await store.newestEnd(pk);
    if (newest !== undefined) return newest;
    const marked = await store.startMark(pk);
    if (marked !== undefined) return marked;
    const now = this.deps.now();
    const from = Math.max(groupStartedAt, now - settings.retentionMs) - settings.redeliveryGraceMs;
    return store.markStart(pk, await queueLog.offsetStoredFrom(queue, from), now);
  }

  /** The stored messages at `offsets` (sorted), read in as few reads as their span allows. */
  async #readOffsets(queue: QueueRef, offsets: readonly number[]): Promise<Map<number, StoredMessage>> {
    const want = new Set(offsets);
    const found = new Map<number, StoredMessage>();
    let from = Math.min(...offsets);
    const last = Math.max(...offsets);
    while (from <= last) {
      const read = await this.deps.queueLog.read(queue, from, { maxMessages: Math.min(last - from + 1, 1024) });
      for (const m of read.messages) if (want.has(m.queueOffset)) found.set(m.queueOffset, m);
      if (read.nextBeginOffset <= from) break;
      from = read.nextBeginOffset;
    }
    return found;
  }
}

/** FIFO: the leading messages up to the first that repeats a message group (it waits for the next receive). */
function oneOfEachGroup(messages: StoredMessage[], end: number): { messages: StoredMessage[]; end: number } {
  const groups = new Set<string>();
  for (const [i, m] of messages.entries()) {
    const group = m.properties[MessageConst.SHARDING_KEY];
    if (group === undefined) continue;
    if (groups.has(group)) return { messages: messages.slice(0, i), end: m.queueOffset };
    groups.add(group);
  }
  return { messages, end };
}
