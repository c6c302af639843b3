/**
 * @module Input rules of the storage ports, as DynamoDB and S3 enforce them. Every adapter runs these
 * checks before it touches its backend, so bad input fails the same way everywhere (PARAMETER_ILLEGAL,
 * ITEM_TOO_LARGE, INVALID_RANGE), is never counted as a request, and writes nothing.
 */
import { ErrorCode, NimbusError } from "../core/errors.js";
import { itemSize } from "./item-size.js";
import { type ByteRange, type ListOptions, MAX_OBJECT_KEY_BYTES, OBJECT_KEY_PATTERN } from "./object-store.js";
import {
  type AddOptions,
  type AttrValue,
  type Condition,
  type Item,
  type ItemKey,
  MAX_ITEM_BYTES,
  type QueryOptions,
  type SortKey,
  type SortKeyRange,
  type TableSpec,
} from "./table.js";

/** DynamoDB's key limits: partition key up to 2048 bytes, sort key up to 1024 bytes. */
export const MAX_PK_BYTES = 2048;
export const MAX_SK_BYTES = 1024;
/** DynamoDB nests lists and maps at most 32 levels deep. */
export const MAX_NESTING = 32;
/** S3 returns at most 1000 keys per ListObjectsV2 page. */
export const MAX_LIST_LIMIT = 1000;

const illegal = (message: string): NimbusError => new NimbusError(ErrorCode.PARAMETER_ILLEGAL, message);
const utf8Bytes = (s: string): number => Buffer.byteLength(s, "utf8");

/** A table spec: a name of DynamoDB table-name characters, a key type, and one spec per name. */
export function checkTableSpec(spec: TableSpec, existing?: TableSpec): void {
  if (typeof spec !== "object" || spec === null) throw illegal("a table spec must be an object");
  if (typeof spec.name !== "string" || !/^[A-Za-z0-9_.-]{1,200}$/.test(spec.name)) {
    throw illegal(`table name ${JSON.stringify(spec.name)}: use 1-200 of [A-Za-z0-9_.-]`);
  }
  if (spec.sortKeyType !== "string" && spec.sortKeyType !== "number") {
    throw illegal(`table ${spec.name}: sortKeyType must be "string" or "number"`);
  }
  if (spec.ttlAttribute !== undefined && (typeof spec.ttlAttribute !== "string" || spec.ttlAttribute === "")) {
    throw illegal(`table ${spec.name}: ttlAttribute must be a non-empty string`);
  }
  const owned = spec.ownedObjects;
  if (
    owned !== undefined &&
    (typeof owned !== "object" ||
      owned === null ||
      typeof owned.attribute !== "string" ||
      !/^[A-Za-z0-9_]{1,255}$/.test(owned.attribute) ||
      typeof owned.prefix !== "string" ||
      !/^[A-Za-z0-9!_.*'()%-]+\/$/.test(owned.prefix))
  ) {
    throw illegal(
      `table ${spec.name}: ownedObjects needs an attribute of [A-Za-z0-9_] and a one-segment prefix ending in "/"`,
    );
  }
  if (existing && (existing.sortKeyType !== spec.sortKeyType || existing.ttlAttribute !== spec.ttlAttribute)) {
    throw illegal(`table ${spec.name} is already open with another spec`);
  }
}

/** DynamoDB numbers: finite, magnitude below 1e126 and (unless 0) at least 1e-130. */
function checkNumber(n: unknown, what: string): asserts n is number {
  if (typeof n !== "number" || !Number.isFinite(n)) throw illegal(`${what} must be a finite number`);
  const abs = Math.abs(n);
  if (abs >= 1e126) throw illegal(`${what}: number overflow (magnitude must be below 1e126)`);
  if (abs !== 0 && abs < 1e-130) throw illegal(`${what}: number underflow (magnitude must be at least 1e-130)`);
}

function isPlainObject(v: object): boolean {
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * An attribute value DynamoDB can store: no undefined, NaN, bigint, class instances, nesting past 32, or
 * map keys that are not valid attribute names (empty, or over 64 KB).
 */
export function checkValue(value: unknown, what: string, depth = 0): asserts value is AttrValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") return checkNumber(value, what);
  if (value instanceof Uint8Array) return;
  if (typeof value !== "object") throw illegal(`${what}: unsupported value of type ${typeof value}`);
  if (depth >= MAX_NESTING) throw illegal(`${what}: nested more than ${MAX_NESTING} levels deep`);
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) checkValue(v, `${what}[${i}]`, depth + 1);
    return;
  }
  if (!isPlainObject(value)) throw illegal(`${what}: only plain objects, arrays and Uint8Array can be stored`);
  for (const [k, v] of Object.entries(value)) {
    // Names inside maps follow the rules of top-level names: DynamoDB refuses an empty one after the request.
    checkAttrName(k, what);
    checkValue(v, `${what}.${k}`, depth + 1);
  }
}

