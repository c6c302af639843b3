/**
 * @module The `ObjectStore` port: an S3-shaped store of immutable byte objects addressed by key. Every
 * adapter behaves the same way: same errors (`NimbusError` codes), same listing order (keys by UTF-8
 * bytes, as S3), same pagination.
 */
import type { RequestCounter } from "./request-counter.js";

export interface ByteRange {
  /** First byte, from 0. */
  offset: number;
  /** Number of bytes; a range running past the end is cut at the end, as S3 does. */
  length: number;
}

export interface ObjectInfo {
  key: string;
  size: number;
}

export interface ListOptions {
  /** At most this many keys per page (S3's MaxKeys; default 1000, the most S3 returns). */
  limit?: number;
  /** The previous page's `next`. */
  continuation?: string | undefined;
}

export interface ListPage {
  objects: ObjectInfo[];
  /** Present when more keys follow: pass it as `continuation`. */
  next?: string;
}

export interface ObjectStore {
  readonly counter: RequestCounter;
  /**
   * Whether a PUT still out after most PUTs would have answered is worth sending again beside itself (the queue
   * log's hedged PUTs, lib/broker/queue-log/hedged-puts.ts): true for S3, whose slow requests are slow paths a
   * second request most likely avoids; unset for a local disk, where a second write only adds to the queue.
   */
  readonly hedgePuts?: boolean | undefined;
  /** Stores the bytes under `key`, replacing any object there. Readers never see a partial object. */
  put(key: string, body: Uint8Array): Promise<void>;
  /**
   * Reads the whole object, or `range` of it. Throws OBJECT_NOT_FOUND for a missing key and INVALID_RANGE
   * for a range starting at or past the end (or a negative/zero-length range).
   */
  get(key: string, range?: ByteRange): Promise<Uint8Array>;
  /** Keys that start with `prefix`, in UTF-8 byte order. */
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
  /** Deletes the keys (missing keys are not an error); one request per 1000 keys, as S3's DeleteObjects. */
  delete(keys: string[]): Promise<void>;
}

/**
 * Object keys we accept: S3-safe characters, `/`-separated non-empty segments, no `.`/`..` segments,
 * at most 1024 bytes. Both adapters check it so a key that works locally also works on S3.
 */
export const OBJECT_KEY_PATTERN = /^(?!.*(?:^|\/)\.{1,2}(?:\/|$))[A-Za-z0-9!_.*'()%-]+(?:\/[A-Za-z0-9!_.*'()%-]+)*$/;
export const MAX_OBJECT_KEY_BYTES = 1024;
