/**
 * @module The queue log's write path: appends to one queue from one process wait in line and go out
 * one index put at a time. Batches waiting together are merged (group commit): into one inline item while
 * they fit the inline threshold, else into one object and its one item. Each index item fills a range
 * reserved from the queue's counter (no race between writers of different processes), with an append id,
 * so a put whose reply was lost is recognised as ours, and the batch's message index (its ids and keys), so
 * indexing costs no request. See docs/queue-log.md ("Append").
 */
import { randomBytes } from "node:crypto";
import { ErrorCode, isNimbusError, NimbusError } from "../../core/errors.js";
import { MessageConst, type MessageRecord } from "../../core/message.js";
import { concatBatches } from "../../core/message-codec.js";
import { ConditionFailedError, type Item } from "../../storage/table.js";
import type { IndexView } from "./layout.js";
import { LayoutMovedError, type QueueLayouts } from "./layouts.js";
import type { RangeLeases } from "./leases.js";
import { type BatchIndex, type BatchLocation, end, fromItem, type IndexEntry, toItem } from "./queue-index.js";
import { reserveAndPut } from "./ranges.js";

/** The index item's attribute holding the id of the append that wrote it. */
export const APPEND_ID_ATTRIBUTE = "a";

/** What the message index keeps of one appended message: its UNIQ_KEY and its keys. */
export interface IndexedMessage {
  uniqKey: string;
  keys: readonly string[];
}

/** What the message index keeps of each message: its UNIQ_KEY (absent: not indexed) and its keys. */
export function indexedMessages(messages: readonly MessageRecord[]): IndexedMessage[] {
  return messages.map((m) => ({ uniqKey: m.properties[MessageConst.UNIQ_KEY] ?? "", keys: m.keys }));
}

/**
 * What a queue's batches carry of the message index (lib/broker/query), from the topic's settings: ids and
 * keys, ids only (`key.index=false`), or nothing (system topics nobody looks up by id).
 */
export type IndexPolicy = "keys" | "ids" | "none";

/**
 * An object batch's ids and keys stay in its index item up to this many bytes: far under DynamoDB's 400 KB item
 * limit (the item is otherwise about 100 bytes), and a pull reading the item pays for them (read units). 64 KiB
 * holds the ids of a full batch of 1024 messages (about 36 KB) with short keys. Past it the item holds neither,
 * and a query reads them from the batch's object (one GET). An inline batch's are in its bytes, which the inline
 * threshold already bounds.
 */
export const MAX_ITEM_INDEX_BYTES = 64 * 1024;

export interface AppendResult {
  /** Queue offset of the batch's first message; the batch holds `[queueOffset, queueOffset + count)`. */
  queueOffset: number;
  storeTimestamp: number;
}

export interface RangeWriterOptions {
  /** Each queue's layout (one key, or spread over several). */
  layouts: QueueLayouts;
  /** Wall clock (ms since epoch): stamps the batches. */
  wallNow: () => number;
  /** Hands out offsets: reserved per append (one-key queues), or from a leased range (spread queues). */
  leases: RangeLeases;
  /** Told after each reservation, before the fill (tests stop a writer here, as if its container died). */
  afterReserve?: ((pk: string, start: number, count: number) => void | Promise<void>) | undefined;
  /** Remembers the end of a batch just written (a max offset this process has seen). */
  learnTail: (pk: string, tail: number) => void;
  maxAppendMs: number;
  /**
   * Stores the batch of queue `pk`'s group of `appends` appends (more than one: a group commit): inline bytes up
   * to the inline threshold, else in an object written first. Its location goes into the index item.
   */
  store: (pk: string, batch: Uint8Array, appends: number) => Promise<BatchLocation>;
  /** The object writes' flush cycle (flush-cycle.ts); without it a queue takes its next group at once. */
  cycle?: AppendCycle | undefined;
  /** Batches waiting together are merged while the result stays at most this big (one object at most). */
  mergeLimitBytes: number;
  /**
   * What the batches of queue `pk` carry of the message index (default: ids and keys). Asked once per group
   * commit, before its index put: cached by the caller, it must not cost a request per send.
   */
  indexPolicy?: ((pk: string) => Promise<IndexPolicy>) | undefined;
}

