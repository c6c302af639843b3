/**
 * @module The queue log's object writes from one process, coalesced: while one object PUT is in flight, the
 * batches of every queue that need an object wait together and go out as the next object, one PUT for all of
 * them, each index item naming its byte range. A process with one append at a time (a Lambda container) writes
 * each batch as its own object as before; a long-lived process under concurrent sends (`nimbus proxy`,
 * `nimbus dev`) pays one S3 PUT per flush instead of one per queue. See docs/queue-log.md ("Shared objects").
 */
import { randomUUID } from "node:crypto";
import type { ObjectStore } from "../../storage/object-store.js";
import { BATCH_OBJECT_PREFIX } from "../store/index.js";

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
  resolve: (range: ObjectRange) => void;
  reject: (err: unknown) => void;
}

/** A fresh object key under the batch prefix: hashed prefix (spreads PUTs over S3 partitions), offset-free. */
function freshObjectKey(shared: boolean): string {
  const id = randomUUID().replaceAll("-", "");
  return `${BATCH_OBJECT_PREFIX}${id.slice(0, 2)}/${id.slice(2, 4)}/${id}${shared ? SHARED_SUFFIX : ""}`;
}

export class SharedObjectWriter {
  readonly #objects: ObjectStore;
  readonly #maxObjectBytes: number;
  #waiting: WaitingWrite[] = [];
  #inFlight = false;

  constructor(objects: ObjectStore, maxObjectBytes = MAX_SHARED_OBJECT_BYTES) {
    this.#objects = objects;
    this.#maxObjectBytes = maxObjectBytes;
  }

  /** Batches waiting for the next object (for tests and the benchmark). */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Stores `batch` in an object: at once when no PUT of this process is in flight, else in the next object with
   * every batch that waited meanwhile. Answers once that object is stored; a failed PUT fails each of its batches.
   */
  write(batch: Uint8Array): Promise<ObjectRange> {
    return new Promise<ObjectRange>((resolve, reject) => {
      this.#waiting.push({ batch, resolve, reject });
      if (!this.#inFlight) void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    this.#inFlight = true;
    while (this.#waiting.length > 0) {
      const group = this.#takeGroup();
      const key = freshObjectKey(group.length > 1);
      const ranges: ObjectRange[] = [];
      let at = 0;
      for (const w of group) {
        ranges.push({ objectKey: key, byteOffset: at, byteLength: w.batch.byteLength });
        at += w.batch.byteLength;
      }
      try {
        await this.#objects.put(key, group.length === 1 ? (group[0] as WaitingWrite).batch : joined(group, at));
        for (const [i, w] of group.entries()) w.resolve(ranges[i] as ObjectRange);
      } catch (err) {
        for (const w of group) w.reject(err);
      }
    }
    this.#inFlight = false;
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
