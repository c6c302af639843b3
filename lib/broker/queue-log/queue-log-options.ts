/**
 * @module What a `QueueLog` (queue-log.ts) is configured with, its defaults, and the shapes of its status and
 * retention answers. docs/queue-log.md says why each default is what it is.
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { IndexPolicy } from "./append.js";
import type { HedgeOptions } from "./hedged-puts.js";

export interface QueueLogOptions {
  /** Batches up to this many encoded bytes live inline in the index item; larger ones in one object. Default 8 KiB. */
  inlineThresholdBytes?: number | undefined;
  /**
   * A group commit (appends of one queue waiting together, merged) is inline only up to this many bytes (at most
   * `inlineThresholdBytes`, its default); above, it goes to an object, which batches of other queues waiting
   * meanwhile share (shared-objects.ts). `nimbus proxy` sets 2 KiB: under concurrent sends a shared S3 PUT costs
   * less per message than an inline item's write unit per KB, at an S3 PUT's latency (docs/cost.md).
   */
  mergedInlineThresholdBytes?: number | undefined;
  /** On a replica (a slave cell): a young batch's missing object is not replicated yet (see queue-log-read.ts). */
  objectReplicationGraceMs?: number | undefined;
  /** How long a learned tail offset is trusted before a consistent re-read. Default 30 s. */
  tailCacheMs?: number;
  /** How long a learned min offset is trusted (it only moves by retention). Default 30 s. */
  minCacheMs?: number;
  /** The shortest retention `trim` accepts; must be far above `tailCacheMs` (the chain rule). Default 1 h. */
  minRetentionMs?: number;
  /**
   * The deployment's retention. A batch older than this whose object is gone (the bucket's lifecycle rule
   * expires objects after retention) reads as expired instead of failing. Unset: a missing object is an error.
   */
  retentionMs?: number;
  /**
   * How long an append may keep trying (puts whose outcome was unknown, ranges sealed under it) before it
   * gives up with SYSTEM_BUSY. Default 2500 ms, under the SDK's 3 s send timeout.
   */
  maxAppendMs?: number;
  /**
   * The hole lease: how long a reserved range may stay unfilled before a reader seals it (an empty item: no
   * message will appear there, and a writer that comes later reserves again). It bounds how long a dead writer
   * holds up the queue's consumers. Safety does not depend on it (first writer wins by conditional put); a live
   * writer slower than it pays a new reservation. Default 500 ms (`DEFAULT_RESERVATION_LEASE_MS`).
   */
  reservationLeaseMs?: number;
  /**
   * How many partition keys a new queue's index is spread over (a hot queue: docs/queue-log.md, "Hot queues"):
   * one number for every topic, or per topic. Default 1 (one key, as every queue before). Read when a queue is
   * created (its first reservation); a queue keeps its layout for good. Every writer of a deployment must agree.
   */
  indexKeys?: number | ((topic: string) => number) | undefined;
  /**
   * A writer of a spread queue reserves offsets for what it will append within this many ms, and seals the unused
   * tail once they pass. Default 200 ms (`DEFAULT_RANGE_USE_MS`): a live writer's range holds consumers up about this long.
   */
  rangeUseMs?: number;
  /** The most offsets a writer of a spread queue reserves beyond the append at hand. Default 16. */
  maxRangeOffsets?: number;
  /**
   * Told after each reservation (the queue's pk, the range), before the range is filled: tests stop a
   * writer there, as a container that died.
   */
  afterReserve?: (pk: string, start: number, count: number) => void | Promise<void>;
  /**
   * Group commit: appends to one queue waiting in line together are merged into one batch of at most this
   * many bytes (inline when it fits `inlineThresholdBytes`, else one object), written with one index put.
   * Default 256 KiB (`DEFAULT_MERGE_LIMIT_BYTES`): a pull reads a merged object's whole range, so the limit
   * bounds the bytes one pull may move to deliver a few messages.
   */
  mergeLimitBytes?: number;
  /**
   * What a queue's batches keep of the message index (lib/broker/query), asked once per group commit; a
   * cached setting (it must not cost a request per send). Default: ids and keys.
   */
  indexPolicy?: ((pk: string) => Promise<IndexPolicy>) | undefined;
  /**
   * The longest the flush cycle of object writes holds a PUT or a queue's next group (flush-cycle.ts), for tests.
   * Default: the PUTs' recent duration, at most `MAX_CYCLE_WAIT_MS` (100 ms).
   */
  flushCycleWaitMs?: number;
  /**
   * Hedged object PUTs on a store that asks for them (S3): when a second PUT of a slow one goes out, and how many
   * may (hedged-puts.ts). Defaults: after the recent PUTs' 80th percentile, at most a quarter of PUTs; budget 0: never.
   */
  objectPutHedge?: HedgeOptions | undefined;
  /** Wall clock (ms since epoch) for store timestamps and retention, for tests. Default `Date.now`. */
  now?: () => number;
  /**
   * Monotonic clock (ms) for the ages of cached tail and min offsets, for tests. Default
   * `performance.now`. Never the wall clock: one stepped back would keep a stale tail trusted for as
   * long as the step, past the retention that makes a stale tail safe.
   */
  monotonicNow?: () => number;
}

export interface QueueStatus {
  minOffset: number;
  maxOffset: number;
  /** Store time of the newest batch, 0 for an empty queue. */
  lastUpdateTimestamp: number;
}

export interface TrimResult {
  deletedBatches: number;
  deletedMessages: number;
  minOffset: number;
}

/**
 * Batches waiting in line together are merged up to this many bytes (one object, one index put). A reader
 * GETs the whole range of the object a message is in, so this is also the most one pull moves per batch it
 * touches: 256 KiB keeps that near a pull's own size (a pull of 32 x 1 KiB reads 33 KiB) while still
 * merging eight such batches into one S3 PUT and one index put.
 */
export const DEFAULT_MERGE_LIMIT_BYTES = 256 * 1024;

/** How long a reserved range may stay unfilled before readers seal it (see `reservationLeaseMs`). */
export const DEFAULT_RESERVATION_LEASE_MS = 500;
/** How long a writer of a spread queue hands out the offsets of a range it reserved (see `rangeUseMs`). */
export const DEFAULT_RANGE_USE_MS = 200;

/** DynamoDB items are at most 400 KB; leave room for the other attributes. */
const MAX_INLINE_BYTES = 350 * 1024;

/** The inline threshold fits an item, and the minimum's cache outlives the tail's twice over (PARAMETER_ILLEGAL). */
export function checkCacheBounds(inlineThreshold: number, minRetentionMs: number, tailCacheMs: number): void {
  if (inlineThreshold < 0 || inlineThreshold > MAX_INLINE_BYTES) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `inlineThresholdBytes must be 0..${MAX_INLINE_BYTES}`);
  }
  if (minRetentionMs < 2 * tailCacheMs) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "minRetentionMs must be at least twice tailCacheMs");
  }
}

/** The most queues whose tail and bottom one `QueueLog` keeps cached (as many as `QueueLayouts` remembers). */
export const MAX_CACHED_QUEUES = 100_000;
