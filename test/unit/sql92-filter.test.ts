/**
 * @module SQL92 and TAG filters (lib/core/filter) as RocketMQ's `filter/` module evaluates them: a table of
 * expressions and messages with the answer RocketMQ gives (its ExpressionTest cases among them), the bad
 * expressions with the position they name, and the bounds (length, nesting) refused before any work.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import {
  compileFilter,
  type FilterableMessage,
  MAX_FILTER_EXPRESSION_LENGTH,
  MAX_FILTER_NESTING,
} from "../../lib/core/filter/index.js";

type Props = Record<string, string>;

/** [expression, properties, delivered?] */
const CASES: [string, Props, boolean][] = [
  // numbers: a property is a string, parsed as the literal's type (Java's Long.valueOf / Double.valueOf)
  ["a = 3", { a: "3" }, true],
  ["a = 3", { a: "4" }, false],
  ["a = 3", { a: "3.0" }, false], // "3.0" is no long: a type mismatch, never delivered
  ["a = 3.0", { a: "3" }, true],
  ["a > 5", { a: "10" }, true],
  ["a > 5", { a: "5" }, false],
  ["a >= 5", { a: "5" }, true],
  ["a <= 4", { a: "-4" }, true],
  ["a < 5.5", { a: "5.25" }, true],
  ["a > 5", { a: "10.5" }, false], // mismatch: compare a decimal property with 5.0
  ["a > 5.0", { a: "10.5" }, true],
  ["a > 1", { a: "+2" }, true],
  ["a > 1", { a: " 2" }, false], // Long.valueOf does not trim
  ["a > 1.0", { a: " 2 " }, true], // Double.valueOf does
  ["a > 1.0", { a: "2d" }, true],
  ["a > 1.0", { a: "NaN" }, true], // Java's Double.compareTo puts NaN above everything
  ["a = 1.0", { a: "NaN" }, false],
  ["a > 3.1E10", { a: "31415000000" }, true],
  ["a > .5", { a: "0.75" }, true],
  ["a = 5.", { a: "5" }, true],
  ["a > -5", { a: "-3" }, true],
  ["a = -2.5", { a: "-2.5" }, true],
  ["a = - -2", { a: "2" }, true],
  ["a = 9223372036854775807", { a: "9223372036854775807" }, true], // a long, exactly
  ["a = 9223372036854775807", { a: "9223372036854775806" }, false],
  ["a > 10L", { a: "11" }, true],
  ["a > 5", { a: "3000000000" }, true],
  ["a > b", { a: "20", b: "10" }, true], // two properties order as doubles
  ["a > b", { a: "10", b: "20" }, false],
  ["a > b", { a: "x", b: "1" }, false],
  ["a > -b", { a: "1", b: "2" }, false], // minus of a string property is unknown
  // strings: = and <> only, exact and case-sensitive
  ["a = 'abc'", { a: "abc" }, true],
  ["a = 'abc'", { a: "ABC" }, false],
  ["a <> 'abc'", { a: "x" }, true],
  ["a <> 'abc'", { a: "abc" }, false],
  ["a = b", { a: "3.14", b: "3.14" }, true],
  ["a = b", { a: "1", b: "1.0" }, false], // = of two properties compares the strings
  ["a <> b", { a: "3.14", b: "3.141" }, true],
  ["a = 'it''s'", { a: "it's" }, true],
  ["a = ''", { a: "" }, true],
  ["a = 'line\nbreak'", { a: "line\nbreak" }, true],
  // booleans: Boolean.valueOf of the property
  ["a = TRUE", { a: "true" }, true],
  ["a = TRUE", { a: "TRUE" }, true],
  ["a = TRUE", { a: "yes" }, false],
  ["a = FALSE", { a: "no" }, true],
  ["a=TRUE OR b=FALSE", { a: "true", b: "false" }, true],
  ["a=TRUE OR b=FALSE", { a: "false", b: "true" }, false],
  ["TRUE = a", { a: "true" }, false], // RocketMQ fails to convert with the literal first
  ["(a = 1) = TRUE", { a: "1" }, true],
  ["1 = TRUE", {}, false],
  ["TRUE", {}, true],
  ["FALSE", {}, false],
  ["NULL", {}, false],
  ["NOT NULL", {}, false],
  ["NULL IS NULL", {}, true],
  // a bare property is RocketMQ's boolean cast: a string is never TRUE, so it is false when present
  ["a", { a: "true" }, false],
  ["NOT a", { a: "true" }, true],
  ["NOT a", {}, false],
  // missing properties: unknown, and NOT of unknown is unknown
  ["a = 1", {}, false],
  ["NOT (a = 1)", {}, false],
  ["a <> 1", {}, false],
  ["a > 1", {}, false],
  ["NOT (a > 1)", {}, false],
  ["a IS NULL", {}, true],
  ["a IS NULL", { a: "x" }, false],
  ["a IS NOT NULL", { a: "x" }, true],
  ["a IS NOT NULL", {}, false],
  ["a IS NOT NULL AND a = 'hello'", { a: "hello" }, true],
  ["a IS NOT NULL AND a = 'hello'", {}, false],
  ["a IS NULL OR a = 'hello'", {}, true],
  ["a IS NULL OR a = 'hello'", { a: "hello" }, true],
  ["a IS NULL OR a = 'hello'", { a: "abc" }, false],
  ["(a > 1) IS NULL", {}, true], // the comparison itself is unknown
  ["a = 1 OR b = 2", { b: "2" }, true], // unknown OR true
  ["a = 1 AND b = 2", { b: "2" }, false], // unknown AND true is unknown
  ["NOT (a = 1 AND b = 2)", { b: "2" }, false],
  ["NOT (a = 1 AND b = 2)", { b: "3" }, true], // unknown AND false is false
  ["1 = a", {}, false], // RocketMQ: a null right side is false, not unknown...
  ["NOT (1 = a)", {}, true], // ...so its NOT is true
  ["1 <> a", {}, true],
  ["a = b", {}, true], // both null: equal in RocketMQ
  ["a <> b", {}, false],
  ["constructor IS NULL", {}, true], // only the message's own properties
  ["A = 1", { a: "1" }, false], // names are case-sensitive, keywords are not
  // IN: string literals only, a property on the left
  ["a IN ('3', '4', '5')", { a: "4" }, true],
  ["a IN ('3', '4', '5')", { a: "6" }, false],
  ["a IN ('3')", {}, false],
  ["a NOT IN ('3', '4')", { a: "6" }, true],
  ["a NOT IN ('3', '4')", { a: "3" }, false],
  ["a NOT IN ('3')", {}, false],
  ["a in ('1','2','3','4','5','6')", { a: "6" }, true],
  // BETWEEN: inclusive; NOT BETWEEN is outside
  ["a BETWEEN 2 AND 10", { a: "2" }, true],
  ["a BETWEEN 2 AND 10", { a: "10" }, true],
  ["a BETWEEN 2 AND 10", { a: "11" }, false],
  ["a BETWEEN 2 AND 10", {}, false],
  ["a BETWEEN 2 AND 10", { a: "abc" }, false],
  ["a NOT BETWEEN 2 AND 10", { a: "11" }, true],
  ["a NOT BETWEEN 2 AND 10", { a: "5" }, false],
  ["a NOT BETWEEN 2 AND 10", {}, false],
  ["a BETWEEN 1.5 AND 2", { a: "1.75" }, false], // "1.75" <= 2 compares as a long: a mismatch
  ["a BETWEEN 1.5 AND 2.0", { a: "1.75" }, true],
  ["a between up and low", { a: "3", up: "1", low: "5" }, true],
  // CONTAINS, STARTSWITH, ENDSWITH: false (not unknown) without the property, and for ''
  ["a CONTAINS 'x'", { a: "axb" }, true],
  ["a STARTSWITH 'ax'", { a: "axb" }, true],
  ["a ENDSWITH 'xb'", { a: "axb" }, true],
  ["a CONTAINS 'u'", { a: "axb" }, false],
  ["a NOT CONTAINS 'x'", { a: "axb" }, false],
  ["a NOT STARTSWITH 'x'", { a: "abb" }, true],
  ["a NOT ENDSWITH 'x'", { a: "abb" }, true],
  ["a CONTAINS ''", { a: "axb" }, false],
  ["a NOT CONTAINS ''", { a: "axb" }, false],
  ["a CONTAINS 'x'", {}, false],
  ["a NOT CONTAINS 'x'", {}, false],
  ["NOT (a CONTAINS 'x')", {}, true],
  ["'axb' CONTAINS 'x'", {}, true],
  ["' ' STARTSWITH ' '", {}, true],
  ["'s' ENDSWITH '\\'", {}, false],
  ["a CONTAINS 'x' CONTAINS 'y'", { a: "x" }, false], // of a boolean: false
  // precedence: OR < AND < =,<>,IS < ordering, BETWEEN, IN, CONTAINS < unary
  ["a = 1 OR b = 2 AND c = 3", { a: "1" }, true],
  ["a = 1 OR b = 2 AND c = 3", { b: "2" }, false],
  ["a = 1 OR b = 2 AND c = 3", { b: "2", c: "3" }, true],
  ["(a = 1 OR b = 2) AND c = 3", { a: "1" }, false],
  ["NOT a = 1", { a: "1" }, false], // (NOT a) = 1: a boolean is never equal to a number
  ["NOT a = 1", { a: "2" }, false],
  ["NOT (a = 1)", { a: "2" }, true],
  ["NOT NOT (a = 1)", { a: "1" }, true],
  ["a > 1 = TRUE", { a: "2" }, true], // ordering binds tighter than =
  ["a = 3 and b <> 4 And c > 5 AND d <= 4", { a: "3", b: "5", c: "6", d: "1" }, true],
  ["a = 3 and b <> 4 And c > 5 AND d <= 4", { a: "4", b: "5", c: "6", d: "1" }, false],
  ["a=3 or b<>4 Or c>5 OR d<=4", { a: "4", b: "4", c: "3", d: "2" }, true],
  ["a=3 or b<>4 Or c>5 OR d<=4", { a: "4", b: "4", c: "3", d: "10" }, false],
  ["a not in ('4', '4', '5') and b between 3 and 10 and c not contains 'axbc'", { a: "3", b: "3", c: "axbdc" }, true],
  // a type mismatch ends the evaluation, even inside OR: only a decision reached before it stands
  ["a > 5", { a: "abc" }, false],
  ["NOT (a > 5)", { a: "abc" }, false],
  ["a > 5 OR b = 'x'", { a: "abc", b: "x" }, false],
  ["b = 'x' OR a > 5", { a: "abc", b: "x" }, true],
  ["b = 'y' AND a > 5", { a: "abc", b: "x" }, false],
  // lexical: comments, blanks, the end
  ["a = 1 -- why: a comment to the end", { a: "1" }, true],
  ["/* first */ a = 1 /* and last */", { a: "1" }, true],
  ["\ta\n=\r\n1\f", { a: "1" }, true],
  ["$a_1 = 1", { $a_1: "1" }, true],
];

