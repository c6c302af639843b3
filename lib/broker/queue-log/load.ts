/**
 * @module A queue's write load against DynamoDB's per-partition-key ceiling (1,000 write units/s), measured from
 * its newest index items only when asked (`topicStatus --load`): one query per index key (the K keys of a hot
 * queue, the one key of another), newest first, at most `LOAD_SAMPLE` items, eventually consistent. Each item
 * carries its store time and its size, so the rate of a key is the write units of its sampled items over the time
 * from the oldest of them to now (a queue gone quiet reads low at once). Cost: K queries of at most 32 items, at
 * most 32 × 8 KiB / 4 KB / 2 = 32 read units per key, none of them on a path that serves messages.
 */
import { itemSize } from "../../storage/item-size.js";
import type { Item } from "../../storage/table.js";
import type { IndexView } from "./layout.js";

/** Items read per key. */
export const LOAD_SAMPLE = 32;
/** DynamoDB's write ceiling of one partition key (units per second). */
export const KEY_WRITE_UNITS_PER_SECOND = 1000;
/** The share of the ceiling from which a queue is said to run near its limit. */
export const NEAR_LIMIT_SHARE = 0.8;
/** The shortest window a rate is taken over (items stored within a few ms would give a rate of noise). */
const MIN_WINDOW_MS = 50;

export interface QueueLoad {
  /** Keys the queue's index is spread over (1: one key). */
  indexKeys: number;
  /** Index items the measure read (batches, seals). */
  sampledAppends: number;
  /** Appends (index items) per second over the sampled window. */
  appendsPerSecond: number;
  /** Messages per second over the same window. */
  messagesPerSecond: number;
  /** Write units per second of the busiest key: its index puts, and on a one-key queue its counter's `ADD`s too. */
  busiestKeyWriteUnits: number;
  /** `busiestKeyWriteUnits` over the key's ceiling (1,000 write units/s). */
  busiestKeyShare: number;
  /** At or above `NEAR_LIMIT_SHARE`: throttles are near (a hot topic, or more keys, or batching helps). */
  nearLimit: boolean;
}

/** The load of the queue `view` lays out, from the newest items of each of its keys, at wall time `now`. */
export async function measureLoad(view: IndexView, now: number): Promise<QueueLoad> {
  const pages = await Promise.all(
    view.keyNames.map((pk) => view.table.query(pk, { descending: true, limit: LOAD_SAMPLE, consistent: false })),
  );
  let appendsPerSecond = 0;
  let messagesPerSecond = 0;
  let busiest = 0;
  let sampled = 0;
  for (const { items } of pages) {
    const batches = items.filter((item) => typeof item.t === "number" && typeof item.n === "number" && item.sk !== -1);
    if (batches.length === 0) continue;
    sampled += batches.length;
    const oldest = Math.min(...batches.map((item) => item.t as number));
    const seconds = Math.max(MIN_WINDOW_MS, now - oldest) / 1000;
    const units = batches.reduce((sum, item) => sum + writeUnits(item), 0);
    appendsPerSecond += batches.length / seconds;
    messagesPerSecond +=
      batches.reduce((sum, item) => sum + (item.e === undefined ? (item.n as number) : 0), 0) / seconds;
    busiest = Math.max(busiest, units / seconds);
  }
  // A one-key queue's counter takes one ADD (1 unit) per append on a key of its own; a hot queue's one per range.
  if (!view.spread) busiest = Math.max(busiest, appendsPerSecond);
  const share = busiest / KEY_WRITE_UNITS_PER_SECOND;
  return {
    indexKeys: view.keys,
    sampledAppends: sampled,
    appendsPerSecond,
    messagesPerSecond,
    busiestKeyWriteUnits: busiest,
    busiestKeyShare: share,
    nearLimit: share >= NEAR_LIMIT_SHARE,
  };
}

/** Write units of a put of `item`: one per KB, at least one. */
const writeUnits = (item: Item): number => Math.max(1, Math.ceil(itemSize(item) / 1024));