function checkAttrName(name: string, what: string): void {
  if (name.length === 0) throw illegal(`${what}: attribute names must not be empty`);
  if (utf8Bytes(name) > 65535) throw illegal(`${what}: attribute name longer than 65535 bytes`);
}

/** A sort key value of the table's declared type, valid as a DynamoDB key attribute. */
export function checkSortKey(spec: TableSpec, sk: unknown, what = "sk"): asserts sk is SortKey {
  if (spec.sortKeyType === "number") {
    if (typeof sk !== "number") throw illegal(`${what} must be a number in table ${spec.name}`);
    checkNumber(sk, what);
    return;
  }
  if (typeof sk !== "string") throw illegal(`${what} must be a string in table ${spec.name}`);
  if (sk.length === 0) throw illegal(`${what} must not be an empty string`);
  if (utf8Bytes(sk) > MAX_SK_BYTES) throw illegal(`${what} is longer than ${MAX_SK_BYTES} bytes`);
}

export function checkPartitionKey(pk: unknown): asserts pk is string {
  if (typeof pk !== "string" || pk.length === 0) throw illegal("pk must be a non-empty string");
  if (utf8Bytes(pk) > MAX_PK_BYTES) throw illegal(`pk is longer than ${MAX_PK_BYTES} bytes`);
}

export function checkKey(spec: TableSpec, key: ItemKey): void {
  if (typeof key !== "object" || key === null) throw illegal("a key must be an object with pk and sk");
  checkPartitionKey(key.pk);
  checkSortKey(spec, key.sk);
}

/**
 * A whole item for `put`: a valid key, valid attributes, at most 400 KB (DynamoDB's limit, by `itemSize`).
 * Answers its size, so an adapter counting the write need not compute it again.
 */
export function checkItem(spec: TableSpec, item: Item): number {
  checkKey(spec, item);
  for (const [name, value] of Object.entries(item)) {
    if (name === "pk" || name === "sk") continue;
    checkAttrName(name, "item");
    checkValue(value, name);
  }
  const size = itemSize(item);
  if (size > MAX_ITEM_BYTES) {
    throw new NimbusError(ErrorCode.ITEM_TOO_LARGE, `item of ${size} bytes exceeds ${MAX_ITEM_BYTES} bytes`);
  }
  return size;
}

/** A put's condition: absent, `{ exists: false }`, `{ versionIs: n }` or `{ absentOrUntilBefore: t }`. */
export function checkCondition(condition: Condition | undefined): void {
  if (condition === undefined) return;
  const keys = typeof condition === "object" && condition !== null ? Object.keys(condition) : [];
  const valid =
    keys.length === 1 &&
    (("exists" in condition && condition.exists === false) ||
      ("versionIs" in condition && Number.isSafeInteger(condition.versionIs) && condition.versionIs >= 0) ||
      ("absentOrUntilBefore" in condition && Number.isSafeInteger(condition.absentOrUntilBefore)));
  if (!valid)
    throw illegal(
      "a condition is { exists: false }, { versionIs: n } (n a non-negative integer) or { absentOrUntilBefore: t } (an integer)",
    );
}

/** A condition that is absent or exactly `{ exists: <exists> }`. */
function checkExistsCondition(condition: unknown, exists: boolean, message: string): void {
  if (condition === undefined) return;
  const ok =
    typeof condition === "object" &&
    condition !== null &&
    Object.keys(condition).length === 1 &&
    (condition as { exists?: unknown }).exists === exists;
  if (!ok) throw illegal(message);
}

/**
 * An `add`: a valid key, an attribute other than the key's, a safe integer delta, and a condition that is
 * absent or exactly `{ exists: true }`.
 */
export function checkAdd(spec: TableSpec, key: ItemKey, attribute: string, delta: number, options: AddOptions): void {
  checkKey(spec, key);
  if (typeof attribute !== "string" || attribute === "pk" || attribute === "sk") {
    throw illegal("add: the attribute must be a name other than pk and sk");
  }
  checkAttrName(attribute, "add");
  if (!Number.isSafeInteger(delta)) throw illegal(`add: the delta must be a safe integer, got ${String(delta)}`);
  checkExistsCondition(options.condition, true, "the only add condition is { exists: true }");
}

