/**
 * @module DynamoDB's item size rules, used by every adapter to enforce the 400 KB limit and to count
 * capacity units the same way: attribute names count as UTF-8 bytes, strings as UTF-8 bytes, binary as
 * its length, numbers as below, booleans and nulls as one byte, lists and maps as 3 bytes plus one per
 * element plus their contents. DynamoDB Local and dynalite agree with it to the byte (checked by the AWS
 * contract suite on both).
 */
import type { AttrValue, Item } from "./table.js";

const utf8 = (s: string): number => Buffer.byteLength(s, "utf8");

/**
 * DynamoDB stores a number as base-100 digits: its significant digits in pairs aligned on the decimal point
 * (120 is 01|20, 1.5 is 01.50, 12 is 12), one byte per pair, plus one byte, plus one more when negative.
 * Zero is one byte. So 120 takes 3 bytes, 1.5 takes 3, -1 takes 3, -120 takes 4.
 */
function numberSize(n: number): number {
  if (n === 0) return 1;
  if (Number.isSafeInteger(n)) return integerSize(n);
  // toExponential() without an argument gives the shortest digits that read back as `n`: "d.ddde±x".
  const [mantissa = "", exponent = "0"] = Math.abs(n).toExponential().split("e");
  const digits = mantissa.replace(".", "").replace(/0+$/, "").length;
  const first = Number(exponent); // the power of ten of the first significant digit
  const last = first - digits + 1; // ... and of the last
  const pairs = Math.floor(first / 2) - Math.floor(last / 2) + 1;
  return 1 + pairs + (n < 0 ? 1 : 0);
}

/** `numberSize` of a non-zero safe integer, by arithmetic: its digits `d` and trailing zeros `z` give the pairs. */
function integerSize(n: number): number {
  let rest = Math.abs(n);
  let zeros = 0;
  while (rest % 10 === 0) {
    rest /= 10;
    zeros++;
  }
  let digits = zeros;
  while (rest >= 1) {
    rest = Math.floor(rest / 10);
    digits++;
  }
  // first = digits - 1, last = zeros (powers of ten of the first and last significant digits)
  const pairs = Math.floor((digits - 1) / 2) - Math.floor(zeros / 2) + 1;
  return 1 + pairs + (n < 0 ? 1 : 0);
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
