/**
 * @module The tree a SQL92 filter expression compiles to, and the values it computes with. Values carry
 * Java's types as RocketMQ's evaluator sees them: a property is a `string` (or `null` when the message has
 * none), an integer literal a `bigint` (Java's `Long`), a decimal literal a `number` (Java's `Double`),
 * `TRUE`/`FALSE` a `boolean`, `NULL` and "unknown" `null`.
 */

export type Sql92Value = string | bigint | number | boolean | null;

export type Sql92Comparison = "=" | "<" | "<=" | ">" | ">=";
export type Sql92TextTest = "CONTAINS" | "STARTSWITH" | "ENDSWITH";

export type Sql92Node =
  | { op: "literal"; value: Sql92Value; height: number }
  | { op: "property"; name: string; height: number }
  | { op: "negate"; operand: Sql92Node; height: number }
  /** Unknown stays unknown; true and false swap. */
  | { op: "not"; operand: Sql92Node; height: number }
  /** A bare property used as a condition (RocketMQ's boolean cast): unknown when missing, else false. */
  | { op: "cast"; operand: Sql92Node; height: number }
  /** Left to right, stopping at the first operand that decides (false for AND, true for OR). */
  | { op: "and" | "or"; operands: Sql92Node[]; height: number }
  | { op: "compare"; comparison: Sql92Comparison; left: Sql92Node; right: Sql92Node; height: number }
  /** `x IS NULL`; `IS NOT NULL` is `not` of it. */
  | { op: "isNull"; operand: Sql92Node; height: number }
  | { op: "in"; operand: Sql92Node; values: ReadonlySet<string>; negated: boolean; height: number }
  | { op: "text"; test: Sql92TextTest; operand: Sql92Node; search: string; negated: boolean; height: number };

/** Nodes whose value is a boolean or unknown: what AND, OR, NOT and the whole expression accept. */
export function isBooleanNode(node: Sql92Node): boolean {
  switch (node.op) {
    case "literal":
      return typeof node.value === "boolean" || node.value === null;
    case "property":
    case "negate":
      return false;
    default:
      return true;
  }
}
