/**
 * @module A caught-up poll of a spread (hot) queue, answered by its counter: one consistent read of the counter
 * instead of one query per index key. When the counter says nobody reserved an offset at or past the reader's
 * offset, and that offset is a max offset this process saw, nothing is stored past it: `NO_NEW_MSG` at one read.
 * When the counter is past the reader and no item is (a range reserved at the top and not filled: a writer that
 * stopped without sealing its tail, a Lambda container frozen), the reader seals that range once it has seen the
 * counter there for longer than the hole lease, one offset at a time from the newest item's end, so the queue's
 * idle polls come back to one read. See docs/queue-log.md ("Idle polls of a hot queue").
 */
import { BoundedMap } from "../../core/bounded-map.js";
import { isNimbusError } from "../../core/errors.js";
import type { Table } from "../../storage/table.js";
import { holds } from "./chain.js";
import type { IndexView } from "./layout.js";
import { COUNTER_ATTRIBUTE, end, type IndexEntry } from "./queue-index.js";
import { sealOffset } from "./ranges.js";
import { MAX_SEALS_PER_READ, type ReadResult } from "./read.js";

/** The most queues whose counter a process remembers seeing past their newest item (the oldest are forgotten). */
const MAX_WATCHED = 10_000;

/** The queue's counter (the first offset nobody reserved yet), from one consistent read; undefined when it has none. */
export async function readCounter(table: Table, view: IndexView): Promise<number | undefined> {
  const next = (await table.get(view.counter, { consistent: true }))?.[COUNTER_ATTRIBUTE];
  return typeof next === "number" ? next : undefined;
}

/** The answer to a poll at `offset` when the counter is there too: nothing stored at or past it. */
export function idleAnswer<M>(offset: number, minOffset: number): ReadResult<M> {
  return { status: "NO_NEW_MSG", messages: [], nextBeginOffset: offset, minOffset, maxOffset: offset };
}

interface Seen {
  /** A counter value read past the queue's newest item: every offset below it was reserved before `at`. */
  counter: number;
  /** When it was read (the reader's own wall clock, after the read answered). */
  at: number;
}

/** Ranges reserved at the top of spread queues and not filled, as this process's polls saw them. */
export class TopRanges {
  readonly #seen = new BoundedMap<string, Seen>(MAX_WATCHED, { order: "written" });

  constructor(private readonly options: { leaseMs: number; now: () => number }) {}

  /**
   * After a poll at `offset` that read `counter` past it: remembers when the counter was first seen there, and once
   * that is longer ago than the hole lease, and the poll found no item at or past `offset` (`offset` is the newest
   * item's end), seals the offsets from `offset` up to the counter then seen (at most `MAX_SEALS_PER_READ`). Each
   * seal starts at the end of an item (the newest, then the seal before it) and covers an offset reserved before
   * the counter was read, so longer ago than the lease. Answers the number of seals written.
   */
  async pass(view: IndexView, offset: number, counter: number, read: ReadResult<unknown>): Promise<number> {
    const now = this.options.now();
    const seen = this.#seen.get(view.pk);
    if (seen === undefined || seen.counter <= offset) {
      this.#remember(view.pk, { counter, at: now });
      return 0;
    }
    const caughtUp = read.status === "NO_NEW_MSG" && read.maxOffset === offset && read.nextBeginOffset === offset;
    if (!caughtUp || now - seen.at < this.options.leaseMs) return 0;
    let at = offset;
    let seals = 0;
    while (at < seen.counter && seals < MAX_SEALS_PER_READ) {
      let holder: IndexEntry;
      try {
        holder = await sealOffset(view, at, now);
      } catch (err) {
        // Throttled or timed out: the poll's answer stands, and a later poll seals on from the newest item's end.
        if (isNimbusError(err) && err.retryable) return seals;
        throw err;
      }
      seals++;
      // A writer's fill came first: the next poll reads it (and the keys again, the counter being past it).
      if (holder.loc.kind !== "sealed") return seals;
      at = end(holder);
    }
    if (at >= seen.counter) this.#seen.delete(view.pk);
    return seals;
  }

  #remember(pk: string, seen: Seen): void {
    this.#seen.set(pk, seen);
  }
}

/** The most queues whose last walked item a process keeps (the oldest are forgotten). */
const MAX_WALKED = 1_024;
/** An inline item over this many bytes is not kept: at most `MAX_WALKED` × 8 KiB of batches held. */
const MAX_WALKED_INLINE_BYTES = 8_192;

/**
 * The item each queue's last read walked last, by queue (at most `MAX_WALKED`): a poll standing at its end (a
 * tailing consumer waiting at a live writer's range) then needs no query for the item before its offset, nor
 * does a read that starts inside it (the last read stopped at `maxMessages` in the middle of a batch). Only an
 * item younger than half the shortest retention is handed out (retention cannot have trimmed it yet). An inline
 * item keeps its batch's bytes, which every read of it decodes again: the messages' bodies are views into them,
 * so nothing may write into a delivered body.
 */
export class WalkedItems {
  readonly #last = new BoundedMap<string, IndexEntry>(MAX_WALKED, { order: "written" });

  constructor(private readonly options: { freshMs: number; now: () => number }) {}

  /** The item known to end at `offset` on the queue, if this process walked it last and it is young. */
  endingAt(pk: string, offset: number): IndexEntry | undefined {
    return this.#young(pk, (entry) => end(entry) === offset);
  }

  /** The item known to hold `offset` past its start (a read stopped inside it), if walked last here and young. */
  holding(pk: string, offset: number): IndexEntry | undefined {
    return this.#young(pk, (entry) => holds(entry, offset));
  }

  /** The queue's last walked item if `fits` takes it and retention cannot have trimmed it yet. */
  #young(pk: string, fits: (entry: IndexEntry) => boolean): IndexEntry | undefined {
    const entry = this.#last.get(pk);
    if (entry === undefined || !fits(entry)) return undefined;
    return this.options.now() - entry.storeTimestamp < this.options.freshMs ? entry : undefined;
  }

  remember(pk: string, entry: IndexEntry): void {
    if (entry.loc.kind === "inline" && entry.loc.bytes.byteLength > MAX_WALKED_INLINE_BYTES) this.#last.delete(pk);
    else this.#last.set(pk, entry);
  }
}
