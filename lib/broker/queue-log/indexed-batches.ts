/**
 * @module The message index as the queue log keeps it: each batch's index item carries its messages' ids and
 * keys (an object batch in the item's `u`/`k`, an inline batch in its own bytes), so a query by id or key
 * reads a time range of a queue's index partition. Store times grow with the offset within a queue up to
 * `STORE_TIME_SKEW_MS`; a binary search over the items finds where a time range starts. See docs/query.md.
 */
import { MessageConst, type MessageRecord } from "../../core/message.js";
import { decodeBatch } from "../../core/message-codec.js";
import type { IndexView } from "./layout.js";
import { end, fromItem, holdsMessages, type IndexEntry, indexOfItem } from "./queue-index.js";
import { batchBytes, type ReadContext, type StoredMessage } from "./read.js";

/**
 * How far a batch's store time may lie after the store time of a batch at a higher offset of the same queue.
 * A writer stamps its batch after reserving its offsets and before each try of its put, within `maxAppendMs`
 * (2.5 s) of the reservation, and reservations follow the offsets; the rest is room for a slow reply of the
 * reservation and for the difference between two writers' clocks. One process's batches of a queue are in
 * order (it writes them one after another). Seals (stamped when sealed) do not count: they hold no messages.
 */
export const STORE_TIME_SKEW_MS = 10_000;

/** One batch as the message index sees it: offsets `[start, start + ids.length)`, stored at `storeTimestamp`. */
export interface IndexedBatch {
  start: number;
  storeTimestamp: number;
  /** UNIQ_KEY of each message, by offset from `start` ("" when a message has none). */
  ids: string[];
  /** Key and index (from `start`) of each key; undefined when the topic did not index keys (`key.index=false`). */
  keys: Array<[string, number]> | undefined;
  /** The messages, when the scan decoded them (an inline batch, or an object read for its ids). */
  messages?: StoredMessage[] | undefined;
}

export interface IndexedPage {
  batches: IndexedBatch[];
  /** Items read (seals and trimmed markers too). */
  itemsRead: number;
  /** Where the next page starts (an offset); absent at the queue's end. */
  next?: number;
}

/** Items one probe of the binary search reads: the first that holds messages, past a seal or a marker. */
const PROBE_ITEMS = 4;

/**
 * Where a scan of queue `pk` for batches stored at or after `timestamp` starts: every batch below the answer
 * was stored before `timestamp + STORE_TIME_SKEW_MS` (some batch at or above it was stored before
 * `timestamp`), so a query from `begin` searches for `begin - STORE_TIME_SKEW_MS` and misses nothing. One
 * query for the queue's end, then one probe per halving (about 20 for a million batches), eventually
 * consistent; as resetOffsetByTime's search, over index items instead of messages.
 */
export async function offsetStoredFrom(view: IndexView, timestamp: number): Promise<number> {
  const newest = await view.newest(false);
  if (newest === undefined) return 0;
  let lo = 0;
  let hi = end(fromItem(newest));
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const found = await firstHoldingFrom(view, mid);
    // Not found past a few seals, or stored late enough: the start is at or below `mid`.
    if (found === undefined || found.storeTimestamp >= timestamp) hi = mid;
    else lo = end(found);
  }
  return lo;
}

async function firstHoldingFrom(view: IndexView, from: number): Promise<IndexEntry | undefined> {
  const page = await view.after(from - 1, PROBE_ITEMS, false);
  return page.items.map(fromItem).find(holdsMessages);
}

/**
 * The batches of index items starting at or after offset `from`, at most `limit` items, ascending, each with
 * its ids and keys: from the item (an object batch), by decoding its bytes (an inline batch), or by reading
 * its object when the item holds none (a batch whose ids and keys passed `MAX_ITEM_INDEX_BYTES`, or one
 * written before the index moved into the queue log). One query, plus one GET per such object.
 */
export async function readIndexedBatches(ctx: ReadContext, from: number, limit: number): Promise<IndexedPage> {
  const page = await ctx.view.after(from - 1, limit, false);
  const batches: IndexedBatch[] = [];
  let last: IndexEntry | undefined;
  for (const item of page.items) {
    const entry = fromItem(item);
    last = entry;
    if (!holdsMessages(entry)) continue;
    const index = indexOfItem(item);
    if (entry.loc.kind === "object" && index.ids !== undefined) {
      const keys = index.keysIndexed ? (index.keys ?? []) : undefined;
      batches.push({ start: entry.start, storeTimestamp: entry.storeTimestamp, ids: index.ids, keys });
      continue;
    }
    const bytes = await batchBytes(ctx, entry);
    // An object the bucket's lifecycle rule removed past retention: no messages to find.
    if (bytes === undefined) continue;
    const records = decodeBatch(bytes);
    batches.push({
      start: entry.start,
      storeTimestamp: entry.storeTimestamp,
      ids: records.map((m) => m.properties[MessageConst.UNIQ_KEY] ?? ""),
      keys: index.keysIndexed ? records.flatMap((m, i) => m.keys.map((key): [string, number] => [key, i])) : undefined,
      messages: records.map((m: MessageRecord, i) => ({
        ...m,
        queueOffset: entry.start + i,
        storeTimestamp: entry.storeTimestamp,
      })),
    });
  }
  const itemsRead = page.items.length;
  if (!page.more || last === undefined) return { batches, itemsRead };
  return { batches, itemsRead, next: end(last) };
}