/** What the write path tells the flush cycle (`FlushCycle`), and asks of it. */
export interface AppendCycle {
  /** An append arrived. */
  arrived(): void;
  /** When a queue may take its next group: now (undefined), or when the promise resolves. */
  turn(): Promise<void> | undefined;
  /** Queue `pk` hands no write for the next object. */
  release(pk: string): void;
}

interface PendingAppend {
  batch: Uint8Array;
  count: number;
  indexed: readonly IndexedMessage[] | undefined;
  resolve: (result: AppendResult) => void;
  reject: (err: unknown) => void;
}

/** An append id's random bytes, taken from a pool filled 256 ids at a time (one call into the CSPRNG, not one each). */
const APPEND_ID_BYTES = 12;
const APPEND_IDS_PER_FILL = 256;
let appendIdPool = Buffer.alloc(0);
let appendIdAt = 0;

function freshAppendId(): string {
  if (appendIdAt + APPEND_ID_BYTES > appendIdPool.length) {
    appendIdPool = randomBytes(APPEND_ID_BYTES * APPEND_IDS_PER_FILL);
    appendIdAt = 0;
  }
  const id = appendIdPool.toString("base64url", appendIdAt, appendIdAt + APPEND_ID_BYTES);
  appendIdAt += APPEND_ID_BYTES;
  return id;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RangeWriter {
  readonly #options: RangeWriterOptions;
  /** Appends waiting per queue; a queue has an entry while its line is being drained. */
  readonly #lines = new Map<string, PendingAppend[]>();

  constructor(options: RangeWriterOptions) {
    this.#options = options;
  }

  /** Appends to queue `pk` waiting in line behind the group being written (for tests and the benchmark). */
  waiting(pk: string): number {
    return this.#lines.get(pk)?.length ?? 0;
  }

  /**
   * Appends an encoded batch of `count` messages to queue `pk`. Appends to one queue from this process go
   * out one after another; those that wait together are merged into one batch, one object at most and one index put,
   * and each caller is answered its own offsets (in line order) once that put has landed.
   */
  append(pk: string, batch: Uint8Array, count: number, indexed?: readonly IndexedMessage[]): Promise<AppendResult> {
    this.#options.cycle?.arrived();
    return new Promise<AppendResult>((resolve, reject) => {
      const pending: PendingAppend = { batch, count, indexed, resolve, reject };
      const line = this.#lines.get(pk);
      if (line) {
        line.push(pending);
        return;
      }
      const fresh = [pending];
      this.#lines.set(pk, fresh);
      void this.#drain(pk, fresh);
    });
  }

  /**
   * Writes the line's groups one after another, each taken at the flush cycle's turn: after an object that held
   * merged groups, once the senders those groups answered are back (bounded), so the group holds them and goes
   * in the one next object with the other queues' groups; at once otherwise.
   */
  async #drain(pk: string, line: PendingAppend[]): Promise<void> {
    const cycle = this.#options.cycle;
    while (line.length > 0) {
      const turn = cycle?.turn();
      if (turn !== undefined) await turn;
      const group = this.#takeGroup(line);
      try {
        const merged =
          group.length === 1 ? (group[0] as PendingAppend).batch : concatBatches(group.map((p) => p.batch));
        const loc = await this.#options.store(pk, merged, group.length);
        if (loc.kind !== "object") cycle?.release(pk);
        const index = await this.#batchIndex(pk, loc, group);
        const { queueOffset, storeTimestamp } = await this.#fill(pk, loc, sumCounts(group), index);
        let offset = queueOffset;
        for (const p of group) {
          p.resolve({ queueOffset: offset, storeTimestamp });
          offset += p.count;
        }
      } catch (err) {
        for (const p of group) p.reject(err);
        cycle?.release(pk);
      }
    }
    cycle?.release(pk);
    this.#lines.delete(pk);
  }

  /**
   * The message index of a group commit, written in its own index put (no request of its own): an object
   * batch's ids and keys (up to `MAX_ITEM_INDEX_BYTES`), an inline batch's flag only (its bytes hold them).
   * The policy failing to load does not fail the send: ids and keys are kept, as for a topic by default.
   */
  async #batchIndex(pk: string, loc: BatchLocation, group: readonly PendingAppend[]): Promise<BatchIndex | undefined> {
    let policy: IndexPolicy = "keys";
    try {
      policy = (await this.#options.indexPolicy?.(pk)) ?? "keys";
    } catch (err) {
      console.warn(`nimbus: index settings of ${pk} not read, keeping keys: ${String(err)}`);
    }
    if (policy === "none") return undefined;
    const keysIndexed = policy === "keys";
    if (loc.kind !== "object" || group.some((p) => p.indexed?.length !== p.count)) return { keysIndexed };
    const ids: string[] = [];
    const keys: Array<[string, number]> = [];
    let bytes = 0;
    for (const p of group) {
      for (const m of p.indexed ?? []) {
        bytes += Buffer.byteLength(m.uniqKey) + 3;
        if (keysIndexed) {
          for (const key of m.keys) {
            keys.push([key, ids.length]);
            bytes += Buffer.byteLength(key) + 8;
          }
        }
        ids.push(m.uniqKey);
      }
      // Too big for the item: a query reads this batch's ids and keys from its object instead.
      if (bytes > MAX_ITEM_INDEX_BYTES) return { keysIndexed };
    }
    return { ids, ...(keysIndexed ? { keys } : {}), keysIndexed };
  }

  /** The first waiting append, with those right behind it while the merged batch stays within the limit. */
  #takeGroup(line: PendingAppend[]): PendingAppend[] {
    const first = line.shift() as PendingAppend;
    const group = [first];
    let bytes = first.batch.byteLength;
    for (;;) {
      const next = line[0];
      if (next === undefined || bytes + next.batch.byteLength > this.#options.mergeLimitBytes) break;
      bytes += next.batch.byteLength;
      group.push(line.shift() as PendingAppend);
    }
    return group;
  }

  /**
   * Reserves a range for one index item (an `ADD` on the queue's counter: no race with other writers) and
   * fills it with the item by a conditional put. The item carries a fresh append id: when a put's outcome is
   * unknown (a lost reply, a timeout, the SDK retrying a put that had landed) the item found in the slot
   * tells whether it is ours. A range a reader sealed meanwhile (this writer took longer than the lease) is
   * given up and a new one reserved: nothing was acknowledged yet.
   */
  async #fill(
    pk: string,
    loc: BatchLocation,
    count: number,
    batchIndex: BatchIndex | undefined,
  ): Promise<AppendResult> {
    const { layouts, leases, maxAppendMs } = this.#options;
    const index = layouts.table;
    const appendId = freshAppendId();
    // Real time, not the injectable wall clock (that one stamps batches, and tests may freeze it).
    const deadline = performance.now() + maxAppendMs;
    let unknownOutcome: NimbusError | undefined;
    let view: IndexView = await layouts.forWriter(pk);
    for (;;) {
      if (!view.spread && view.table.addThenPut !== undefined && this.#options.afterReserve === undefined) {
        try {
          const filled = await this.#reserveAndFill(view, loc, count, batchIndex, appendId);
          if (filled !== undefined) return filled;
        } catch (err) {
          if (!(err instanceof LayoutMovedError)) throw err;
          view = layouts.learnSpread(pk, err.keys);
          continue;
        }
        if (performance.now() >= deadline) {
          throw new NimbusError(ErrorCode.SYSTEM_BUSY, `queue ${pk}: the append took too long, try again`);
        }
        continue;
      }
      let start: number;
      try {
        start = await leases.take(view, count);
      } catch (err) {
        // A one-key reservation found the queue spread (its setting differs here): take its layout, try again.
        if (!(err instanceof LayoutMovedError)) throw err;
        view = layouts.learnSpread(pk, err.keys);
        continue;
      }
      if (!view.spread) layouts.learnOneKey(pk);
      await this.#options.afterReserve?.(pk, start, count);
      for (;;) {
        // Stamped after the reservation: a reader may take this time as an upper bound of when every range
        // below this one was reserved (the lease of docs/queue-log.md).
        const entry: IndexEntry = { start, count, storeTimestamp: this.#options.wallNow(), loc };
        let holder: Item | undefined;
        try {
          // Condition `attribute_not_exists(pk)` on (queue, sk = start): the range is ours alone (the counter
          // handed it out once), so the only item that can be there first is a reader's seal, or our own
          // earlier try whose answer was lost. Never two batches at one offset.
          await index.put(
            { ...toItem(view.keyOf(start), entry, batchIndex), [APPEND_ID_ATTRIBUTE]: appendId },
            { condition: { exists: false }, returnExistingOnFailure: true },
          );
          this.#options.learnTail(pk, end(entry));
          return { queueOffset: start, storeTimestamp: entry.storeTimestamp };
        } catch (err) {
          if (err instanceof ConditionFailedError) {
            holder = err.existing;
          } else if (isNimbusError(err) && err.retryable) {
            // Outcome unknown: the put may have landed. The slot says. Not landed: the same put again
            // (same slot, same id: at most one of them can ever land).
            unknownOutcome = err;
            holder = await this.#readSlot(view, start);
            if (holder === undefined) {
              if (performance.now() >= deadline) throw unknownOutcome;
              await sleep(Math.random() * 5);
              continue;
            }
          } else {
            throw err;
          }
        }
        if (holder?.[APPEND_ID_ATTRIBUTE] === appendId) {
          // Our own item: an earlier try of this append landed and its answer was lost.
          const ours = fromItem(holder);
          this.#options.learnTail(pk, end(ours));
          return { queueOffset: ours.start, storeTimestamp: ours.storeTimestamp };
        }
        if (holder === undefined || fromItem(holder).loc.kind !== "sealed") {
          throw new NimbusError(
            ErrorCode.SYSTEM_ERROR,
            `queue ${pk}: offset ${start}, reserved from its counter, holds another batch (is a writer of the old chain rule still running?)`,
          );
        }
        void leases.release(view); // sealed: a reader took the range for dead; its tail is sealed, reserve again
        break;
      }
      if (performance.now() >= deadline) {
        throw (
          unknownOutcome ?? new NimbusError(ErrorCode.SYSTEM_BUSY, `queue ${pk}: the append took too long, try again`)
        );
      }
    }
  }

  /**
   * A one-key queue's reserve and fill in one transaction (`reserveAndPut`: the embedded store), the same item and
   * conditions as the two steps. Undefined when a reader's seal holds the range's first offset: it is given up.
   */
  async #reserveAndFill(
    view: IndexView,
    loc: BatchLocation,
    count: number,
    batchIndex: BatchIndex | undefined,
    appendId: string,
  ): Promise<AppendResult | undefined> {
    const made: { entry?: IndexEntry } = {};
    const start = await reserveAndPut(view, count, (first) => {
      // Stamped after the reservation, inside its transaction (as the two-step fill stamps its item).
      const entry: IndexEntry = { start: first, count, storeTimestamp: this.#options.wallNow(), loc };
      made.entry = entry;
      return { ...toItem(view.keyOf(first), entry, batchIndex), [APPEND_ID_ATTRIBUTE]: appendId };
    });
    const entry = made.entry;
    if (start === undefined || entry === undefined) return undefined;
    this.#options.layouts.learnOneKey(view.pk);
    this.#options.learnTail(view.pk, end(entry));
    return { queueOffset: entry.start, storeTimestamp: entry.storeTimestamp };
  }

  /** The item in slot `sk` of the queue (consistent), or undefined when the slot is empty or unreadable now. */
  async #readSlot(view: IndexView, sk: number): Promise<Item | undefined> {
    try {
      return await view.get(sk);
    } catch (err) {
      if (isNimbusError(err) && err.retryable) return undefined;
      throw err;
    }
  }
}

function sumCounts(group: readonly PendingAppend[]): number {
  return group.reduce((n, p) => n + p.count, 0);
}
