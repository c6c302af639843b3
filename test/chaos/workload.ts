/**
 * @module The chaos workload, shared by the runner and its producer processes: what a producer is told
 * (its job), what it reports (acks and fault counts), and how its messages are named and shaped.
 */
import type { AwsStorageOptions } from "../../lib/storage/aws/index.js";
import type { FaultCounts, FaultPlan } from "../support/fault-storage.js";

export const CHAOS_BROKER = "broker-a";

export type ProducerTransport =
  | { kind: "local"; dataDir: string }
  | { kind: "aws"; options: AwsStorageOptions }
  | { kind: "http"; url: string };

export interface ProducerJob {
  producer: number;
  transport: ProducerTransport;
  topic: string;
  /** Queues 0..queues-1 of broker-a; batch b of producer p goes to queue (p + b) % queues. */
  queues: number;
  /** The producer's messages `[from, to)` (indexes into its own sequence). */
  from: number;
  to: number;
  /** Faults injected at the storage port (direct transports). */
  plan: FaultPlan;
  /** Probability that the process SIGKILLs itself after an object PUT, before the index put. */
  killBeforeIndexPut: number;
  /**
   * Kill at the first object batch whatever the dice say: set on the first run of a direct producer with
   * kills on, so every run injects this fault at least once (a short run is too short to count on chance).
   */
  killAtFirstObject?: boolean;
}

/** One acknowledged batch: messages `[from, from + count)` of `producer` at `queueOffset` of `queueId`. */
export interface AckReport {
  kind: "ack";
  producer: number;
  from: number;
  count: number;
  queueId: number;
  queueOffset: number;
  /** Cumulative for this process: faults injected, and sends retried by the client. */
  faults: FaultCounts;
  clientRetries: number;
}

export interface DoneReport {
  kind: "done";
  faults: FaultCounts;
  clientRetries: number;
}

export type ProducerReport = AckReport | DoneReport;

/** The UNIQ_KEY of message `i` of `producer`: the checker's identity of a message. */
export const uniqKey = (producer: number, i: number): string => `p${producer}-m${i}`;

/** Batches of 1..4 messages; every 7th batch is large (above the inline threshold: an object batch). */
export function batchAt(producer: number, from: number): { count: number; large: boolean } {
  return { count: 1 + ((producer * 3 + from) % 4), large: (producer + from) % 7 === 0 };
}

/** A message body: its key, padded to 9 KiB in a large batch (over the 8 KiB inline threshold). */
export function bodyOf(producer: number, i: number, large: boolean): string {
  const key = uniqKey(producer, i);
  return large ? key.padEnd(9 * 1024, ".") : key;
}
