/**
 * @module DynamoDB's wire shapes: our `AttrValue` to `AttributeValue` and back, and the condition and
 * key-condition expressions built from the ports' types. Our own code rather than a
 * marshalling library, because the mapping is small and fixed: strings are `S`, numbers `N`, booleans
 * `BOOL`, `null` is `NULL`, bytes are `B`, arrays `L` and plain objects `M`. Sets are never written; if
 * another tool wrote one, it reads back as an array. Expressions only ever hold placeholders.
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { AttrValue, Condition, Item, ItemKey, SortKey, SortKeyRange } from "../table.js";

/** One attribute value in DynamoDB's wire shape. */
export function toAttr(value: AttrValue): AttributeValue {
  if (value === null) return { NULL: true };
  if (typeof value === "string") return { S: value };
  if (typeof value === "number") return { N: numberToWire(value) };
  if (typeof value === "boolean") return { BOOL: value };
  if (value instanceof Uint8Array) return { B: value };
  if (Array.isArray(value)) return { L: value.map(toAttr) };
  return { M: toAttrMap(value) };
}

/** An attribute map (an item, a key, or a nested map) in DynamoDB's wire shape. */
export function toAttrMap(values: { readonly [name: string]: AttrValue }): Record<string, AttributeValue> {
  return Object.fromEntries(Object.entries(values).map(([name, v]) => [name, toAttr(v)]));
}

/** The wire key of an item (only `pk` and `sk`). */
export function toKey(key: ItemKey): Record<string, AttributeValue> {
  return { pk: { S: key.pk }, sk: toAttr(key.sk) };
}

/** One attribute value from DynamoDB's wire shape. */
export function fromAttr(av: AttributeValue): AttrValue {
  if (av.S !== undefined) return av.S;
  if (av.N !== undefined) return Number(av.N);
  if (av.BOOL !== undefined) return av.BOOL;
  if (av.NULL !== undefined) return null;
  // Copy into a plain Uint8Array: the SDK may hand out a Buffer or a view on a larger response buffer.
  if (av.B !== undefined) return new Uint8Array(av.B);
  if (av.L !== undefined) return av.L.map(fromAttr);
  if (av.M !== undefined) return fromAttrMap(av.M);
  if (av.SS !== undefined) return [...av.SS];
  if (av.NS !== undefined) return av.NS.map(Number);
  if (av.BS !== undefined) return av.BS.map((b) => new Uint8Array(b));
  throw new NimbusError(ErrorCode.SYSTEM_ERROR, `unsupported DynamoDB attribute type: ${Object.keys(av).join(",")}`);
}

export function fromAttrMap(map: Record<string, AttributeValue>): { [name: string]: AttrValue } {
  // Object.fromEntries defines own properties, so a stored "__proto__" name stays a plain attribute.
  return Object.fromEntries(Object.entries(map).map(([name, av]) => [name, fromAttr(av)]));
}

/** An item as read from DynamoDB. Every item of our tables has `pk` (S) and `sk` (S or N). */
export function fromItem(map: Record<string, AttributeValue>): Item {
  const item = fromAttrMap(map);
  const { pk, sk } = item;
  if (typeof pk !== "string" || (typeof sk !== "string" && typeof sk !== "number")) {
    throw new NimbusError(ErrorCode.SYSTEM_ERROR, "DynamoDB returned an item without a pk/sk key");
  }
  return { ...item, pk, sk };
}

/** The sort key of a wire key (a `LastEvaluatedKey`). */
export function fromSortKey(key: Record<string, AttributeValue>): SortKey | undefined {
  const sk = key.sk === undefined ? undefined : fromAttr(key.sk);
  return typeof sk === "string" || typeof sk === "number" ? sk : undefined;
}

/**
 * DynamoDB numbers travel as decimal strings. `String(n)` is the shortest text that reads back as the
 * same double, so the round trip is exact (`-0` comes back as `0`, as from DynamoDB itself).
 */
function numberToWire(n: number): string {
  if (!Number.isFinite(n)) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `a number must be finite, got ${n}`);
  return String(n);
}

/** Placeholders of one request: attribute names as `#nK`, values as `:vK`, never pasted into the text. */
export class Placeholders {
  readonly #names = new Map<string, string>();
  readonly #values: Record<string, AttributeValue> = {};
  #valueCount = 0;

  name(attribute: string): string {
    let ph = this.#names.get(attribute);
    if (ph === undefined) {
      ph = `#n${this.#names.size}`;
      this.#names.set(attribute, ph);
    }
    return ph;
  }

  value(v: AttrValue): string {
    const ph = `:v${this.#valueCount++}`;
    this.#values[ph] = toAttr(v);
    return ph;
  }

  /** `ExpressionAttributeNames`/`Values`, each left out when empty (DynamoDB rejects empty maps). */
  fields(): {
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, AttributeValue>;
  } {
    const names = Object.fromEntries([...this.#names].map(([attribute, ph]) => [ph, attribute]));
    return {
      ...(this.#names.size > 0 ? { ExpressionAttributeNames: names } : {}),
      ...(this.#valueCount > 0 ? { ExpressionAttributeValues: this.#values } : {}),
    };
  }
}

/**
 * The `ConditionExpression` of the put condition `{ exists: false }`. It guarantees no item is stored under
 * the key: the put creates, it never overwrites.
 */
export function notExistsCondition(ph: Placeholders): string {
  return `attribute_not_exists(${ph.name("pk")})`;
}

/** The `ConditionExpression` of a put condition (lib/storage/table.ts `Condition`, `meetsCondition`). */
export function conditionExpression(condition: Condition, ph: Placeholders): string {
  if ("exists" in condition) return notExistsCondition(ph);
  // No item, or one whose `until` has passed: a live marker or lease is never taken over.
  if ("absentOrUntilBefore" in condition)
    return `${notExistsCondition(ph)} OR ${ph.name("until")} < ${ph.value(condition.absentOrUntilBefore)}`;
  const version = `${ph.name("version")} = ${ph.value(condition.versionIs)}`;
  // An item without `version` is version 0.
  return condition.versionIs === 0
    ? `attribute_exists(${ph.name("pk")}) AND (attribute_not_exists(${ph.name("version")}) OR ${version})`
    : version;
}

/**
 * The `ConditionExpression` of the add condition `{ exists: true }`. It guarantees an item is stored under
 * the key: the update changes it and never creates one.
 */
export function existsCondition(ph: Placeholders): string {
  return `attribute_exists(${ph.name("pk")})`;
}

/** A `KeyConditionExpression`: the partition, and optionally a sort-key range within it. */
export function keyConditionExpression(pk: string, range: SortKeyRange | undefined, ph: Placeholders): string {
  const partition = `${ph.name("pk")} = ${ph.value(pk)}`;
  if (range === undefined) return partition;
  const sk = ph.name("sk");
  const rangeText =
    "between" in range
      ? `${sk} BETWEEN ${ph.value(range.between[0])} AND ${ph.value(range.between[1])}`
      : "lte" in range
        ? `${sk} <= ${ph.value(range.lte)}`
        : `${sk} > ${ph.value(range.gt)}`;
  return `${partition} AND ${rangeText}`;
}
