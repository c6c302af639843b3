/**
 * @module The `Table` port: a DynamoDB-shaped key-value table. Items are addressed by a partition key
 * `pk` (string) and a sort key `sk` (string or number, fixed per table). Every adapter behaves the same
 * way: same errors (`NimbusError` codes), same order, same pagination. The broker never sees more than
 * this interface, so its logic runs unchanged on DynamoDB and on the embedded store.
 */
import { ErrorCode, NimbusError } from "../core/errors.js";
import type { RequestCounter } from "./request-counter.js";

/** An attribute value: what DynamoDB can store and our adapters round-trip exactly. */
export type AttrValue = string | number | boolean | null | Uint8Array | AttrValue[] | { [name: string]: AttrValue };

export type SortKey = string | number;

export interface ItemKey {
  pk: string;
  sk: SortKey;
}

/** An item: its key plus any attributes (names other than `pk`/`sk`). */
export type Item = ItemKey & { [name: string]: AttrValue };

/** The declared type of a table's sort key, as in a DynamoDB key schema ("S" or "N"). */
export type SortKeyType = "string" | "number";

export interface TableSpec {
  /** Logical name (e.g. "queue-index"); adapters map it to a physical table. */
  name: string;
  sortKeyType: SortKeyType;
  /** Attribute holding an epoch-seconds expiry, as DynamoDB TTL; expiry is lazy and may be hours late. */
  ttlAttribute?: string;
  /**
   * Objects this table's items own: every object under `prefix` belongs to the item whose `attribute`
   * names its key, and one that no item names is garbage once it is old (a writer died between the object
   * and the item). On AWS the bucket's lifecycle rule removes such objects; adapters without one sweep them
   * (`Storage.collectGarbage`).
   */
  ownedObjects?: { attribute: string; prefix: string };
}

/**
 * The condition a put can carry: `{ exists: false }`, no item has this key (`attribute_not_exists(pk)`).
 * It guarantees the put creates and never overwrites: of concurrent puts under one key, at most one
 * succeeds.
 */
export type Condition = { exists: false } | { versionIs: number } | { absentOrUntilBefore: number };

/**
 * Whether `stored` (the item under the put's key, if any) meets `condition`. `{ versionIs: n }`: an item is
 * stored and its numeric `version` attribute is `n` (an item without one counts as version 0), which guarantees
 * a read-modify-write is applied to the item it read: of concurrent updates from one version, at most one succeeds.
 * `{ absentOrUntilBefore: t }`: no item is stored, or the stored one's numeric `until` is below `t` (a lease or
 * a marker that has run out), which guarantees that of concurrent claims while one is live, none succeeds, and of
 * those after it ran out, the first wins (the winner's `until` is in the future for the others).
 */
export function meetsCondition(condition: Condition, stored: Item | undefined): boolean {
  if ("exists" in condition) return stored === undefined;
  if ("absentOrUntilBefore" in condition)
    return stored === undefined || (typeof stored.until === "number" && stored.until < condition.absentOrUntilBefore);
  if (stored === undefined) return false;
  const version = stored.version ?? 0;
  return version === condition.versionIs;
}

/**
 * Which sort keys a query reads, as DynamoDB's KeyConditionExpression on the sort key: `<=`, `>`, or `BETWEEN`
 * (both ends included; the low end must not sort after the high end).
 */
export type SortKeyRange = { lte: SortKey } | { gt: SortKey } | { between: readonly [SortKey, SortKey] };

export interface GetOptions {
  /** Strongly consistent read (1 read unit per 4 KB instead of 0.5). */
  consistent?: boolean;
}

export interface PutOptions {
  condition?: Condition;
  /**
   * On a failed condition, attach the stored item to the error (`ConditionFailedError.existing`).
   * DynamoDB returns it with the failure; an adapter whose backend does not (dynalite) reads it with
   * one consistent get, so callers see the same thing everywhere.
   */
  returnExistingOnFailure?: boolean;
}

/**
 * The condition an `add` can carry: `{ exists: true }`, an item has this key (`attribute_exists(pk)`). It
 * guarantees the add changes an item that was created on purpose and never creates one: a missing item
 * fails with `ConditionFailedError` and nothing is written.
 */
export type AddCondition = { exists: true };

export interface AddOptions {
  condition?: AddCondition;
}

/**
 * What `addThenPut` does: `add(counter, attribute, delta, { condition: { exists: true } })`, then a put of
 * `item(added)` (built from the add's new value) with the condition `{ exists: false }`.
 */
export interface AddThenPut {
  counter: ItemKey;
  attribute: string;
  delta: number;
  item: (added: number) => Item;
}

/**
 * `stored`: both landed. `noCounter`: the counter item is missing; nothing was written. `taken`: the add landed
 * and the put did not, an item holds its key (`existing`), as two separate calls would have left them.
 */
export type AddThenPutOutcome =
  | { outcome: "stored"; added: number }
  | { outcome: "noCounter" }
  | { outcome: "taken"; added: number; existing: Item };

export interface QueryOptions {
  sk?: SortKeyRange;
  /** Newest (largest sort key) first, as `ScanIndexForward: false`. */
  descending?: boolean;
  /** At most this many items in this page. */
  limit?: number;
  /** Continue after this sort key (a previous page's `lastSk`), as `ExclusiveStartKey`. */
  startAfter?: SortKey | undefined;
  consistent?: boolean;
}

export interface QueryPage {
  items: Item[];
  /**
   * Set when the page stopped at `limit` (or the 1 MB page size): pass it as `startAfter` for the next
   * page. As in DynamoDB it may be set even when no more items follow; absent means no more items.
   */
  lastSk?: SortKey;
}

export interface Table {
  readonly spec: TableSpec;
  readonly counter: RequestCounter;
  get(key: ItemKey, options?: GetOptions): Promise<Item | undefined>;
  /** Writes the whole item. Throws `ConditionFailedError` (code CONDITION_FAILED) when the condition fails. */
  put(item: Item, options?: PutOptions): Promise<void>;
  /**
   * Atomically adds `delta` (an integer) to the number attribute `attribute` of one item and answers its
   * new value, as DynamoDB's `UpdateItem` with `ADD` and `ReturnValues: UPDATED_NEW`: concurrent adds never
   * lose one another, so each caller owns `[new - delta, new)`. A missing attribute counts as 0; a missing
   * item is created unless `condition` says `{ exists: true }`. Other attributes are left as they are.
   */
  add(key: ItemKey, attribute: string, delta: number, options?: AddOptions): Promise<number>;
  /**
   * Optional, for a store that has transactions (the embedded store; DynamoDB cannot feed an `ADD`'s result into
   * another write of the same request): an `add` and a put built from its result in ONE transaction and one
   * commit, billed and counted as the two writes they are. Callers without it make the two calls.
   */
  addThenPut?(write: AddThenPut): Promise<AddThenPutOutcome>;
  /** Deletes the item; deleting a missing item is not an error. */
  delete(key: ItemKey): Promise<void>;
  /** Reads one partition in sort-key order. */
  query(pk: string, options?: QueryOptions): Promise<QueryPage>;
}

/** DynamoDB's largest item (400 KB, counting attribute names and values). */
export const MAX_ITEM_BYTES = 400 * 1024;

/** A failed put condition. `existing` is the stored item when the put asked for it (absent if none). */
export class ConditionFailedError extends NimbusError {
  readonly existing: Item | undefined;

  constructor(message: string, existing?: Item, options?: { cause?: unknown }) {
    super(ErrorCode.CONDITION_FAILED, message, options);
    this.existing = existing;
  }
}