const ofProps = (properties: Props): FilterableMessage => ({ properties });

describe("SQL92 filter: RocketMQ's answers", () => {
  it("delivers exactly what RocketMQ's evaluator delivers", () => {
    for (const [expression, props, expected] of CASES) {
      const filter = compileFilter({ type: "SQL92", expression });
      assert.equal(filter.matches(ofProps(props)), expected, `${expression} over ${JSON.stringify(props)}`);
    }
  });

  it("exposes the tag as TAGS and the keys as KEYS, as RocketMQ's stored properties do", () => {
    const sql = (expression: string) => compileFilter({ type: "SQL92", expression });
    assert.equal(sql("TAGS = 'TagA'").matches({ tags: "TagA", properties: {} }), true);
    assert.equal(sql("TAGS = 'TagA'").matches({ tags: "", properties: {} }), false);
    assert.equal(sql("TAGS IS NULL").matches({ tags: "", properties: {} }), true);
    assert.equal(sql("TAGS is not null and TAGS='''''tag'''''").matches({ tags: "''tag''", properties: {} }), true);
    assert.equal(sql("KEYS = 'k1 k2'").matches({ keys: ["k1", "k2"], properties: {} }), true);
    assert.equal(sql("KEYS CONTAINS 'k2'").matches({ keys: ["k1", "k2"], properties: {} }), true);
    assert.equal(sql("KEYS IS NULL").matches({ keys: [], properties: {} }), true);
  });

  it("compiles once: the same expression gives the same filter", () => {
    const a = compileFilter({ type: "SQL92", expression: "x = 1" });
    assert.equal(compileFilter({ type: "SQL92", expression: "x = 1" }), a);
    assert.equal(a.type, "SQL92");
    assert.equal(a.expression, "x = 1");
    assert.ok(Object.isFrozen(a));
  });
});

