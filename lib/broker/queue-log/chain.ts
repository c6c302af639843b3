/**
 * @module Walking a queue's index items in offset order, for a read (read.ts): the item that holds an offset, the
 * items that continue a chain from an offset up to the first gap (a reserved range not filled yet), and how many
 * of them a read needs; and a queue's first items, for retention.
 */
import type { Item } from "../../storage/table.js";
import type { AfterPage, IndexView } from "./layout.js";
import { end, fromItem, type IndexEntry } from "./queue-index.js";

/** Index items per forward query page of a one-key queue when the messages wanted are not counted (a filter). */
export const PAGE_ITEMS = 16;

/** Whether `offset` is in `entry` past its start (a read that begins there starts inside it). */
export function holds(entry: IndexEntry, offset: number): boolean {
  return entry.start < offset && offset < end(entry);
}

/** The newest item starting at or before `offset`. */
export async function findAtOrBefore(view: IndexView, offset: number): Promise<IndexEntry | undefined> {
  const item = await view.atOrBefore(offset);
  return item && fromItem(item);
}

/**
 * The items after sort key `afterSk` up to `upTo` that continue the chain at `from`, cut at the first gap (a
 * reserved range not filled yet); `after` is the item beyond that gap, if the page shows one. `read` is that
 * page when it was read already. A page with no items below the bound is read again without it: `from` is then
 * in a gap, and the item beyond it (to seal the gap) may start above the bound.
 */
export async function followChain(
  view: IndexView,
  afterSk: number,
  from: number,
  limit: number,
  upTo: number,
  read?: AfterPage,
): Promise<{ entries: IndexEntry[]; after?: IndexEntry }> {
  const page = read ?? (await view.after(afterSk, limit, true, upTo));
  return chainFrom(page.items.length > 0 ? page.items : (await view.after(afterSk, PAGE_ITEMS)).items, from);
}

/** The leading `items` that continue the chain at `from`, cut at the first gap; `after` is the item beyond it. */
export function chainFrom(items: readonly Item[], from: number): { entries: IndexEntry[]; after?: IndexEntry } {
  const entries: IndexEntry[] = [];
  let expected = from;
  for (const item of items) {
    const entry = fromItem(item);
    if (entry.start !== expected) return { entries, after: entry };
    entries.push(entry);
    expected = end(entry);
  }
  return { entries };
}

/** The leading entries that hold at least `want` messages at or after `from` (all of them if fewer). */
export function takeCovering(entries: IndexEntry[], from: number, want: number): IndexEntry[] {
  let have = 0;
  let n = 0;
  while (n < entries.length && have < want) {
    const e = entries[n] as IndexEntry;
    have += end(e) - Math.max(from, e.start);
    n++;
  }
  return entries.slice(0, n);
}

/**
 * The queue's first `count` index items. A spread queue's page is cut where one key's share ends, so it may hold
 * fewer items than asked while more follow (two items left of a page of three made retention stop early): a
 * larger page is asked then, whose cut keeps at least `count` items.
 */
export async function firstItems(view: IndexView, count: number): Promise<Item[]> {
  let page = await view.after(-1, count);
  if (page.items.length < count && page.more) page = await view.after(-1, count * view.keys);
  return page.items.slice(0, count);
}
