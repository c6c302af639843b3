/**
 * @module Evaluates a compiled SQL92 filter over a message's properties with RocketMQ's three-valued logic:
 * each condition is true, false or unknown (`null`), and a message is delivered only when the whole
 * expression is true. A comparison with a missing property is unknown, NOT of unknown is unknown, `unknown
 * AND false` is false, `unknown OR true` is true. A type mismatch (a property that does not parse as the
 * number it is compared with) ends the evaluation: the message is not delivered (RocketMQ's broker logs the
 * exception and answers no match). The recursion is bounded by the tree's height (`MAX_FILTER_NESTING`).
 */
import type { Sql92Node, Sql92Value } from "./sql92-ast.js";
import { compareSql92Values, javaDouble, javaDoubleCompare, Sql92TypeMismatch } from "./sql92-compare.js";

/** Looks up a property by name; `undefined` when the message has none. */
export type PropertyLookup = (name: string) => string | undefined;

/** True when the expression is true for the message; false when false, unknown, or a type mismatch. */
export function sql92Matches(tree: Sql92Node, lookup: PropertyLookup): boolean {
  try {
    return evaluate(tree, lookup) === true;
  } catch (err) {
    if (err instanceof Sql92TypeMismatch) return false;
    throw err;
  }
}

/** The value of a node: a boolean, null (unknown or NULL), or a literal's or property's value. */
export function evaluate(tree: Sql92Node, lookup: PropertyLookup): Sql92Value {
  switch (tree.op) {
    case "literal":
      return tree.value;
    case "property":
      return lookup(tree.name) ?? null;
    case "negate": {
      const value = evaluate(tree.operand, lookup);
      if (typeof value === "bigint") return BigInt.asIntN(64, -value);
      return typeof value === "number" ? -value : null;
    }
    case "not": {
      const value = evaluate(tree.operand, lookup);
      return value === null ? null : !value;
    }
    case "cast": {
      // RocketMQ's boolean cast: a property is a string, never a Boolean, so a present one is false.
      const value = evaluate(tree.operand, lookup);
      return value === null ? null : value === true;
    }
    case "and":
    case "or":
      return evaluateLogic(tree.op, tree.operands, lookup);
    case "compare":
      return tree.comparison === "="
        ? evaluateEqual(evaluate(tree.left, lookup), evaluate(tree.right, lookup))
        : evaluateOrdering(tree.comparison, tree.left, tree.right, lookup);
    case "isNull":
      return evaluate(tree.operand, lookup) === null;
    case "in": {
      const value = evaluate(tree.operand, lookup);
      if (typeof value !== "string") return null;
      return tree.values.has(value) !== tree.negated;
    }
    case "text": {
      // RocketMQ answers false, not unknown, for a missing or non-string value and for an empty search
      // string, with or without NOT: so `NOT (a CONTAINS 'x')` matches a message without `a`.
      if (tree.search.length === 0) return false;
      const value = evaluate(tree.operand, lookup);
      if (typeof value !== "string") return false;
      const found =
        tree.test === "CONTAINS"
          ? value.includes(tree.search)
          : tree.test === "STARTSWITH"
            ? value.startsWith(tree.search)
            : value.endsWith(tree.search);
      return found !== tree.negated;
    }
  }
}

/** AND stops at the first false, OR at the first true; otherwise unknown if any operand was unknown. */
function evaluateLogic(op: "and" | "or", operands: readonly Sql92Node[], lookup: PropertyLookup): boolean | null {
  const decisive = op === "or";
  let unknown = false;
  for (const operand of operands) {
    const value = evaluate(operand, lookup);
    if (value === decisive) return decisive;
    if (value === null) unknown = true;
  }
  return unknown ? null : !decisive;
}

/**
 * RocketMQ's `=`: both null is true; a null left side is unknown, a null right side false (so `a = 1` with
 * `a` missing is unknown, but `1 = a` is false); equal values are true; otherwise the values are compared.
 */
function evaluateEqual(left: Sql92Value, right: Sql92Value): boolean | null {
  if (left === null || right === null) {
    if (left === null && right === null) return true;
    return left === null ? null : false;
  }
  if (typeof left === typeof right && typeof left !== "number" && left === right) return true;
  return compareSql92Values(left, right) === 0;
}

/** `<`, `<=`, `>`, `>=`: unknown if either side is null; two strings compare as Java doubles or mismatch. */
function evaluateOrdering(
  comparison: "<" | "<=" | ">" | ">=",
  leftNode: Sql92Node,
  rightNode: Sql92Node,
  lookup: PropertyLookup,
): boolean | null {
  const left = evaluate(leftNode, lookup);
  if (left === null) return null;
  const right = evaluate(rightNode, lookup);
  if (right === null) return null;
  const order =
    typeof left === "string" && typeof right === "string"
      ? javaDoubleCompare(javaDouble(left), javaDouble(right))
      : compareSql92Values(left, right);
  switch (comparison) {
    case "<":
      return order < 0;
    case "<=":
      return order <= 0;
    case ">":
      return order > 0;
    case ">=":
      return order >= 0;
  }
}
