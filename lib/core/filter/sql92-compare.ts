/**
 * @module How RocketMQ's evaluator compares two values (`ComparisonExpression.__compare` with string
 * conversion on, as `SelectorParser` always sets it): values of one type compare as they are; a number meets a
 * string by parsing the string as that number's type (Java's `Long.valueOf` / `Double.valueOf`), a boolean meets
 * a string by `Boolean.valueOf`; a number and a boolean are never equal. A string that does not parse is a
 * type mismatch: `Sql92TypeMismatch`, which makes the whole expression fail for that message (no delivery),
 * as RocketMQ's broker treats an evaluation exception.
 */
import { javaTrim } from "../subscription.js";
import type { Sql92Value } from "./sql92-ast.js";

/** A value that cannot be compared with the other: the message does not match. Carries no message text. */
export class Sql92TypeMismatch extends Error {}

const LONG_MIN = -0x8000000000000000n;
const LONG_MAX = 0x7fffffffffffffffn;
/** Java's `Long.parseLong`: an optional sign and ASCII digits, nothing else (no blanks, no `L`). */
const JAVA_LONG = /^[+-]?[0-9]+$/;
/**
 * Java's `Double.valueOf` on decimal text: blanks (up to U+0020) trimmed, an optional sign, `NaN`, `Infinity`,
 * or digits with an optional fraction and exponent and an optional `f`/`d` suffix. (Java's hexadecimal
 * floating-point form, `0x1p3`, is not read: such a property is a mismatch here.)
 */
const JAVA_DOUBLE = /^[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?)$/;

/** Java's `Long.valueOf(text)`, or a mismatch. */
export function javaLong(text: string): bigint {
  if (!JAVA_LONG.test(text)) throw new Sql92TypeMismatch();
  const value = BigInt(text);
  if (value < LONG_MIN || value > LONG_MAX) throw new Sql92TypeMismatch();
  return value;
}

/** Java's `Double.valueOf(text)`, or a mismatch. */
export function javaDouble(text: string): number {
  const trimmed = javaTrim(text);
  if (!JAVA_DOUBLE.test(trimmed)) throw new Sql92TypeMismatch();
  const unsigned = trimmed.replace(/^[+-]/, "");
  const negative = trimmed.startsWith("-");
  let value: number;
  if (unsigned === "NaN") value = Number.NaN;
  else if (unsigned === "Infinity") value = Number.POSITIVE_INFINITY;
  else value = Number(unsigned.replace(/[fFdD]$/, ""));
  return negative ? -value : value;
}

/** Java's `Boolean.valueOf(text)`: true for "true" in any case, false for anything else. */
const javaBoolean = (text: string): boolean => text.toLowerCase() === "true";

/** Java's `Double.compareTo`: NaN above everything and equal to itself, -0.0 below 0.0. */
export function javaDoubleCompare(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : 1;
  if (Number.isNaN(b)) return -1;
  if (a === 0 && b === 0) return Object.is(a, b) ? 0 : Object.is(a, -0) ? -1 : 1;
  return 0;
}

const sign = (a: bigint | boolean | string, b: typeof a): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Compares two non-null values as RocketMQ does: negative, zero or positive. Mixed types that Java cannot
 * bring together compare as "less" (-1), which only ever makes `=` false.
 */
export function compareSql92Values(left: Sql92Value, right: Sql92Value): number {
  if (left === null || right === null) throw new Sql92TypeMismatch();
  switch (typeof left) {
    case "boolean":
      if (typeof right === "boolean") return sign(left, right);
      // Java casts the Boolean itself to String here and fails: `TRUE = a` never matches in RocketMQ.
      if (typeof right === "string") throw new Sql92TypeMismatch();
      return -1;
    case "bigint":
      if (typeof right === "bigint") return sign(left, right);
      if (typeof right === "number") return javaDoubleCompare(Number(left), right);
      if (typeof right === "string") return sign(left, javaLong(right));
      return -1;
    case "number":
      if (typeof right === "number") return javaDoubleCompare(left, right);
      if (typeof right === "bigint") return javaDoubleCompare(left, Number(right));
      if (typeof right === "string") return javaDoubleCompare(left, javaDouble(right));
      return -1;
    case "string":
      if (typeof right === "string") return sign(left, right);
      if (typeof right === "boolean") return sign(javaBoolean(left), right);
      if (typeof right === "bigint") return sign(javaLong(left), right);
      return javaDoubleCompare(javaDouble(left), right);
  }
}
