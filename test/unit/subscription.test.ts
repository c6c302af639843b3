import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { javaStringHashCode, matchesTag, parseSubExpression, SUB_ALL } from "../../lib/core/subscription.js";

describe("javaStringHashCode", () => {
  it("equals Java's String.hashCode (values from the JVM)", () => {
    const expected: [string, number][] = [
      ["", 0],
      ["TagA", 2598919],
      ["TagB", 2598920],
      ["*", 42],
      ["a", 97],
      ["Aa", 2112],
      ["BB", 2112],
      ["\u8ba2\u5355", 1129459],
      ["polygenelubricants", -2147483648], // overflows to Integer.MIN_VALUE
      ["\u{1F600}", 1772899], // two UTF-16 code units
    ];
    for (const [value, hash] of expected) assert.equal(javaStringHashCode(value), hash, value);
  });
});

describe("parseSubExpression", () => {
  it("reads undefined, null, empty and * as everything", () => {
    for (const expr of [undefined, null, "", "*"]) {
      const sub = parseSubExpression(expr);
      assert.equal(sub.all, true);
      assert.equal(sub.subString, SUB_ALL);
      assert.equal(sub.tagsSet.size, 0);
    }
  });

  it("splits on ||, trims each tag and drops empty ones", () => {
    const sub = parseSubExpression(" TagA ||TagB||  || TagA ");
    assert.equal(sub.all, false);
    assert.equal(sub.subString, " TagA ||TagB||  || TagA ");
    assert.deepEqual([...sub.tagsSet], ["TagA", "TagB"]);
  });

  it("keeps a lone | inside a tag, as Java's split on \\|\\| does", () => {
    assert.deepEqual([...parseSubExpression("|||").tagsSet], ["|"]);
    assert.deepEqual([...parseSubExpression("a | b").tagsSet], ["a | b"]);
  });

  it("trims only what Java's trim does (code units up to U+0020)", () => {
    assert.deepEqual([...parseSubExpression("\u00a0x\u00a0").tagsSet], ["\u00a0x\u00a0"]);
    assert.deepEqual([...parseSubExpression("\u0001x\t").tagsSet], ["x"]);
  });

  it("throws 'subString split error' on separators only, as RocketMQ's FilterAPI does", () => {
    for (const expr of ["||", "||||"]) {
      assert.throws(
        () => parseSubExpression(expr),
        (err) => isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL) && err.message === "subString split error",
        expr,
      );
    }
  });

  it("parses blanks with separators, or a blank alone, to no tags: nothing matches", () => {
    for (const expr of [" || ", "|| ||", " "]) {
      const sub = parseSubExpression(expr);
      assert.equal(sub.all, false, expr);
      assert.equal(sub.tagsSet.size, 0, expr);
      assert.equal(matchesTag(sub, "TagA"), false, expr);
      assert.equal(matchesTag(sub, ""), false, expr);
    }
  });

  it("treats ' * ' as the tag '*', not as everything (only the exact '*' is)", () => {
    const sub = parseSubExpression(" * ");
    assert.equal(sub.all, false);
    assert.equal(matchesTag(sub, "*"), true);
    assert.equal(matchesTag(sub, "TagA"), false);
  });
});

describe("matchesTag", () => {
  it("matches every message, tagged or not, for *", () => {
    const all = parseSubExpression("*");
    assert.equal(matchesTag(all, "TagA"), true);
    assert.equal(matchesTag(all, ""), true);
    assert.equal(matchesTag(all, undefined), true);
  });

  it("matches a listed tag exactly, never a message without tags", () => {
    const sub = parseSubExpression("TagA || TagB");
    assert.equal(matchesTag(sub, "TagA"), true);
    assert.equal(matchesTag(sub, "TagB"), true);
    assert.equal(matchesTag(sub, "TagC"), false);
    assert.equal(matchesTag(sub, "taga"), false);
    assert.equal(matchesTag(sub, ""), false);
    assert.equal(matchesTag(sub, undefined), false);
  });

  it("tells apart tags whose hash codes collide", () => {
    const sub = parseSubExpression("Aa");
    assert.equal(javaStringHashCode("Aa"), javaStringHashCode("BB"));
    assert.equal(matchesTag(sub, "BB"), false);
    assert.equal(matchesTag(sub, "Aa"), true);
  });
});