/** [expression, the message refused with] */
const BAD: [string, string][] = [
  ["", "SQL92 filter: empty expression"],
  ["   ", "SQL92 filter: unexpected end of expression at position 3"],
  ["a >", "SQL92 filter: unexpected end of expression at position 3"],
  ["a and between 2 and 10", "SQL92 filter: unexpected 'BETWEEN' at position 6"],
  ["a between 10 and 0", "SQL92 filter: BETWEEN's first bound is above its second at position 2"],
  ["a > 100000000000000000000000", "SQL92 filter: integer literal out of range at position 4"],
  ["a > 9223372036854775808", "SQL92 filter: integer literal out of range at position 4"],
  ["a > 1e400", "SQL92 filter: decimal literal out of range at position 4"],
  ["a = NULL", "SQL92 filter: NULL cannot be compared with = or <>; use IS NULL at position 2"],
  ["a <> NULL", "SQL92 filter: NULL cannot be compared with = or <>; use IS NULL at position 2"],
  ["a > 'x'", "SQL92 filter: only numbers can be compared with > at position 2"],
  ["a > TRUE", "SQL92 filter: only numbers can be compared with > at position 2"],
  ["a BETWEEN 'a' AND 'b'", "SQL92 filter: only numbers can be compared with >= at position 2"],
  ["(a = 1) > 2", "SQL92 filter: only numbers can be compared with > at position 8"],
  ["a > 1 > 2", "SQL92 filter: only numbers can be compared with > at position 6"],
  ["TRUE = 'x'", "SQL92 filter: TRUE and FALSE can only be compared with a condition at position 5"],
  ["'x' IN ('x')", "SQL92 filter: IN needs a property name on its left at position 4"],
  ["a IN ()", "SQL92 filter: expected a string literal but found ')' at position 6"],
  ["a IN (1, 2)", "SQL92 filter: expected a string literal but found '1' at position 6"],
  ["a IN ('1' '2')", "SQL92 filter: expected ')' but found string '2' at position 10"],
  ["a CONTAINS x", "SQL92 filter: expected a string literal but found 'x' at position 11"],
  ["a NOT CONTAINS 123", "SQL92 filter: expected a string literal but found '123' at position 15"],
  ["1", "SQL92 filter: not a condition (a value where TRUE or FALSE is needed) at position 0"],
  ["'abc'", "SQL92 filter: not a condition (a value where TRUE or FALSE is needed) at position 0"],
  ["-a", "SQL92 filter: not a condition (a value where TRUE or FALSE is needed) at position 0"],
  ["a = 1 AND 5", "SQL92 filter: not a condition (a value where TRUE or FALSE is needed) at position 10"],
  ["NOT 'x'", "SQL92 filter: not a condition (a value where TRUE or FALSE is needed) at position 4"],
  ["a = 1 b", "SQL92 filter: unexpected 'b' at position 6"],
  ["a = 1 )", "SQL92 filter: unexpected ')' at position 6"],
  ["(a = 1", "SQL92 filter: expected ')' but found end of expression at position 6"],
  ["a == 1", "SQL92 filter: unexpected '=' at position 3"],
  ["a != 1", "SQL92 filter: unexpected character '!' at position 2"],
  ["a = 012", "SQL92 filter: unexpected '12' at position 5"],
  ["a IS 1", "SQL92 filter: expected NULL but found '1' at position 5"],
  ["a = 'abc", "SQL92 filter: unterminated string literal at position 4"],
  ["a = 1 /* no end", "SQL92 filter: unterminated comment at position 6"],
  ["\u00e9 = 1", "SQL92 filter: unexpected character U+00E9 at position 0"],
  ["a = 1\u0000", "SQL92 filter: unexpected character U+0000 at position 5"],
];

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    assert.ok(isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL), String(err));
    return err.message;
  }
  assert.fail("expected PARAMETER_ILLEGAL");
}

