/**
 * @module The queue log: append batches to a queue and read them back by queue offset, on nothing but
 * the `Table` and `ObjectStore` ports (no transactions). See docs/queue-log.md for why it holds.
 */
import { BoundedMap } from "../../core/bounded-map.js";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { MessageRecord } from "../../core/message.js";
import { encodeBatch } from "../../core/message-codec.js";
import type { ObjectStore } from "../../storage/object-store.js";
import type { Storage } from "../../storage/storage.js";
import type { Table } from "../../storage/table.js";
import { type AppendResult, type IndexedMessage, type IndexPolicy, indexedMessages, RangeWriter } from "./append.js";
import { AppendInterest } from "./append-interest.js";
import { type Backlog, countBacklog } from "./backlog.js";
import { firstItems } from "./chain.js";
import { idleAnswer, readCounter, TopRanges, WalkedItems } from "./idle.js";
import { type IndexedPage, offsetStoredFrom, readIndexedBatches } from "./indexed-batches.js";
import type { IndexView } from "./layout.js";
import { QueueLayouts } from "./layouts.js";
import { RangeLeases } from "./leases.js";
import { measureLoad, type QueueLoad } from "./load.js";
import {
  type BatchLocation,
  end,
  fromItem,
  holdsMessages,
  type IndexEntry,
  QUEUE_INDEX_TABLE,
  type QueueRef,
  queuePk,
  toItem,
} from "./queue-index.js";
import { reserveRange, sealOffset } from "./ranges.js";
import {
  checkReadArguments,
  type ReadContext,
  type ReadOptions,
  type ReadResult,
  readQueue,
  type StoredRecord,
  storedMessage,
} from "./read.js";
import { isSharedObjectKey, SharedObjectWriter } from "./shared-objects.js";

export * from "./queue-log-options.js";
export type { AppendResult, Backlog, IndexedMessage, IndexedPage, IndexPolicy, QueueLoad };
export { indexedMessages };

import {
  checkCacheBounds,
  DEFAULT_MERGE_LIMIT_BYTES,
  DEFAULT_RANGE_USE_MS,
  DEFAULT_RESERVATION_LEASE_MS,
  MAX_CACHED_QUEUES,
  type QueueLogOptions,
  type QueueStatus,
  type TrimResult,
} from "./queue-log-options.js";

interface Cached {
  value: number;
  /** When it was learned, on the monotonic clock. */
  at: number;
}

/** Told after an append: the queue, its new end, and whether the append was another process's (a relayed hint). */
export type AppendListener = (q: QueueRef, maxOffset: number, elsewhere: boolean) => void;

export class QueueLog {
  readonly #index: Table;
  readonly #objects: ObjectStore;
  readonly #inlineThreshold: number;
  readonly #mergedInlineThreshold: number;
  readonly #tailCacheMs: number;
  readonly #minCacheMs: number;
  readonly #minRetentionMs: number;
  readonly #now: () => number;
  readonly #monotonicNow: () => number;
  readonly #writer: RangeWriter;
  readonly #layouts: QueueLayouts;
  readonly #leases: RangeLeases;
  readonly #objectWriter: SharedObjectWriter;
  readonly #leaseMs: number;
  readonly #retentionMs: number | undefined;
  readonly #replicationGraceMs: number;
  /** Tails and bottoms learned, of at most `MAX_CACHED_QUEUES` queues each (one forgotten is read again). */
  readonly #tails = new BoundedMap<string, Cached>(MAX_CACHED_QUEUES, { order: "written" });
  readonly #mins = new BoundedMap<string, Cached>(MAX_CACHED_QUEUES, { order: "written" });
  readonly #topRanges: TopRanges | undefined;
  readonly #walked: WalkedItems;

