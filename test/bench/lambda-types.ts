/** @module The lambda-concurrency bench's options and rows (`npm run bench -- --suite lambda-concurrency`). */
import type { DynamoBackend } from "../support/emulators.js";
import type { LatencyProfile } from "./aws-latency.js";

export interface ConcurrencyOptions {
  backends: DynamoBackend[];
  writers: number[];
  shapes: Shape[];
  seconds: number;
  stretch: number;
  dynamo: LatencyProfile;
  /** What each container runs: the queue log's append, or the Send function's handler (API Gateway events). */
  via: "queue-log" | "send-handler";
  /** DynamoDB's per-partition-key limits in front of the emulator (test/support/dynamo-key-limits.ts), scaled by 1/stretch. */
  keyLimits: boolean;
  /** Partition keys each queue's index is spread over (1: one key). */
  indexKeys: number;
  /** Messages (1 KiB each) per append. */
  batch: number;
  /** Consumer groups tailing the hot queue during the window (0: none). */
  groups: number;
  /**
   * Appends each container makes before the window, unmeasured (0: none): a Lambda container of a busy queue has
   * served many sends before any given second, and what a process learns from its own requests (the range lease's
   * pace, the hedged PUTs' delay) is then learned. The window's figures count from its start.
   */
  warmAppends: number;
  /** The share of S3 PUTs that may get a hedge (lib/broker/queue-log/hedged-puts.ts); undefined: the default, 0: none. */
  hedgeBudget?: number | undefined;
  /** The SDK's back-off base after a throttled request (ms, before the stretch). */
  throttleBaseMs: number;
  /** The SDK's attempts per request (AwsStorageOptions.maxAttempts; its default 3). */
  maxAttempts: number;
}

export type Shape = "hot" | "topic" | "dead";

export interface ConcurrencyRow {
  via: ConcurrencyOptions["via"];
  backend: DynamoBackend;
  shape: Shape;
  indexKeys: number;
  writers: number;
  appends: number;
  appendsPerSecond: number;
  batch: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
  conflictsPerAppend: number;
  /** Requests the per-key limits answered ProvisionedThroughputExceededException, per append (SDK retries included). */
  throttledPerAppend: number;
  /** Of those, reads (the groups' polls, the writers' layout reads). */
  throttledReadsPerAppend: number;
  writeUnitsPerAppend: number;
  /** S3 PUTs sent per append (a slow PUT's hedge included). */
  objectPutsPerAppend: number;
  /** CPU used (this process + the emulator's JVM) as a share of all cores, 0..1. */
  cpu: number;
  /** This process's event-loop delay p99 (ms, stretched time): what the machine's load adds to any wait. */
  loopDelayP99Ms: number;
  /** The dead shape: the consumer's delivery delay (read time - store time), p50 / p99 / max ms; tails sealed by owners. */
  consumer?: { p50Ms: number; p99Ms: number; maxMs: number; messages: number; seals: number };
  /** `--groups`: how many groups tailed, their delivery delay (all messages of all groups), read throttles per poll. */
  groups?: {
    count: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    messages: number;
    pollsPerSecond: number;
    failedPolls: number;
    /** DynamoDB queries and gets per poll (all groups). */
    readsPerPoll: number;
    /** After the window, caught up with the queue: DynamoDB queries and gets per idle poll (all groups). */
    readsPerIdlePoll: number;
    /** DynamoDB queries and gets per message delivered (all groups, during the window). */
    readsPerMessage: number;
    /** How long one poll's read took, p50 / p99 (ms; each group's percentile, averaged over the groups). */
    readP50Ms: number;
    readP99Ms: number;
    /** Of the delivery delay, the part before the delivering poll started, p50 / p99 (ms; all messages). */
    waitP50Ms: number;
    waitP99Ms: number;
  };
  /** Counter reservations (`ADD`s) per append. */
  reservationsPerAppend: number;
  readBack: string;
}