/** Sort key order as DynamoDB's: numbers numerically, strings by their UTF-8 bytes. */
export function compareSortKeys(a: SortKey, b: SortKey): number {
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(String(a), "utf8"), Buffer.from(String(b), "utf8"));
}

/** True when `sk` satisfies `range` (as DynamoDB's KeyConditionExpression on the sort key). */
export function sortKeyInRange(sk: SortKey, range: SortKeyRange): boolean {
  if ("between" in range)
    return compareSortKeys(sk, range.between[0]) >= 0 && compareSortKeys(sk, range.between[1]) <= 0;
  return "lte" in range ? compareSortKeys(sk, range.lte) <= 0 : compareSortKeys(sk, range.gt) > 0;
}

function checkRange(spec: TableSpec, range: SortKeyRange): void {
  if (typeof range !== "object" || range === null) throw illegal("sk range must be an object");
  const ops = Object.keys(range);
  if (ops.length !== 1) throw illegal("sk range must have exactly one operator");
  const op = ops[0] ?? "";
  if (op === "between") {
    const ends: unknown = (range as Record<string, unknown>)[op];
    if (!Array.isArray(ends) || ends.length !== 2) throw illegal("sk.between must be [low, high]");
    checkSortKey(spec, ends[0], "sk.between[0]");
    checkSortKey(spec, ends[1], "sk.between[1]");
    // As DynamoDB, which refuses a BETWEEN whose low end sorts after its high end.
    if (compareSortKeys(ends[0] as SortKey, ends[1] as SortKey) > 0)
      throw illegal("sk.between's low end is above its high end");
    return;
  }
  if (op !== "lte" && op !== "gt") throw illegal(`unknown sk range operator ${op} (use lte, gt or between)`);
  checkSortKey(spec, (range as Record<string, unknown>)[op], `sk.${op}`);
}

/** A query: valid pk, range and limit; `startAfter` of the key type and inside the range (as DynamoDB). */
export function checkQuery(spec: TableSpec, pk: string, options: QueryOptions = {}): void {
  checkPartitionKey(pk);
  if (options.limit !== undefined && (!Number.isInteger(options.limit) || options.limit < 1)) {
    throw illegal("limit must be an integer of at least 1");
  }
  if (options.sk !== undefined) checkRange(spec, options.sk);
  if (options.startAfter !== undefined) {
    checkSortKey(spec, options.startAfter, "startAfter");
    if (options.sk !== undefined && !sortKeyInRange(options.startAfter, options.sk)) {
      throw illegal("startAfter does not match the sort key range");
    }
  }
}

/** An object key we accept (see `OBJECT_KEY_PATTERN`). */
export function checkObjectKey(key: unknown): asserts key is string {
  if (typeof key !== "string" || !OBJECT_KEY_PATTERN.test(key)) {
    throw illegal(`invalid object key ${JSON.stringify(key)}: use /-separated segments of [A-Za-z0-9!_.*'()%-]`);
  }
  if (utf8Bytes(key) > MAX_OBJECT_KEY_BYTES) throw illegal(`object key longer than ${MAX_OBJECT_KEY_BYTES} bytes`);
}

/** The shape of a byte range (whether it fits the object is the store's answer, also INVALID_RANGE). */
export function checkByteRange(range: ByteRange | undefined): void {
  if (range === undefined) return;
  if (!Number.isSafeInteger(range.offset) || range.offset < 0) {
    throw new NimbusError(ErrorCode.INVALID_RANGE, `range offset must be an integer >= 0, got ${range.offset}`);
  }
  if (!Number.isSafeInteger(range.length) || range.length <= 0) {
    throw new NimbusError(ErrorCode.INVALID_RANGE, `range length must be an integer > 0, got ${range.length}`);
  }
}

/** Checks a listing request and returns its page size (default and most: 1000, as S3's MaxKeys). */
export function checkList(prefix: string, options: ListOptions = {}): number {
  if (typeof prefix !== "string") throw illegal("prefix must be a string");
  if (utf8Bytes(prefix) > MAX_OBJECT_KEY_BYTES) throw illegal(`prefix longer than ${MAX_OBJECT_KEY_BYTES} bytes`);
  if (options.continuation !== undefined && typeof options.continuation !== "string") {
    throw illegal("continuation must be a previous page's next");
  }
  const limit = options.limit ?? MAX_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw illegal("limit must be an integer of at least 1");
  return Math.min(limit, MAX_LIST_LIMIT);
}
