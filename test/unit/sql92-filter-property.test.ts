/**
 * @module Properties of the SQL92 filter that hold for every expression of a generated family: the laws of
 * RocketMQ's three-valued logic (De Morgan, NOT never agreeing with its operand, `P OR NOT P` true exactly
 * when P is known), order- and case-independence, BETWEEN as its rewriting, a numeric oracle for single
 * comparisons; and for any text at all, compiling either succeeds or throws a short PARAMETER_ILLEGAL, and
 * a compiled filter never throws on any message.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { compileFilter } from "../../lib/core/filter/index.js";

type Props = Record<string, string>;

/** Integer-valued numeric properties and string properties, each possibly missing: no type mismatch can occur. */
const propsArb: fc.Arbitrary<Props> = fc
  .record(
    {
      n1: fc.integer({ min: -20, max: 20 }).map(String),
      n2: fc.integer({ min: -20, max: 20 }).map(String),
      s1: fc.constantFrom("x", "y", "z", ""),
      s2: fc.constantFrom("x", "y", "z", "xyz"),
    },
    { requiredKeys: [] },
  )
  .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as Props);

const numName = fc.constantFrom("n1", "n2");
const strName = fc.constantFrom("s1", "s2");
const ordering = fc.constantFrom("=", "<>", "<", "<=", ">", ">=");
const small = fc.integer({ min: -20, max: 20 });

const atomArb: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(numName, ordering, small).map(([p, op, k]) => `${p} ${op} ${k}`),
  fc.tuple(strName, fc.constantFrom("=", "<>"), fc.constantFrom("x", "y")).map(([p, op, v]) => `${p} ${op} '${v}'`),
  fc
    .tuple(fc.constantFrom(...["n1", "n2", "s1", "s2"]), fc.boolean())
    .map(([p, not]) => `${p} IS ${not ? "NOT " : ""}NULL`),
  fc.tuple(strName, fc.boolean()).map(([p, not]) => `${p} ${not ? "NOT " : ""}IN ('x', 'z')`),
  fc
    .tuple(numName, small, fc.nat(10), fc.boolean())
    .map(([p, lo, w, not]) => `${p} ${not ? "NOT " : ""}BETWEEN ${lo} AND ${lo + w}`),
  fc
    .tuple(strName, fc.constantFrom("CONTAINS", "STARTSWITH", "ENDSWITH"), fc.boolean())
    .map(([p, f, not]) => `${p} ${not ? "NOT " : ""}${f} 'x'`),
  fc.constantFrom("TRUE", "FALSE"),
);

const { condition: conditionArb } = fc.letrec<{ condition: string }>((tie) => ({
  condition: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    atomArb,
    fc.tuple(tie("condition"), tie("condition")).map(([a, b]) => `(${a}) AND (${b})`),
    fc.tuple(tie("condition"), tie("condition")).map(([a, b]) => `(${a}) OR (${b})`),
    tie("condition").map((a) => `NOT (${a})`),
  ),
}));

const matches = (expression: string, props: Props) =>
  compileFilter({ type: "SQL92", expression }).matches({ properties: props });

const RUNS = { numRuns: 300 };

