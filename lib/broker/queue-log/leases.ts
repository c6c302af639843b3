/**
 * @module Offset ranges leased to a writer of a spread (hot) queue: instead of one counter `ADD` per append, a
 * writer reserves a range sized to what it will use within `rangeUseMs` (from the pace of its own appends to
 * the queue, at most `maxRangeOffsets`), hands its offsets to its next appends in order, and seals the unused
 * tail with one empty item when the range's time is up (or at once when it moves to a new range). A writer that
 * stops (a Lambda container frozen or gone) leaves its tail to the readers, who seal it after the hole lease.
 * One-key queues reserve exactly what each append needs, as before. See docs/queue-log.md ("Hot queues").
 */
import { BoundedMap } from "../../core/bounded-map.js";
import type { IndexView } from "./layout.js";
import { sealRun } from "./ranges.js";

export interface LeaseOptions {
  /** Reserves `count` offsets on the queue's counter and answers the first (`reserveRange`). */
  reserve: (view: IndexView, count: number) => Promise<number>;
  /** How long a writer hands out offsets of a range after reserving it. */
  rangeUseMs: number;
  /** The most offsets one reservation takes beyond what the append itself needs. */
  maxRangeOffsets: number;
  /** Wall clock (ms since epoch): stamps a tail's seal. */
  wallNow: () => number;
}

interface Lease {
  next: number;
  end: number;
  /** When the reservation was sent (monotonic ms): the range was reserved no earlier. */
  reservedAt: number;
  timer: ReturnType<typeof setTimeout>;
}

interface Held {
  view: IndexView;
  lease: Lease;
}

interface Pace {
  last: number;
  /** Smoothed time between two appends of this writer to the queue (ms). */
  interval: number;
}

/**
 * The largest batch a writer leases a spare slot for beyond `maxRangeOffsets` (one more append of its size): a
 * dead writer's hole is then at most 2 × 32 offsets, which readers seal one offset at a time, at most 64 a read.
 */
export const MAX_BATCH_SLOT = 32;

/** The most queues whose lease and pace a writer keeps (the oldest are dropped: their tails sealed). */
const MAX_QUEUES = 10_000;

export class RangeLeases {
  readonly #options: LeaseOptions;
  /** Past `MAX_QUEUES`, the oldest range is released to make room (its unused tail sealed). */
  readonly #leases = new BoundedMap<string, Held>(MAX_QUEUES, { onForget: (_pk, held) => void this.#seal(held) });
  readonly #paces = new BoundedMap<string, Pace>(MAX_QUEUES);
  /**
   * Tail seals sent and not answered yet (a range's time up, a move to a new range, a forgotten queue, a release):
   * `releaseAll` waits for them too. Each settles within the storage client's own timeouts and retries.
   */
  readonly #sealing = new Set<Promise<void>>();
  /** Tails sealed by their owner so far (for tests and the benchmark). */
  tailsSealed = 0;

  constructor(options: LeaseOptions) {
    this.#options = options;
  }

  /** The first of `count` offsets for the next append to the view's queue, in order for this writer. */
  async take(view: IndexView, count: number): Promise<number> {
    if (!view.spread) return this.#options.reserve(view, count);
    const now = performance.now();
    const size = this.#size(view.pk, count, now);
    const held = this.#leases.get(view.pk)?.lease;
    if (held !== undefined && now - held.reservedAt < this.#options.rangeUseMs && held.end - held.next >= count) {
      const start = held.next;
      held.next += count;
      return start;
    }
    void this.release(view);
    const reservedAt = performance.now();
    const start = await this.#options.reserve(view, size);
    if (size > count) this.#hold(view, { next: start + count, end: start + size, reservedAt });
    return start;
  }

  /** Stops using the queue's range (its time is up, or a seal took an offset of it): its unused tail is sealed. */
  release(view: IndexView): Promise<void> {
    const held = this.#leases.get(view.pk);
    if (held === undefined) return Promise.resolve();
    this.#leases.delete(view.pk);
    return this.#seal(held);
  }

  /**
   * Stops using every range held (a process stopping): their unused tails are sealed, and so are those whose seal
   * was already on its way (a range whose time ran out just before): when this answers, every tail this writer
   * let go of is stored, and its queues' readers find no range of this writer left unfilled at the top.
   */
  async releaseAll(): Promise<void> {
    for (const { view } of [...this.#leases.values()]) void this.release(view);
    await Promise.all([...this.#sealing]);
  }

  /** Seals the unused tail of a range no longer held. */
  #seal(held: Held): Promise<void> {
    clearTimeout(held.lease.timer);
    const { next, end } = held.lease;
    if (next >= end) return Promise.resolve();
    this.tailsSealed++;
    // One item for the whole tail: nobody else was handed these offsets. A reader's seal that came first wins
    // (the put is conditional); a failure leaves the tail to the readers, after the hole lease.
    const sealing = sealRun(held.view, next, end - next, this.#options.wallNow()).then(
      () => undefined,
      () => undefined,
    );
    this.#sealing.add(sealing);
    void sealing.then(() => this.#sealing.delete(sealing));
    return sealing;
  }

  #hold(view: IndexView, lease: Omit<Lease, "timer">): void {
    const wait = Math.max(0, lease.reservedAt + this.#options.rangeUseMs - performance.now());
    const timer = setTimeout(() => {
      if (this.#leases.get(view.pk)?.lease.reservedAt === lease.reservedAt) void this.release(view);
    }, wait);
    timer.unref?.();
    this.#leases.set(view.pk, { view, lease: { ...lease, timer } });
  }

  /**
   * Offsets to reserve for an append of `count`: what this writer's pace on the queue will use within
   * `rangeUseMs` (`count` per append), in whole appends of `count`, at most `maxRangeOffsets` beyond this one, or
   * one more append of its size for a batch of up to `MAX_BATCH_SLOT` messages (a batch larger than
   * `maxRangeOffsets` would otherwise take one counter `ADD` per append). The first append reserves `count`.
   */
  #size(pk: string, count: number, now: number): number {
    const pace = this.#paces.get(pk);
    if (pace === undefined) {
      this.#paces.set(pk, { last: now, interval: Number.POSITIVE_INFINITY });
      return count;
    }
    const gap = Math.min(now - pace.last, 10 * this.#options.rangeUseMs);
    pace.interval = Number.isFinite(pace.interval) ? 0.7 * pace.interval + 0.3 * gap : gap;
    pace.last = now;
    const appends = Math.floor(this.#options.rangeUseMs / Math.max(1, pace.interval));
    const most =
      count <= MAX_BATCH_SLOT ? Math.max(this.#options.maxRangeOffsets, count) : this.#options.maxRangeOffsets;
    return count + Math.min(Math.floor(most / count), Math.max(0, appends - 1)) * count;
  }
}
