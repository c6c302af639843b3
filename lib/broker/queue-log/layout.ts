/**
 * @module A queue's index layout. Every queue created before hot queues, and every queue by default, keeps its
 * index items on one partition key (`pk`: K = 1). A **spread** queue (a hot queue, K > 1) keeps each item on
 * one of K keys chosen by a hash of the item's first offset (`pk#0` … `pk#<K-1>`), so its writes share K
 * partitions' ceilings instead of one; a reader queries the K keys in parallel and merges them by offset. Each
 * offset has exactly one key, so a slot's conditional put (fill or seal) is as before. A spread queue's base key
 * holds only its **layout item** (sk = -1, `k` = K), written before its counter and never changed: a reader's
 * first query (the base key, newest first) learns the layout at no extra cost. Its counter has a key of its own
 * (`pk#ranges`, not `pk#seq`), so a process that takes the queue for a one-key queue fails its reservation and
 * looks, instead of writing where readers of the spread queue never look. See docs/queue-log.md ("Hot queues").
 */
import type { Item, SortKeyRange, Table } from "../../storage/table.js";

/** The sort key of a spread queue's layout item, on its base key (offsets are never negative). */
export const LAYOUT_SK = -1;
/** The layout item's attribute: how many keys the queue's index is spread over. */
export const LAYOUT_KEYS_ATTRIBUTE = "k";
/** The most keys a queue's index may be spread over. */
export const MAX_INDEX_KEYS = 64;

/** The layout item on a base key, if `item` is one: the number of keys. */
export function layoutKeys(item: Item | undefined): number | undefined {
  if (item === undefined || item.sk !== LAYOUT_SK) return undefined;
  const k = item[LAYOUT_KEYS_ATTRIBUTE];
  return typeof k === "number" && Number.isInteger(k) && k >= 2 && k <= MAX_INDEX_KEYS ? k : undefined;
}

/**
 * The key of a queue's counter item: a partition of its own (`<queue pk>#seq`, or `#ranges` for a spread queue,
 * which no queue pk or index key can be: those hold two `#`, and a spread key a number after a third), so the
 * counter's writes do not share the index partitions' write ceilings.
 */
export function counterKeyOf(pk: string, keys: number): { pk: string; sk: number } {
  return { pk: keys === 1 ? `${pk}#seq` : `${pk}#ranges`, sk: 0 };
}

/** Which of `keys` keys holds the item starting at `offset`: a hash, so batch sizes do not skew it. */
export function shardOf(offset: number, keys: number): number {
  const lo = offset >>> 0;
  const hi = Math.floor(offset / 4_294_967_296) >>> 0;
  let h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) % keys;
}

export interface AfterPage {
  /** Items after the asked sort key, ascending, none missing in between. */
  items: Item[];
  /** More items may follow the last one. */
  more: boolean;
}

/** One queue's index as its layout lays it out: where an offset's item lives, and queries over all its keys. */
export class IndexView {
  readonly #keys: string[];
  constructor(
    readonly table: Table,
    readonly pk: string,
    readonly keys: number,
  ) {
    this.#keys = keys === 1 ? [pk] : Array.from({ length: keys }, (_, i) => `${pk}#${i}`);
  }

  /** The partition keys of the queue's index (its base key, or its K spread keys). */
  get keyNames(): readonly string[] {
    return this.#keys;
  }

  get spread(): boolean {
    return this.keys > 1;
  }

  /** The partition key of the item starting at `offset`. */
  keyOf(offset: number): string {
    return this.keys === 1 ? this.pk : (this.#keys[shardOf(offset, this.keys)] as string);
  }

  /** The counter's key. */
  get counter(): { pk: string; sk: number } {
    return counterKeyOf(this.pk, this.keys);
  }

  /** The item stored at offset `sk` (its slot), if any. */
  get(sk: number, consistent = true): Promise<Item | undefined> {
    return this.table.get({ pk: this.keyOf(sk), sk }, { consistent });
  }

  /** The item with the largest sort key (the queue's newest), one query per key. */
  async newest(consistent = true): Promise<Item | undefined> {
    return largest(await this.#each((pk) => this.table.query(pk, { descending: true, limit: 1, consistent })));
  }

  /** The item with the smallest sort key (the queue's bottom), one query per key. */
  async oldest(consistent = true): Promise<Item | undefined> {
    const firsts = await this.#each((pk) => this.table.query(pk, { sk: { gt: LAYOUT_SK }, limit: 1, consistent }));
    return firsts.reduce<Item | undefined>(
      (low, item) => (low === undefined || sortKey(item) < sortKey(low) ? item : low),
      undefined,
    );
  }

  /** The newest item starting at or before `offset`, one query per key. */
  async atOrBefore(offset: number, consistent = true): Promise<Item | undefined> {
    return largest(
      await this.#each((pk) => this.table.query(pk, { sk: { lte: offset }, descending: true, limit: 1, consistent })),
    );
  }

  /**
   * About `limit` items after sort key `afterSk`, ascending: a query per key, each asking for its share, merged
   * and cut where a key's full page ends (beyond that cut that key may hold items not read yet). With `upTo`,
   * only items starting at or below it (one `BETWEEN` range: item sort keys are whole offsets, so "after
   * `afterSk`" is "from `afterSk + 1`"); `more` then says only whether the page stopped at its limit.
   */
  async after(afterSk: number, limit: number, consistent = true, upTo?: number): Promise<AfterPage> {
    if (upTo !== undefined && upTo < afterSk + 1) return { items: [], more: false };
    const sk: SortKeyRange = upTo === undefined ? { gt: afterSk } : { between: [afterSk + 1, upTo] };
    if (this.keys === 1) {
      const page = await this.table.query(this.pk, { sk, limit, consistent });
      return { items: page.items, more: page.lastSk !== undefined };
    }
    const share = Math.ceil(limit / this.keys) + 1;
    const pages = await Promise.all(this.#keys.map((pk) => this.table.query(pk, { sk, limit: share, consistent })));
    let cut = Number.POSITIVE_INFINITY;
    for (const page of pages) {
      const last = page.items[page.items.length - 1];
      if (page.lastSk !== undefined && last !== undefined) cut = Math.min(cut, sortKey(last));
    }
    const items = pages
      .flatMap((page) => page.items)
      .filter((item) => sortKey(item) <= cut)
      .sort((a, b) => sortKey(a) - sortKey(b));
    return { items, more: cut !== Number.POSITIVE_INFINITY };
  }

  async #each(query: (pk: string) => Promise<{ items: Item[] }>): Promise<Item[]> {
    const pages = await Promise.all(this.#keys.map(query));
    return pages.flatMap((page) => page.items.slice(0, 1));
  }
}

const sortKey = (item: Item): number => (typeof item.sk === "number" ? item.sk : Number.NaN);

function largest(items: Item[]): Item | undefined {
  return items.reduce<Item | undefined>(
    (high, item) => (high === undefined || sortKey(item) > sortKey(high) ? item : high),
    undefined,
  );
}