  constructor(storage: Storage, options: QueueLogOptions = {}) {
    this.#index = storage.table(QUEUE_INDEX_TABLE);
    this.#objects = storage.objects;
    const { flushCycleWaitMs: cycleWaitMs, objectPutHedge: hedge } = options;
    const cycle = cycleWaitMs === undefined ? undefined : () => cycleWaitMs;
    this.#objectWriter = new SharedObjectWriter(storage.objects, { cycleWaitMs: cycle, hedge });
    this.#inlineThreshold = options.inlineThresholdBytes ?? 8 * 1024;
    this.#mergedInlineThreshold = Math.min(this.#inlineThreshold, options.mergedInlineThresholdBytes ?? Infinity);
    this.#tailCacheMs = options.tailCacheMs ?? 30_000;
    this.#minCacheMs = options.minCacheMs ?? 30_000;
    this.#minRetentionMs = options.minRetentionMs ?? 3_600_000;
    this.#now = options.now ?? Date.now;
    this.#monotonicNow = options.monotonicNow ?? (() => performance.now());
    this.#retentionMs = options.retentionMs;
    this.#replicationGraceMs = options.objectReplicationGraceMs ?? 0;
    checkCacheBounds(this.#inlineThreshold, this.#minRetentionMs, this.#tailCacheMs);
    this.#leaseMs = options.reservationLeaseMs ?? DEFAULT_RESERVATION_LEASE_MS;
    this.#walked = new WalkedItems({ freshMs: this.#minRetentionMs / 2, now: this.#now });
    if (this.#replicationGraceMs === 0) this.#topRanges = new TopRanges({ leaseMs: this.#leaseMs, now: this.#now });
    const indexKeys = options.indexKeys ?? 1;
    this.#layouts = new QueueLayouts(this.#index, typeof indexKeys === "number" ? () => indexKeys : indexKeys);
    this.#leases = new RangeLeases({
      reserve: reserveRange,
      rangeUseMs: options.rangeUseMs ?? DEFAULT_RANGE_USE_MS,
      maxRangeOffsets: options.maxRangeOffsets ?? 16,
      wallNow: this.#now,
    });
    this.#writer = new RangeWriter({
      layouts: this.#layouts,
      leases: this.#leases,
      wallNow: this.#now,
      afterReserve: options.afterReserve,
      learnTail: (pk, tail) => this.#learnTail(pk, tail),
      maxAppendMs: options.maxAppendMs ?? 2500,
      store: (pk, batch, appends) => this.#store(pk, batch, appends),
      cycle: this.#objectWriter.cycle,
      mergeLimitBytes: Math.max(this.#inlineThreshold, options.mergeLimitBytes ?? DEFAULT_MERGE_LIMIT_BYTES),
      indexPolicy: options.indexPolicy,
    });
  }

  /** Encodes and appends `messages` as one batch (indexed by their UNIQ_KEY and keys). */
  append(q: QueueRef, messages: readonly MessageRecord[]): Promise<AppendResult> {
    return this.appendEncoded(q, encodeBatch(messages), messages.length, indexedMessages(messages));
  }

  /**
   * Appends an encoded batch of `count` messages (made by `encodeBatch` from messages the caller checked). The
   * batch gets consecutive offsets, once, even when a reply is lost on the way (see `RangeWriter`). An
   * object written for a batch whose index put never succeeded is garbage no reader can reach (the bucket's
   * lifecycle rule, or the embedded store's `collectGarbage`, removes it). A SYSTEM_BUSY given up after an
   * unknown outcome may still have landed: the client's retry then stores the messages twice (same UNIQ_KEY).
   */
  async appendEncoded(
    q: QueueRef,
    batch: Uint8Array,
    count: number,
    indexed?: readonly IndexedMessage[],
  ): Promise<AppendResult> {
    if (!Number.isInteger(count) || count < 1) {
      throw new NimbusError(ErrorCode.MESSAGE_ILLEGAL, "a batch holds at least one message");
    }
    const appended = await this.#writer.append(queuePk(q), batch, count, indexed);
    for (const listener of this.#appendListeners) listener(q, appended.queueOffset + count, false);
    return appended;
  }

  /**
   * Another process of this deployment appended to `q` (its hint relayed here: `nimbus dev --workers`): the
   * listeners are told as for an append of this one's, with `elsewhere` set so nobody relays it back.
   */
  appendedElsewhere(q: QueueRef, maxOffset: number): void {
    for (const listener of this.#appendListeners) listener(q, maxOffset, true);
  }

  /**
   * Tells `listener` after each append, with the queue's new end (the write path's hint: the push channel, POP's
   * long polls, the subscription dispatcher); a listener must not throw or wait. Returns its removal.
   */
  onAppended(listener: AppendListener): () => void {
    this.#appendListeners.add(listener);
    return () => this.#appendListeners.delete(listener);
  }
  readonly #appendListeners = new Set<AppendListener>();
  /** Which topics this process's waiters wait on (what the other processes of a deployment tell it of). */
  readonly interest = new AppendInterest();

  /** Appends waiting in line for this queue, to be merged into its next index put (group commit). */
  waitingAppends(q: QueueRef): number {
    return this.#writer.waiting(queuePk(q));
  }

  /** Reads messages from `offset` on, as RocketMQ's pull does. */
  async read(q: QueueRef, offset: number, options: ReadOptions = {}): Promise<ReadResult> {
    const read = await this.readRecords(q, offset, options);
    return { ...read, messages: read.messages.map(storedMessage) };
  }

  /** `read`, each message a checked record whose strings are not made (a door that copies its bytes). */
  async readRecords(q: QueueRef, offset: number, options: ReadOptions = {}): Promise<ReadResult<StoredRecord>> {
    const pk = queuePk(q);
    checkReadArguments(offset, options);
    // A spread queue polled at a max offset this process saw: its counter first (idle.ts). Not on a replica,
    // whose counter and items replicate apart.
    const known = this.#layouts.known(pk);
    const counter =
      known?.spread === true && this.#topRanges !== undefined && this.#tails.get(pk)?.value === offset
        ? await readCounter(this.#index, known)
        : undefined;
    if (counter === offset) return idleAnswer(offset, await this.#minOffset(pk, false));
    const { view, newest } = await this.#layouts.read(pk);
    // The item this process's last read of the queue stopped in (on a spread queue, or at the end of): not asked again.
    const ctx: ReadContext = { ...this.#readContext(view), holding: this.#walked.holding(pk, offset) };
    if (view.spread) ctx.endingAt = this.#walked.endingAt(pk, offset);
    ctx.walked = (e: IndexEntry) => this.#walked.remember(pk, e);
    const result = await readQueue(ctx, newest, offset, options);
    this.#learnTail(pk, result.maxOffset);
    if (counter !== undefined && counter > offset) await this.#topRanges?.pass(view, offset, counter, result);
    return result;
  }

  /**
   * The message index: where a scan for batches stored at or after `timestamp` starts (every batch below was
   * stored before `timestamp + STORE_TIME_SKEW_MS`), by a binary search of the queue's index items.
   */
  async offsetStoredFrom(q: QueueRef, timestamp: number): Promise<number> {
    return offsetStoredFrom(await this.#layouts.view(queuePk(q)), timestamp);
  }

  /** The message index: up to `limit` index items from offset `from`, as batches with their ids and keys. */
  async indexedBatches(q: QueueRef, from: number, limit: number): Promise<IndexedPage> {
    return readIndexedBatches(this.#readContext(await this.#layouts.view(queuePk(q))), from, limit);
  }

  /**
   * Stops using the offset ranges this process holds on spread queues (a process stopping, or a test): their
   * unused tails are sealed now, so the queues' readers do not wait for the hole lease. Also waits for every object
   * PUT still out (a hedged PUT's loser, hedged-puts.ts): after it, this process writes nothing more.
   */
  async releaseRanges(): Promise<void> {
    await Promise.all([this.#leases.releaseAll(), this.#objectWriter.settled()]);
  }

  /** Tails of leased ranges this process's writer sealed itself (spread queues; for tests and the benchmark). */
  get tailsSealed(): number {
    return this.#leases.tailsSealed;
  }

  #readContext(view: IndexView): ReadContext {
    const pk = view.pk;
    return {
      view,
      objects: this.#objects,
      minOffset: (fresh) => this.#minOffset(pk, fresh),
      now: this.#now,
      replicationGraceMs: this.#replicationGraceMs,
      // A replica (a slave cell) never seals: it waits for the master's seals to replicate.
      ...(this.#replicationGraceMs > 0 ? {} : { seal: { leaseMs: this.#leaseMs, now: this.#now } }),
      ...(this.#retentionMs === undefined ? {} : { expiredBefore: this.#now() - this.#retentionMs }),
    };
  }

  /** The queue's max offset (the offset its next message gets), from one consistent read. */
  maxOffset(q: QueueRef): Promise<number> {
    return this.#tailEnd(queuePk(q), true);
  }

  /**
   * `offset`, or the queue's max offset when `offset` is past it (a commit there is clamped, as RocketMQ's
   * broker does). No read when a tail this process saw already covers it: a max offset only grows.
   */
  async clampToMaxOffset(q: QueueRef, offset: number): Promise<number> {
    const pk = queuePk(q);
    const known = this.#tails.get(pk);
    if (known && offset <= known.value) return offset;
    return Math.min(offset, await this.#tailEnd(pk, true));
  }

  /**
   * The messages stored in `[from, to)` of a queue (a group's lag: `to` its max offset): sealed offsets and
   * ranges not filled yet are not messages. Two consistent queries, one bounded page (backlog.ts).
   */
  async backlog(q: QueueRef, from: number, to: number): Promise<Backlog> {
    return countBacklog(await this.#layouts.view(queuePk(q)), from, to);
  }

  /** Min and max offset and the last store time of a queue, from two consistent reads. */
  async status(q: QueueRef): Promise<QueueStatus> {
    const pk = queuePk(q);
    const tail = await this.#newest(pk);
    if (!tail) return { minOffset: 0, maxOffset: 0, lastUpdateTimestamp: 0 };
    return {
      minOffset: await this.#minOffset(pk, true),
      maxOffset: end(tail),
      lastUpdateTimestamp: tail.storeTimestamp,
    };
  }

  /**
   * The queue's write load against its keys' ceiling (load.ts): one query per index key of the newest items, only
   * when asked (`topicStatus --load`).
   */
  async load(q: QueueRef): Promise<QueueLoad> {
    const pk = queuePk(q);
    const view = this.#layouts.known(pk) ?? (await this.#layouts.read(pk)).view;
    return measureLoad(view, this.#now());
  }

  /**
   * Retention: deletes the batches stored before `olderThan` (ms since epoch), oldest first, stopping at
   * the first younger one, and never the newest batch of the queue (it holds the max offset). The last batch
   * deleted is replaced by a trimmed marker (the min offset is its end) and the marker below it deleted, so
   * the queue's bottom is never mistaken for a range not filled yet. Unfilled ranges among old batches (their
   * writers died an hour ago or more) are sealed first.
   */
  async trim(q: QueueRef, olderThan: number): Promise<TrimResult> {
    if (olderThan > this.#now() - this.#minRetentionMs) {
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `retention must be at least ${this.#minRetentionMs} ms`);
    }
    const pk = queuePk(q);
    const view = await this.#layouts.view(pk);
    let deletedBatches = 0;
    let deletedMessages = 0;
    for (;;) {
      const [oldest, next, third] = (await firstItems(view, 3)).map(fromItem);
      if (!oldest || !next) break;
      const marked = oldest.loc.kind === "trimmed";
      // The batch to replace by a marker: the oldest (no marker yet), or the one above the marker.
      const victim = marked ? next : oldest;
      const above = marked ? third : next;
      if (!above || victim.storeTimestamp >= olderThan) break;
      const from = marked ? end(oldest) : await this.#minOffset(pk, true);
      if (victim.start > from) {
        // An unfilled range under an old batch: its writer is long gone. Sealed, stamped as old as the batch.
        await sealOffset(view, from, victim.storeTimestamp);
        continue;
      }
      const marker: IndexEntry = { ...victim, loc: { kind: "trimmed" } };
      // Unconditional: it replaces an old batch that is not the newest; a reader sees the batch or the marker.
      await this.#index.put(toItem(view.keyOf(marker.start), marker));
      if (marked) await this.#index.delete({ pk: view.keyOf(oldest.start), sk: oldest.start });
      // A shared object holds other queues' batches too: the bucket's lifecycle rule (the embedded store's
      // garbage collection, once no item names it) removes it.
      if (victim.loc.kind === "object" && !isSharedObjectKey(victim.loc.objectKey)) {
        await this.#objects.delete([victim.loc.objectKey]);
      }
      if (holdsMessages(victim)) {
        deletedBatches++;
        deletedMessages += victim.count;
      }
    }
    const minOffset = await this.#minOffset(pk, true);
    return { deletedBatches, deletedMessages, minOffset };
  }

  async #store(pk: string, batch: Uint8Array, appends: number): Promise<BatchLocation> {
    const inlineUpTo = appends > 1 ? this.#mergedInlineThreshold : this.#inlineThreshold;
    if (batch.byteLength <= inlineUpTo) return { kind: "inline", bytes: batch };
    // The key does not depend on the offset, so the object is written before the offset is known; batches of
    // other queues waiting meanwhile share it (shared-objects.ts).
    return { kind: "object", ...(await this.#objectWriter.write(batch, pk, appends)) };
  }

  /** The offset after the newest batch: cached for `tailCacheMs`, else one consistent query. */
  async #tailEnd(pk: string, fresh: boolean): Promise<number> {
    const cached = this.#tails.get(pk);
    if (!fresh && cached && this.#monotonicNow() - cached.at < this.#tailCacheMs) return cached.value;
    const newest = await this.#newest(pk);
    const value = newest ? end(newest) : 0;
    this.#learn(this.#tails, pk, value);
    return value;
  }

  async #newest(pk: string): Promise<IndexEntry | undefined> {
    const { newest } = await this.#layouts.read(pk);
    return newest && fromItem(newest);
  }

  /**
   * The end of the trimmed marker at the queue's bottom; 0 when retention never trimmed it (a first batch
   * above 0 then sits on a range not filled yet). A queue of the chain rule that retention trimmed before it
   * had a counter has neither: its first batch's start.
   */
  async #minOffset(pk: string, fresh: boolean): Promise<number> {
    const cached = this.#mins.get(pk);
    if (!fresh && cached && this.#monotonicNow() - cached.at < this.#minCacheMs) return cached.value;
    const view = await this.#layouts.view(pk);
    const oldest = await view.oldest();
    const first = oldest && fromItem(oldest);
    let value = 0;
    if (first?.loc.kind === "trimmed") value = end(first);
    else if (first !== undefined && first.start > 0) {
      const counter = await this.#index.get(view.counter, { consistent: true });
      value = counter === undefined ? first.start : 0;
    }
    this.#learn(this.#mins, pk, value);
    return value;
  }

  /** A max offset seen: a cached one is only ever raised (batches of lower ranges may land later). */
  #learnTail(pk: string, tail: number): void {
    const known = this.#tails.get(pk);
    this.#learn(this.#tails, pk, Math.max(tail, known?.value ?? 0));
  }

  #learn(cache: Map<string, Cached>, pk: string, value: number): void {
    cache.set(pk, { value, at: this.#monotonicNow() });
  }
}