describe("SQL92 filter: bad expressions", () => {
  it("are refused with PARAMETER_ILLEGAL naming the position", () => {
    for (const [expression, message] of BAD) {
      assert.equal(
        refusal(() => compileFilter({ type: "SQL92", expression })),
        message,
        expression,
      );
    }
  });

  it("keep the message short whatever the token", () => {
    const long = `a = 1 '${"x".repeat(3000)}'`;
    const message = refusal(() => compileFilter({ type: "SQL92", expression: long }));
    assert.ok(message.length < 120, message);
    assert.match(message, /unexpected string 'x{24}\.\.\.' at position 6/);
  });
});

describe("SQL92 filter: bounds", () => {
  it("refuses a 100,000-character expression by its length, before reading it", () => {
    const huge = "a = 1 OR ".repeat(11_111).concat("a = 1");
    assert.ok(huge.length > 100_000);
    assert.equal(
      refusal(() => compileFilter({ type: "SQL92", expression: huge })),
      `filter expression longer than ${MAX_FILTER_EXPRESSION_LENGTH} characters`,
    );
    // The same bound holds for a tag expression.
    assert.match(
      refusal(() => compileFilter({ type: "TAG", expression: "x".repeat(5000) })),
      /longer than 4096/,
    );
  });

  it("accepts an expression of exactly the maximum length, a flat OR of hundreds of terms", () => {
    let expression = "a = 1";
    while (expression.length + 9 <= MAX_FILTER_EXPRESSION_LENGTH) expression += " OR a = 1";
    expression = expression.padEnd(MAX_FILTER_EXPRESSION_LENGTH, " ");
    assert.equal(expression.length, MAX_FILTER_EXPRESSION_LENGTH);
    assert.equal(compileFilter({ type: "SQL92", expression }).matches(ofProps({ a: "1" })), true);
  });

  it("refuses deep nesting at the first level too many, however it nests", () => {
    const deep = (n: number) => `${"(".repeat(n)}a = 1${")".repeat(n)}`;
    assert.equal(
      compileFilter({ type: "SQL92", expression: deep(MAX_FILTER_NESTING) }).matches(ofProps({ a: "1" })),
      true,
    );
    const nested: [string, RegExp][] = [
      [deep(MAX_FILTER_NESTING + 1), /nesting deeper than 64 at position 64$/],
      [deep(2000), /nesting deeper than 64 at position 64$/],
      [`${"NOT ".repeat(1000)}a`, /nesting deeper than 64/],
      [`${"- ".repeat(1000)}a > 1`, /nesting deeper than 64/],
      [`${"+".repeat(1000)}1 = 1`, /nesting deeper than 64/],
      [`a = 1${" = TRUE".repeat(100)}`, /nesting deeper than 64/],
      [`${"(".repeat(4000)}`, /nesting deeper than 64/],
    ];
    for (const [expression, pattern] of nested) {
      assert.ok(expression.length <= MAX_FILTER_EXPRESSION_LENGTH, `${expression.length}`);
      assert.match(
        refusal(() => compileFilter({ type: "SQL92", expression })),
        pattern,
      );
    }
  });
});

describe("TAG filter", () => {
  const tag = (expression: string, tags: string) =>
    compileFilter({ type: "TAG", expression }).matches({ tags, properties: {} });

  it("is RocketMQ's tag expression, as lib/core/subscription.ts reads it", () => {
    assert.equal(tag("*", ""), true);
    assert.equal(tag("", "TagA"), true);
    assert.equal(tag("TagA || TagB", "TagB"), true);
    assert.equal(tag("TagA || TagB", "TagC"), false);
    assert.equal(tag("TagA", ""), false);
    assert.equal(
      refusal(() => compileFilter({ type: "TAG", expression: "||" })),
      "subString split error",
    );
  });

  it("refuses an unknown expression type", () => {
    const bad = { type: "XPATH", expression: "*" } as unknown as Parameters<typeof compileFilter>[0];
    assert.equal(
      refusal(() => compileFilter(bad)),
      "filter type must be TAG or SQL92",
    );
  });
});
