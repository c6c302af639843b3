/**
 * @module What DynamoDB evaluates on its side of a write, done locally: conditions against the stored
 * item, set/add/remove with DynamoDB's decimal `ADD`, and the key range of a `begins_with`.
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { AttrValue, Condition, Item, ItemKey, UpdateSpec } from "../table.js";
import { checkNumber } from "../validate.js";

/** DynamoDB's `=`: same type and same value; binary by bytes, lists and maps element by element. */
export function valuesEqual(a: AttrValue | undefined, b: AttrValue | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    return a instanceof Uint8Array && b instanceof Uint8Array && Buffer.compare(a, b) === 0;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => valuesEqual(v, b[i]));
  }
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && valuesEqual(a[k], b[k]));
}

const attribute = (item: Item, name: string): AttrValue | undefined =>
  Object.hasOwn(item, name) ? item[name] : undefined;

/** True when every part of `condition` holds for `stored` (undefined: no item under the key). */
export function conditionHolds(condition: Condition | undefined, stored: Item | undefined): boolean {
  if (condition === undefined) return true;
  const c = condition as { exists?: boolean; equals?: Record<string, AttrValue>; absentOrLessThan?: [string, number] };
  if (c.exists !== undefined && c.exists !== (stored !== undefined)) return false;
  if (c.equals !== undefined) {
    if (stored === undefined) return false;
    for (const [name, value] of Object.entries(c.equals))
      if (!valuesEqual(attribute(stored, name), value)) return false;
  }
  if (c.absentOrLessThan !== undefined && stored !== undefined) {
    const [name, limit] = c.absentOrLessThan;
    const value = attribute(stored, name);
    // attribute_not_exists(pk) OR attribute_not_exists(#a) OR #a < :n (a non-number compares false).
    if (value !== undefined && !(typeof value === "number" && value < limit)) return false;
  }
  return true;
}

/** A number as an exact decimal: `digits * 10^exponent`, from its shortest round-tripping text. */
function toDecimal(n: number): { digits: bigint; exponent: number } {
  const [mantissa = "0", exp = "0"] = String(n).toLowerCase().split("e");
  const [whole = "0", fraction = ""] = mantissa.split(".");
  return { digits: BigInt(whole + fraction), exponent: Number(exp) - fraction.length };
}

/**
 * `a + b` as DynamoDB's ADD computes it: in decimal (0.1 + 0.2 is 0.3), at most 38 significant digits and
 * within DynamoDB's number range, else PARAMETER_ILLEGAL.
 */
export function addDecimal(a: number, b: number): number {
  const x = toDecimal(a);
  const y = toDecimal(b);
  const exponent = Math.min(x.exponent, y.exponent);
  let digits = x.digits * 10n ** BigInt(x.exponent - exponent) + y.digits * 10n ** BigInt(y.exponent - exponent);
  let scale = exponent;
  while (digits !== 0n && digits % 10n === 0n) {
    digits /= 10n;
    scale += 1;
  }
  const text = (digits < 0n ? -digits : digits).toString();
  if (text.length > 38) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "ADD result has more than 38 significant digits");
  }
  const sum = Number(`${digits}e${scale}`);
  checkNumber(sum, "ADD result");
  return sum;
}

function setAttribute(item: Item, name: string, value: AttrValue): void {
  // defineProperty keeps a name like "__proto__" an ordinary attribute.
  Object.defineProperty(item, name, { value, enumerable: true, writable: true, configurable: true });
}

/** The item after `update` on `stored` (or on a new item with just `key`), as DynamoDB's UpdateItem. */
export function applyUpdate(key: ItemKey, stored: Item | undefined, update: UpdateSpec): Item {
  const next: Item = stored ? { ...stored } : { pk: key.pk, sk: key.sk };
  for (const [name, value] of Object.entries(update.set ?? {})) setAttribute(next, name, value);
  for (const [name, delta] of Object.entries(update.add ?? {})) {
    const current = attribute(next, name);
    if (current !== undefined && typeof current !== "number") {
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `cannot ADD to ${name}: it is not a number`);
    }
    setAttribute(next, name, addDecimal(current ?? 0, delta));
  }
  for (const name of update.remove ?? []) delete next[name];
  return next;
}

/**
 * The smallest string above every string that starts with `prefix` (in code point order, which is UTF-8
 * byte order), or undefined when there is none. `begins_with` is then the range `[prefix, bound)`.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const points = Array.from(prefix, (ch) => ch.codePointAt(0) ?? 0);
  while (points.length > 0) {
    const last = (points.pop() ?? 0) + 1;
    if (last <= 0x10ffff) {
      points.push(last === 0xd800 ? 0xe000 : last);
      return String.fromCodePoint(...points);
    }
  }
  return undefined;
}