describe("SQL92 filter: properties", () => {
  it("follows De Morgan's laws under three-valued logic", () => {
    fc.assert(
      fc.property(conditionArb, conditionArb, propsArb, (p, q, props) => {
        assert.equal(matches(`NOT ((${p}) AND (${q}))`, props), matches(`(NOT (${p})) OR (NOT (${q}))`, props));
        assert.equal(matches(`NOT ((${p}) OR (${q}))`, props), matches(`(NOT (${p})) AND (NOT (${q}))`, props));
      }),
      RUNS,
    );
  });

  it("never delivers both P and NOT P; delivers P OR NOT P exactly when P is known", () => {
    fc.assert(
      fc.property(conditionArb, propsArb, (p, props) => {
        assert.ok(!(matches(p, props) && matches(`NOT (${p})`, props)));
        assert.equal(matches(`(${p}) OR NOT (${p})`, props), !matches(`(${p}) IS NULL`, props));
      }),
      RUNS,
    );
  });

  it("answers the same whatever the order of AND/OR operands and the case of keywords", () => {
    fc.assert(
      fc.property(conditionArb, conditionArb, propsArb, (p, q, props) => {
        assert.equal(matches(`(${p}) AND (${q})`, props), matches(`(${q}) AND (${p})`, props));
        assert.equal(matches(`(${p}) OR (${q})`, props), matches(`(${q}) OR (${p})`, props));
        assert.equal(matches(p.toLowerCase(), props), matches(p, props));
      }),
      RUNS,
    );
  });

  it("reads BETWEEN as >= AND <=, and NOT BETWEEN as < OR >", () => {
    fc.assert(
      fc.property(numName, small, small, propsArb, (name, lo, hi, props) => {
        const [low, high] = lo <= hi ? [lo, hi] : [hi, lo];
        assert.equal(
          matches(`${name} BETWEEN ${low} AND ${high}`, props),
          matches(`${name} >= ${low} AND ${name} <= ${high}`, props),
        );
        assert.equal(
          matches(`${name} NOT BETWEEN ${low} AND ${high}`, props),
          matches(`${name} < ${low} OR ${name} > ${high}`, props),
        );
      }),
      RUNS,
    );
  });

  it("compares a numeric property as a number, and never delivers when it is missing", () => {
    const oracle: Record<string, (a: number, b: number) => boolean> = {
      "=": (a, b) => a === b,
      "<>": (a, b) => a !== b,
      "<": (a, b) => a < b,
      "<=": (a, b) => a <= b,
      ">": (a, b) => a > b,
      ">=": (a, b) => a >= b,
    };
    fc.assert(
      fc.property(
        ordering,
        fc.option(fc.integer(), { nil: undefined }),
        fc.integer(),
        fc.boolean(),
        (op, value, k, decimal) => {
          const props: Props = value === undefined ? {} : { v: String(value) };
          const literal = decimal ? `${k}.0` : String(k);
          const expected = value !== undefined && (oracle[op] as (a: number, b: number) => boolean)(value, k);
          assert.equal(matches(`v ${op} ${literal}`, props), expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});

const FRAGMENTS = [
  "a",
  "b1",
  "TAGS",
  " ",
  "(",
  ")",
  ",",
  "'",
  "''",
  "'x'",
  "=",
  "<>",
  "<",
  ">=",
  "-",
  "+",
  "1",
  "0",
  "2.5",
  ".5",
  "1e3",
  "9223372036854775808",
  "AND",
  "or",
  "NOT",
  "BETWEEN",
  "IN",
  "IS",
  "NULL",
  "TRUE",
  "false",
  "CONTAINS",
  "--",
  "/*",
  "*/",
  "\n",
  "!",
  "é",
  "\u0000",
];

describe("SQL92 filter: any text", () => {
  it("compiles or is refused with a short PARAMETER_ILLEGAL; a compiled filter never throws", () => {
    const textArb = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 60 }).map((parts) => parts.join(" ")),
      fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 60 }).map((parts) => parts.join("")),
    );
    const anyProps = fc.dictionary(fc.constantFrom("a", "b1", "TAGS", "constructor"), fc.string({ maxLength: 8 }));
    fc.assert(
      fc.property(textArb, anyProps, (expression, props) => {
        let filter: ReturnType<typeof compileFilter>;
        try {
          filter = compileFilter({ type: "SQL92", expression });
        } catch (err) {
          assert.ok(isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL), String(err));
          assert.ok(err.message.length <= 120, err.message);
          return;
        }
        assert.equal(typeof filter.matches({ tags: "t", properties: props }), "boolean");
      }),
      { numRuns: 2000 },
    );
  });
});
