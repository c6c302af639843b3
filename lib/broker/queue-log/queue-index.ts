/**
 * @module The queue index: its table, and the index item that says where a batch of messages lives.
 * One item per appended batch, `pk` = the queue, `sk` = the batch's first queue offset, each filling a
 * range of offsets reserved from the queue's counter item; a range whose writer never filled it is sealed
 * by an empty item, and retention leaves a trimmed marker at the top of what it deleted. The item also
 * carries the message index (queries by id and key, lib/broker/query): an object batch's ids and keys in `u`
 * and `k`, an inline batch's in its own bytes. See docs/queue-log.md and docs/query.md.
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { AttrValue, Item } from "../../storage/table.js";

export { BATCH_OBJECT_PREFIX, QUEUE_INDEX_TABLE } from "../store/index.js";

/** A queue, as `(topic, brokerName, queueId)`; `MessageQueue` from lib/core fits. */
export interface QueueRef {
  readonly topic: string;
  readonly brokerName: string;
  readonly queueId: number;
}

/**
 * Where a batch's bytes live: inline in the index item, or a byte range of an object. Two items hold no
 * messages: `sealed` (one offset of a reserved range its writer never filled: no message will ever be
 * there) and `trimmed` (retention deleted the messages below its end).
 */
export type BatchLocation =
  | { kind: "inline"; bytes: Uint8Array }
  | { kind: "object"; objectKey: string; byteOffset: number; byteLength: number }
  | { kind: "sealed" }
  | { kind: "trimmed" };

/** The index item's attribute naming an item without messages: `"sealed"` or `"trimmed"`. */
const EMPTY_ATTRIBUTE = "e";

/** The counter item of a queue: `next` is the first offset no writer has reserved yet. */
export const COUNTER_ATTRIBUTE = "next";

/** An item holds messages (inline or in an object), as opposed to a seal or a trimmed marker. */
export const holdsMessages = (entry: IndexEntry): boolean => entry.loc.kind === "inline" || entry.loc.kind === "object";

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

/**
 * What the message index keeps of a batch in its item. `ids` (UNIQ_KEY by offset from the batch's start, ""
 * for none) and `keys` (`[key, index]`) are written for an object batch only: an inline batch's are in its
 * bytes. `keysIndexed: false` (the topic's `key.index=false` when the batch was stored) is written for both.
 */
export interface BatchIndex {
  ids?: readonly string[] | undefined;
  keys?: ReadonlyArray<readonly [string, number]> | undefined;
  keysIndexed: boolean;
}

/** The item attributes of the message index: ids, keys (`<index> <key>`: a key has no blank), keys not indexed. */
const IDS_ATTRIBUTE = "u";
const KEYS_ATTRIBUTE = "k";
const NO_KEYS_ATTRIBUTE = "nk";

export function toItem(pk: string, entry: IndexEntry, index?: BatchIndex): Item {
  const base = { pk, sk: entry.start, n: entry.count, t: entry.storeTimestamp };
  const loc = entry.loc;
  if (loc.kind === "sealed" || loc.kind === "trimmed") return { ...base, [EMPTY_ATTRIBUTE]: loc.kind };
  const indexed = index === undefined ? {} : indexAttributes(index);
  if (loc.kind === "inline") return { ...base, d: loc.bytes, ...indexed };
  return { ...base, ok: loc.objectKey, oo: loc.byteOffset, ol: loc.byteLength, ...indexed };
}

function indexAttributes(index: BatchIndex): Record<string, AttrValue> {
  const attributes: Record<string, AttrValue> = index.keysIndexed ? {} : { [NO_KEYS_ATTRIBUTE]: true };
  if (index.ids !== undefined) attributes[IDS_ATTRIBUTE] = [...index.ids];
  if (index.keys !== undefined && index.keysIndexed) {
    attributes[KEYS_ATTRIBUTE] = index.keys.map(([key, i]) => `${i} ${key}`);
  }
  return attributes;
}

/** The message index an item carries: ids and keys when written in it (an object batch), and whether keys were indexed. */
export function indexOfItem(item: Item): {
  ids: string[] | undefined;
  keys: Array<[string, number]> | undefined;
  keysIndexed: boolean;
} {
  const { [IDS_ATTRIBUTE]: u, [KEYS_ATTRIBUTE]: k, [NO_KEYS_ATTRIBUTE]: noKeys } = item;
  const ids = Array.isArray(u) ? u.map((id) => (typeof id === "string" ? id : "")) : undefined;
  const keys = Array.isArray(k)
    ? k.flatMap((entry): Array<[string, number]> => {
        if (typeof entry !== "string") return [];
        const blank = entry.indexOf(" ");
        return blank < 0 ? [] : [[entry.slice(blank + 1), Number(entry.slice(0, blank))]];
      })
    : undefined;
  return { ids, keys, keysIndexed: noKeys !== true };
}

export function fromItem(item: Item): IndexEntry {
  const { sk, n, t, d, ok, oo, ol, [EMPTY_ATTRIBUTE]: empty } = item;
  if (typeof sk !== "number" || typeof n !== "number" || typeof t !== "number") throw corrupt(item);
  if (empty === "sealed" || empty === "trimmed")
    return { start: sk, count: n, storeTimestamp: t, loc: { kind: empty } };
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
