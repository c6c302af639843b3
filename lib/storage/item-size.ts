/**
 * @module DynamoDB's item size rules, used by every adapter to enforce the 400 KB limit and to count
 * capacity units the same way: attribute names count as UTF-8 bytes, strings as UTF-8 bytes, binary as
 * its length, numbers as about one byte per two significant digits plus one, booleans and nulls as one
 * byte, lists and maps as 3 bytes plus one per element plus their contents.
 */
import type { AttrValue, Item } from "./table.js";

const utf8 = (s: string): number => Buffer.byteLength(s, "utf8");

function numberSize(n: number): number {
  const digits = String(Math.abs(n)).replace(/e.*$/i, "").replace(".", "").replace(/^0+/, "").replace(/0+$/, "");
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

export function valueSize(value: AttrValue): number {
  if (value === null || typeof value === "boolean") return 1;
  if (typeof value === "string") return utf8(value);
  if (typeof value === "number") return numberSize(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (Array.isArray(value)) return 3 + value.reduce<number>((sum, v) => sum + 1 + valueSize(v), 0);
  return 3 + Object.entries(value).reduce((sum, [k, v]) => sum + 1 + utf8(k) + valueSize(v), 0);
}

/** The size DynamoDB bills and limits for `item`. */
export function itemSize(item: Item): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += utf8(name) + valueSize(value);
  return size;
}
