/**
 * @module Reading the message index: a time range of one queue, from where a binary search of its index items
 * says the range starts, batch by batch in offset order within a budget of items; and merging the hits of a
 * topic's queues into one page, oldest first, with where each queue goes on. Store times grow with the offset
 * within a queue only up to `STORE_TIME_SKEW_MS`: a scan starts that much before the range and reads that much
 * past its end. A page continues each queue at an offset (never at a time), so no hit is skipped or answered twice.
 */
import {
  type IndexedBatch,
  type QueueLog,
  type QueueRef,
  queuePk,
  STORE_TIME_SKEW_MS,
  type StoredMessage,
} from "../queue-log/index.js";

/** Where a queue's scan goes on: the batch starting at `batchStart`, from its offset `offset` on. */
export interface QueueResume {
  batchStart: number;
  offset: number;
}

/** A message the index points at; `message` when the scan already decoded it (an inline batch). */
export interface IndexHit {
  storeTimestamp: number;
  pk: string;
  offset: number;
  batchStart: number;
  message?: StoredMessage | undefined;
}

export function compareHits(a: IndexHit, b: IndexHit): number {
  if (a.storeTimestamp !== b.storeTimestamp) return a.storeTimestamp - b.storeTimestamp;
  if (a.pk !== b.pk) return a.pk < b.pk ? -1 : 1;
  return a.offset - b.offset;
}

export interface QueueScan {
  /** In offset order. */
  hits: IndexHit[];
  /** Where the queue goes on after its last hit; absent when the scan reached the range's end (or the queue's). */
  resume?: QueueResume;
  /** Store time of the last batch read: a queue that stopped early may still hold hits stored after it. */
  lastStored?: number;
  itemsRead: number;
}

export interface ScanRange {
  /** Store times `[begin, end]`, ms. */
  begin: number;
  end: number;
  /** Where to start (a cursor); absent: where the binary search says `begin - STORE_TIME_SKEW_MS` is. */
  from?: QueueResume | undefined;
  /** Stop once this many hits were found (whole batches are read: the hits of the last one are all kept). */
  maxHits: number;
  /** Stop after this many index items. */
  maxItems: number;
}

/** Items one index query asks for. */
const PAGE_ITEMS = 100;

/** The offsets of `batch` that `match` accepts. */
export type BatchMatcher = (batch: IndexedBatch) => number[];

/**
 * The hits of queue `q` in `range`, forward from its start until a batch stored after the range's end plus the
 * skew (no later batch can be in the range), the queue's end, `maxHits` hits or `maxItems` items.
 */
export async function scanQueue(
  queueLog: QueueLog,
  q: QueueRef,
  range: ScanRange,
  match: BatchMatcher,
): Promise<QueueScan> {
  const pk = queuePk(q);
  const skipBelow = range.from?.offset ?? 0;
  let next: number | undefined =
    range.from?.batchStart ?? (await queueLog.offsetStoredFrom(q, range.begin - STORE_TIME_SKEW_MS));
  const scan: QueueScan = { hits: [], itemsRead: 0 };
  while (next !== undefined) {
    const page = await queueLog.indexedBatches(q, next, Math.min(PAGE_ITEMS, range.maxItems - scan.itemsRead));
    scan.itemsRead += page.itemsRead;
    next = page.next;
    for (const [i, batch] of page.batches.entries()) {
      if (batch.storeTimestamp > range.end + STORE_TIME_SKEW_MS) return scan;
      scan.lastStored = batch.storeTimestamp;
      if (batch.storeTimestamp >= range.begin && batch.storeTimestamp <= range.end) {
        for (const offset of match(batch)) {
          if (offset < skipBelow) continue;
          const message = batch.messages?.[offset - batch.start];
          scan.hits.push({ storeTimestamp: batch.storeTimestamp, pk, offset, batchStart: batch.start, message });
        }
      }
      const after = page.batches[i + 1]?.start ?? next;
      if (scan.hits.length >= range.maxHits && after !== undefined) {
        scan.resume = { batchStart: after, offset: after };
        return scan;
      }
    }
    if (next !== undefined && scan.itemsRead >= range.maxItems) {
      scan.resume = { batchStart: next, offset: next };
      return scan;
    }
  }
  return scan;
}

export interface MergedPage {
  hits: IndexHit[];
  /** Where each queue goes on (by its index in the scans); undefined for a queue that is done. */
  resumes: Array<QueueResume | undefined>;
  /** Whether any queue goes on. */
  more: boolean;
}

/**
 * The first `maxNum` hits of the scans, oldest first, taking each queue's hits in offset order; it stops
 * before a hit stored after the last batch of a queue that stopped early with all its hits taken (that queue may
 * hold older hits the next page finds). Each queue goes on at its first hit not taken, else where its scan stopped.
 */
export function mergeScans(scans: readonly QueueScan[], maxNum: number): MergedPage {
  const taken = scans.map(() => 0);
  const hits: IndexHit[] = [];
  while (hits.length < maxNum) {
    let best = -1;
    for (const [i, scan] of scans.entries()) {
      const head = scan.hits[taken[i] ?? 0];
      const current = scans[best]?.hits[taken[best] ?? 0];
      if (head !== undefined && (current === undefined || compareHits(head, current) < 0)) best = i;
    }
    const candidate = scans[best]?.hits[taken[best] ?? 0];
    if (candidate === undefined) break;
    const blocked = scans.some(
      (s, i) =>
        s.resume !== undefined &&
        (taken[i] ?? 0) >= s.hits.length &&
        (s.lastStored === undefined || candidate.storeTimestamp > s.lastStored),
    );
    if (blocked) break;
    hits.push(candidate);
    taken[best] = (taken[best] ?? 0) + 1;
  }
  const resumes = scans.map((s, i): QueueResume | undefined => {
    const first = s.hits[taken[i] ?? 0];
    return first === undefined ? s.resume : { batchStart: first.batchStart, offset: first.offset };
  });
  return { hits, resumes, more: resumes.some((r) => r !== undefined) };
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
