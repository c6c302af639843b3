/**
 * @module A queue's backlog between two offsets, in messages. Offsets are not dense since ranges are
 * reserved (docs/queue-log.md): a range whose writer died is sealed by empty items, one offset each, and a
 * range reserved but not filled yet holds nothing so far; `maxOffset - consumerOffset` counts both as
 * messages. The index items of the span tell them apart, read in one bounded page: exact while the span's
 * items fit it (a group that keeps up), an upper bound past it (the offsets beyond the page counted as messages).
 */
import type { IndexView } from "./layout.js";
import { end, fromItem, holdsMessages } from "./queue-index.js";

/** Index items a backlog count reads at most (one page): 32 inline 1 KiB batches are 8 read units. */
export const BACKLOG_PAGE_ITEMS = 32;

export interface Backlog {
  /** Messages stored in `[from, to)`: exact when `exact`, else an upper bound. */
  messages: number;
  /** False when the span has more items than one page: the offsets past the page were counted as messages. */
  exact: boolean;
}

/**
 * The messages of queue `pk` in `[from, to)`: those of the batch holding `from` (one query, limit 1) and of
 * the items after it, up to `BACKLOG_PAGE_ITEMS` (one query); seals, trimmed markers and unfilled ranges count 0.
 */
export async function countBacklog(view: IndexView, from: number, to: number): Promise<Backlog> {
  if (to <= from) return { messages: 0, exact: true };
  let messages = 0;
  const holding = await view.atOrBefore(from);
  if (holding !== undefined) {
    const entry = fromItem(holding);
    if (holdsMessages(entry)) messages += Math.max(0, Math.min(end(entry), to) - from);
  }
  const page = await view.after(from, BACKLOG_PAGE_ITEMS);
  let seenTo = from;
  for (const item of page.items) {
    const entry = fromItem(item);
    if (entry.start >= to) return { messages, exact: true };
    if (holdsMessages(entry)) messages += Math.min(end(entry), to) - entry.start;
    seenTo = end(entry);
  }
  // A full page may stop before `to`: what lies beyond it is counted as offsets, an upper bound.
  if (!page.more || seenTo >= to) return { messages, exact: true };
  return { messages: messages + (to - seenTo), exact: false };
}
