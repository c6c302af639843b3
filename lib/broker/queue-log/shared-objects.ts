/**
 * @module The queue log's object writes from one process, coalesced: while one object PUT is in flight, the
 * batches of every queue that need an object wait together and go out as the next object, one PUT for all of
 * them, each index item naming its byte range. A process with one append at a time (a Lambda container) writes
 * each batch as its own object as before; a long-lived process under concurrent sends (`nimbus proxy`,
 * `nimbus dev`) pays one S3 PUT per flush instead of one per queue, and after an object that held merged groups
 * the next PUT waits (bounded) for those queues' next groups (flush-cycle.ts). See docs/queue-log.md
 * ("Shared objects").
 */
import { randomUUID } from "node:crypto";
import type { ObjectStore } from "../../storage/object-store.js";
import { BATCH_OBJECT_PREFIX } from "../store/index.js";
import { FlushCycle, MAX_CYCLE_WAIT_MS } from "./flush-cycle.js";
import { HedgedPuts, type HedgeOptions } from "./hedged-puts.js";

/** The key suffix of an object holding batches of more than one append: retention's trim never deletes one. */
const SHARED_SUFFIX = ".shared";

/** Whether `objectKey` may hold other batches than the one an index item names (see `SharedObjectWriter`). */
export const isSharedObjectKey = (objectKey: string): boolean => objectKey.endsWith(SHARED_SUFFIX);

/**
 * The most bytes one shared object holds: a write waiting past it goes in the next object. A reader GETs only
 * its batch's range, so the size bounds what one PUT carries and what a failed PUT takes down, not what a pull
 * moves.
 */
export const MAX_SHARED_OBJECT_BYTES = 8 * 1024 * 1024;

export interface ObjectRange {
  objectKey: string;
  byteOffset: number;
  byteLength: number;
}

interface WaitingWrite {
  batch: Uint8Array;
  /** The queue writing, and how many sends its group merged (more than one: its senders are expected back). */
  source: string;
  sends: number;
  resolve: (range: ObjectRange) => void;
  reject: (err: unknown) => void;
}

/** A fresh object key under the batch prefix: hashed prefix (spreads PUTs over S3 partitions), offset-free. */
function freshObjectKey(shared: boolean): string {
  const id = randomUUID().replaceAll("-", "");
  return `${BATCH_OBJECT_PREFIX}${id.slice(0, 2)}/${id.slice(2, 4)}/${id}${shared ? SHARED_SUFFIX : ""}`;
}

export interface SharedObjectWriterOptions {
  /** Default `MAX_SHARED_OBJECT_BYTES`. */
  maxObjectBytes?: number | undefined;
  /** The flush cycle's bound on any wait; default: the PUTs' recent duration, at most 100 ms. */
  cycleWaitMs?: (() => number) | undefined;
  /** When a slow PUT is sent again beside itself (on a store that says it is worth it: S3). */
  hedge?: HedgeOptions | undefined;
}

/** Weight of the newest PUT in the recent PUT duration (an exponential moving average). */
const PUT_MS_WEIGHT = 0.2;

export class SharedObjectWriter {
  readonly #objects: HedgedPuts;
  readonly #maxObjectBytes: number;
  readonly #cycleWaitMs: () => number;
  /** The recent duration of a PUT, in ms (0 before the first). */
  #putMs = 0;
  #waiting: WaitingWrite[] = [];
  #inFlight = false;
  readonly #cycle = new FlushCycle(() => this.#kick());

  constructor(objects: ObjectStore, options: SharedObjectWriterOptions = {}) {
    this.#objects = new HedgedPuts(objects, options.hedge);
    this.#maxObjectBytes = options.maxObjectBytes ?? MAX_SHARED_OBJECT_BYTES;
    this.#cycleWaitMs = options.cycleWaitMs ?? (() => Math.min(MAX_CYCLE_WAIT_MS, Math.ceil(this.#putMs)));
  }

  /** The flush cycle: the queue writer tells it of arrivals, asks it for turns, and releases its queues. */
  get cycle(): FlushCycle {
    return this.#cycle;
  }

  /** Answers once every PUT sent so far has answered, a hedged PUT's loser included. */
  settled(): Promise<void> {
    return this.#objects.settled();
  }

  /** Batches waiting for the next object (for tests and the benchmark). */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Stores `batch`, the group of `sends` sends of queue `source`, in an object: at once when no PUT of this
   * process is in flight and the flush cycle holds for no queue, else in the next object with every batch that
   * waited meanwhile. Answers once that object is stored; a failed PUT fails each of its batches.
   */
  write(batch: Uint8Array, source: string, sends: number): Promise<ObjectRange> {
    return new Promise<ObjectRange>((resolve, reject) => {
      this.#waiting.push({ batch, source, sends, resolve, reject });
      this.#cycle.release(source);
      if (!this.#cycle.releasing) this.#kick();
    });
  }

  #kick(): void {
    if (this.#inFlight || this.#waiting.length === 0) return;
    if (this.#cycle.holding) this.#cycle.hold();
    else void this.#flush();
  }

  /** One object: the waiting writes that fit, in arrival order. */
  async #flush(): Promise<void> {
    this.#inFlight = true;
    const group = this.#takeGroup();
    const key = freshObjectKey(group.length > 1);
    const ranges: ObjectRange[] = [];
    let at = 0;
    for (const w of group) {
      ranges.push({ objectKey: key, byteOffset: at, byteLength: w.batch.byteLength });
      at += w.batch.byteLength;
    }
    const started = performance.now();
    try {
      await this.#objects.put(key, group.length === 1 ? (group[0] as WaitingWrite).batch : joined(group, at));
      const putMs = performance.now() - started;
      this.#putMs = this.#putMs === 0 ? putMs : this.#putMs + PUT_MS_WEIGHT * (putMs - this.#putMs);
      // Before the answers: the queues of merged groups are expected back with their next groups.
      const merged = new Map<string, number>();
      for (const w of group) if (w.sends > 1) merged.set(w.source, (merged.get(w.source) ?? 0) + w.sends);
      this.#cycle.stored(merged, this.#cycleWaitMs());
      for (const [i, w] of group.entries()) w.resolve(ranges[i] as ObjectRange);
    } catch (err) {
      for (const w of group) w.reject(err);
    }
    this.#inFlight = false;
    this.#kick();
  }

  /** The first waiting write and those behind it while the object stays within its bound (one at least). */
  #takeGroup(): WaitingWrite[] {
    let bytes = 0;
    let n = 0;
    for (const w of this.#waiting) {
      if (n > 0 && bytes + w.batch.byteLength > this.#maxObjectBytes) break;
      bytes += w.batch.byteLength;
      n++;
    }
    return this.#waiting.splice(0, n);
  }
}

function joined(group: readonly WaitingWrite[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const w of group) {
    out.set(w.batch, at);
    at += w.batch.byteLength;
  }
  return out;
}
