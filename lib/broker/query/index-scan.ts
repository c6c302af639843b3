/**
 * @module Reading the message index: a time range of one queue's partition, ascending, item by item, within a
 * budget of items; and merging the hits of a topic's queues into one page in a total order (store time,
 * queue, offset) that a cursor can continue from.
 */
import type { Table } from "../../storage/table.js";
import { decodeIndexItem, type IndexBatch, skBefore } from "./message-index.js";

/** A place in the total order of a topic's indexed messages. */
export interface IndexPosition {
  storeTimestamp: number;
  pk: string;
  offset: number;
}

export function comparePositions(a: IndexPosition, b: IndexPosition): number {
  if (a.storeTimestamp !== b.storeTimestamp) return a.storeTimestamp - b.storeTimestamp;
  if (a.pk !== b.pk) return a.pk < b.pk ? -1 : 1;
  return a.offset - b.offset;
}

export interface QueueScan {
  hits: IndexPosition[];
  /** Set when the scan stopped before the range's end: every hit up to here was found, none after it. */
  stoppedAt?: IndexPosition;
  itemsRead: number;
}

export interface ScanRange {
  /** Store times `[begin, end]`, ms. */
  begin: number;
  end: number;
  /** Only hits after this position (a cursor). */
  after?: IndexPosition | undefined;
  /** Stop once this many hits were found (whole items are read: the hits of the last one are all kept). */
  maxHits: number;
  /** Stop after this many index items. */
  maxItems: number;
}

/** Items one index query asks for. */
const PAGE_ITEMS = 100;

/** The offsets of `batch` that `match` accepts. */
export type BatchMatcher = (batch: IndexBatch) => number[];

export async function scanQueue(table: Table, pk: string, range: ScanRange, match: BatchMatcher): Promise<QueueScan> {
  const from = Math.max(range.begin, range.after?.storeTimestamp ?? 0);
  const hits: IndexPosition[] = [];
  let itemsRead = 0;
  let startAfter: string | number | undefined;
  for (;;) {
    const page = await table.query(pk, {
      sk: { gt: skBefore(from) },
      limit: Math.min(PAGE_ITEMS, range.maxItems - itemsRead),
      startAfter,
    });
    for (const item of page.items) {
      const batch = decodeIndexItem(item);
      if (batch === undefined) continue;
      if (batch.storeTimestamp > range.end) return { hits, itemsRead };
      itemsRead++;
      for (const offset of match(batch)) {
        const hit = { storeTimestamp: batch.storeTimestamp, pk, offset };
        if (range.after === undefined || comparePositions(hit, range.after) > 0) hits.push(hit);
      }
      const last = { storeTimestamp: batch.storeTimestamp, pk, offset: batch.start + batch.ids.length - 1 };
      if (hits.length >= range.maxHits || itemsRead >= range.maxItems) return { hits, stoppedAt: last, itemsRead };
    }
    if (page.lastSk === undefined) return { hits, itemsRead };
    startAfter = page.lastSk;
  }
}

export interface MergedPage {
  hits: IndexPosition[];
  /** Where the next page starts after (absent: the range holds no more hits). */
  next?: IndexPosition;
}

/** The first `maxNum` hits of every queue's scan, in order, and where to continue. */
export function mergeScans(scans: readonly QueueScan[], maxNum: number): MergedPage {
  const horizon = scans
    .map((s) => s.stoppedAt)
    .filter((p): p is IndexPosition => p !== undefined)
    .sort(comparePositions)[0];
  // Past the earliest place a queue stopped, another queue's hits may be missing: they wait for the next page.
  const safe = scans
    .flatMap((s) => s.hits)
    .filter((h) => horizon === undefined || comparePositions(h, horizon) <= 0)
    .sort(comparePositions);
  const hits = safe.slice(0, maxNum);
  const last = hits[hits.length - 1];
  if (hits.length === maxNum && last !== undefined && (safe.length > maxNum || horizon !== undefined)) {
    return { hits, next: last };
  }
  return horizon === undefined ? { hits } : { hits, next: horizon };
}

/** Runs `work` over `items` with at most `limit` at once, answers in input order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await work(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** A cursor as the API carries it: opaque text (base64url of the position). */
export function encodeCursor(p: IndexPosition): string {
  return Buffer.from(JSON.stringify([p.storeTimestamp, p.pk, p.offset])).toString("base64url");
}

export function decodeCursor(cursor: string): IndexPosition | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (!Array.isArray(value) || value.length !== 3) return undefined;
    const [storeTimestamp, pk, offset] = value as unknown[];
    if (!Number.isSafeInteger(storeTimestamp) || typeof pk !== "string" || !Number.isSafeInteger(offset))
      return undefined;
    return { storeTimestamp: storeTimestamp as number, pk, offset: offset as number };
  } catch {
    return undefined;
  }
}
