/**
 * @module The queue index: its table, and the index item that says where a batch of messages lives.
 * One item per appended batch, `pk` = the queue, `sk` = the batch's first queue offset; the items of a
 * queue form a gap-free chain (each starts where the previous one ends). See docs/queue-log.md.
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { Item } from "../../storage/table.js";

export { BATCH_OBJECT_PREFIX, QUEUE_INDEX_TABLE } from "../store/index.js";

/** A queue, as `(topic, brokerName, queueId)`; `MessageQueue` from lib/core fits. */
export interface QueueRef {
  readonly topic: string;
  readonly brokerName: string;
  readonly queueId: number;
}

/** Where a batch's bytes live: inline in the index item, or a byte range of an object. */
export type BatchLocation =
  | { kind: "inline"; bytes: Uint8Array }
  | { kind: "object"; objectKey: string; byteOffset: number; byteLength: number };

export interface IndexEntry {
  /** First queue offset of the batch. */
  start: number;
  /** Number of messages: they hold offsets `[start, start + count)`. */
  count: number;
  /** When the batch was stored (ms since epoch): every message of the batch has this store time. */
  storeTimestamp: number;
  loc: BatchLocation;
}

export const end = (entry: IndexEntry): number => entry.start + entry.count;

/** The partition key of a queue. Names cannot contain `#` (see lib/core/names), so keys never collide. */
export function queuePk(q: QueueRef): string {
  return `${q.topic}#${q.brokerName}#${q.queueId}`;
}

export function toItem(pk: string, entry: IndexEntry): Item {
  const base = { pk, sk: entry.start, n: entry.count, t: entry.storeTimestamp };
  if (entry.loc.kind === "inline") return { ...base, d: entry.loc.bytes };
  return { ...base, ok: entry.loc.objectKey, oo: entry.loc.byteOffset, ol: entry.loc.byteLength };
}

export function fromItem(item: Item): IndexEntry {
  const { sk, n, t, d, ok, oo, ol } = item;
  if (typeof sk !== "number" || typeof n !== "number" || typeof t !== "number") throw corrupt(item);
  if (d instanceof Uint8Array) return { start: sk, count: n, storeTimestamp: t, loc: { kind: "inline", bytes: d } };
  if (typeof ok === "string" && typeof oo === "number" && typeof ol === "number") {
    return {
      start: sk,
      count: n,
      storeTimestamp: t,
      loc: { kind: "object", objectKey: ok, byteOffset: oo, byteLength: ol },
    };
  }
  throw corrupt(item);
}

function corrupt(item: Item): NimbusError {
  return new NimbusError(ErrorCode.DATA_CORRUPTED, `index item ${item.pk}@${String(item.sk)} is malformed`);
}
