/**
 * @module A recursive-descent parser of RocketMQ's SQL92 filter grammar (`SelectorParser.jj`), with its
 * parse-time checks. Precedence, loosest first: `OR`; `AND`; `=`, `<>`, `IS [NOT] NULL`; `<`, `<=`, `>`, `>=`,
 * `[NOT] BETWEEN`, `[NOT] IN`, `[NOT] CONTAINS|STARTSWITH|ENDSWITH`; unary `+`, `-`, `NOT`; literals, names
 * and parentheses. As in RocketMQ, `NOT` binds tighter than a comparison: `NOT a = 1` is `(NOT a) = 1`.
 *
 * Bounded: the recursion (parentheses, `NOT`, signs) and the tree's height (which also grows with chained
 * comparisons such as `a = 1 = TRUE`) are both capped at `MAX_FILTER_NESTING`, so neither the parser nor the
 * evaluator recurses deeper than that whatever the input; `AND`/`OR` chains are flat lists, not nested nodes.
 */

import {
  isBooleanNode,
  type Sql92Comparison,
  type Sql92Node,
  type Sql92TextTest,
  type Sql92Value,
} from "./sql92-ast.js";
import { compareSql92Values } from "./sql92-compare.js";
import { Sql92SyntaxError, type Sql92Token, tokenizeSql92 } from "./sql92-tokens.js";

/** The deepest nesting a filter may have: parentheses, `NOT`s and signs within each other, or chained comparisons. */
export const MAX_FILTER_NESTING = 64;

const LONG_MAX = 0x7fffffffffffffffn;
const TEXT_TESTS: ReadonlySet<string> = new Set(["CONTAINS", "STARTSWITH", "ENDSWITH"]);
const ORDERINGS: ReadonlySet<string> = new Set(["<", "<=", ">", ">="]);

/** Parses a whole SQL92 filter expression into a boolean tree; throws `Sql92SyntaxError`. */
export function parseSql92(text: string): Sql92Node {
  return new Sql92Parser(tokenizeSql92(text)).parseAll();
}

type Sql92NodeFields = Sql92Node extends infer N ? (N extends Sql92Node ? Omit<N, "height"> : never) : never;

/** A node with its height set; refused when the tree would nest deeper than `MAX_FILTER_NESTING`. */
function node(fields: Sql92NodeFields, children: Sql92Node[], position: number): Sql92Node {
  let height = 1;
  for (const child of children) height = Math.max(height, child.height + 1);
  if (height > MAX_FILTER_NESTING) throw new Sql92SyntaxError(`nesting deeper than ${MAX_FILTER_NESTING}`, position);
  // The fields object is new and owned here: setting its height in place spares a copy per node.
  return Object.assign(fields, { height });
}

class Sql92Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Sql92Token[]) {}

  parseAll(): Sql92Node {
    const start = this.peek().position;
    const tree = this.asCondition(this.parseOr(), start);
    const rest = this.peek();
    if (rest.kind !== "end") throw new Sql92SyntaxError(`unexpected ${describe(rest)}`, rest.position);
    return tree;
  }

  private peek(ahead = 0): Sql92Token {
    // The token list always ends with an `end` token, which the parser never steps past.
    return this.tokens[Math.min(this.index + ahead, this.tokens.length - 1)] as Sql92Token;
  }

  private next(): Sql92Token {
    const token = this.peek();
    if (token.kind !== "end") this.index++;
    return token;
  }

  private isKeyword(word: string, ahead = 0): boolean {
    const token = this.peek(ahead);
    return token.kind === "keyword" && token.text === word;
  }

  private isSymbol(symbol: string, ahead = 0): boolean {
    const token = this.peek(ahead);
    return token.kind === "symbol" && token.text === symbol;
  }

  private expectSymbol(symbol: string): void {
    const token = this.next();
    if (token.kind !== "symbol" || token.text !== symbol) {
      throw new Sql92SyntaxError(`expected '${symbol}' but found ${describe(token)}`, token.position);
    }
  }

  private expectKeyword(word: string): void {
    const token = this.next();
    if (token.kind !== "keyword" || token.text !== word) {
      throw new Sql92SyntaxError(`expected ${word} but found ${describe(token)}`, token.position);
    }
  }

  /** RocketMQ's `asBooleanExpression`: a condition as it is, a bare property cast, anything else refused. */
  private asCondition(operand: Sql92Node, position: number): Sql92Node {
    if (isBooleanNode(operand)) return operand;
    if (operand.op === "property") return node({ op: "cast", operand }, [operand], position);
    throw new Sql92SyntaxError("not a condition (a value where TRUE or FALSE is needed)", position);
  }

  private parseLogic(op: "and" | "or", parseOperand: () => Sql92Node): Sql92Node {
    const start = this.peek().position;
    const first = parseOperand();
    const keyword = op === "and" ? "AND" : "OR";
    if (!this.isKeyword(keyword)) return first;
    const operands = [this.asCondition(first, start)];
    while (this.isKeyword(keyword)) {
      this.next();
      const position = this.peek().position;
      operands.push(this.asCondition(parseOperand(), position));
    }
    return node({ op, operands }, operands, start);
  }

  private parseOr(): Sql92Node {
    return this.parseLogic("or", () => this.parseAnd());
  }

  private parseAnd(): Sql92Node {
    return this.parseLogic("and", () => this.parseEquality());
  }

  private parseEquality(): Sql92Node {
    let left = this.parseComparison();
    for (;;) {
      const token = this.peek();
      if (this.isSymbol("=") || this.isSymbol("<>")) {
        this.next();
        const right = this.parseComparison();
        checkEqualOperands(left, right, token.position);
        const equal = node({ op: "compare", comparison: "=", left, right }, [left, right], token.position);
        left = token.text === "=" ? equal : node({ op: "not", operand: equal }, [equal], token.position);
      } else if (this.isKeyword("IS")) {
        this.next();
        const negated = this.isKeyword("NOT");
        if (negated) this.next();
        this.expectKeyword("NULL");
        const isNull = node({ op: "isNull", operand: left }, [left], token.position);
        left = negated ? node({ op: "not", operand: isNull }, [isNull], token.position) : isNull;
      } else {
        return left;
      }
    }
  }

  private parseComparison(): Sql92Node {
    let left = this.parseUnary();
    for (;;) {
      const token = this.peek();
      const negated = this.isKeyword("NOT") && this.peek(1).kind === "keyword";
      const word = this.peek(negated ? 1 : 0);
      if (token.kind === "symbol" && ORDERINGS.has(token.text)) {
        this.next();
        left = this.ordering(token.text as Sql92Comparison, left, this.parseUnary(), token.position);
      } else if (word.kind === "keyword" && TEXT_TESTS.has(word.text)) {
        this.index += negated ? 2 : 1;
        const search = this.expectString();
        const test = word.text as Sql92TextTest;
        left = node({ op: "text", test, operand: left, search, negated }, [left], token.position);
      } else if (word.kind === "keyword" && word.text === "BETWEEN") {
        this.index += negated ? 2 : 1;
        left = this.between(left, negated, token.position);
      } else if (word.kind === "keyword" && word.text === "IN") {
        this.index += negated ? 2 : 1;
        left = this.inList(left, negated, token.position);
      } else {
        return left;
      }
    }
  }

  private ordering(comparison: Sql92Comparison, left: Sql92Node, right: Sql92Node, position: number): Sql92Node {
    checkOrderedOperand(left, comparison, position);
    checkOrderedOperand(right, comparison, position);
    return node({ op: "compare", comparison, left, right }, [left, right], position);
  }

  /** `v BETWEEN lo AND hi` is `v >= lo AND v <= hi`; `NOT BETWEEN` is `v < lo OR v > hi` (RocketMQ's rewriting). */
  private between(value: Sql92Node, negated: boolean, position: number): Sql92Node {
    const low = this.parseUnary();
    this.expectKeyword("AND");
    const high = this.parseUnary();
    if (!negated && low.op === "literal" && high.op === "literal" && low.value !== null && high.value !== null) {
      if (safeCompare(high.value, low.value) < 0) {
        throw new Sql92SyntaxError("BETWEEN's first bound is above its second", position);
      }
    }
    const parts = negated
      ? [this.ordering("<", value, low, position), this.ordering(">", value, high, position)]
      : [this.ordering(">=", value, low, position), this.ordering("<=", value, high, position)];
    return node({ op: negated ? "or" : "and", operands: parts }, parts, position);
  }

  /** `name [NOT] IN ('a', 'b')`: only a property on the left, only string literals in the list. */
  private inList(operand: Sql92Node, negated: boolean, position: number): Sql92Node {
    if (operand.op !== "property") throw new Sql92SyntaxError("IN needs a property name on its left", position);
    this.expectSymbol("(");
    const values = new Set<string>([this.expectString()]);
    while (this.isSymbol(",")) {
      this.next();
      values.add(this.expectString());
    }
    this.expectSymbol(")");
    return node({ op: "in", operand, values, negated }, [operand], position);
  }

  private expectString(): string {
    const token = this.next();
    if (token.kind !== "string") {
      throw new Sql92SyntaxError(`expected a string literal but found ${describe(token)}`, token.position);
    }
    return token.text;
  }

  /** Recursion happens here and in parentheses only; both count against `MAX_FILTER_NESTING`. */
  private parseUnary(): Sql92Node {
    const token = this.peek();
    const isSign = this.isSymbol("+") || this.isSymbol("-");
    if (!isSign && !this.isKeyword("NOT")) return this.parsePrimary();
    this.enter(token.position);
    this.next();
    const start = this.peek().position;
    const operand = this.parseUnary();
    this.depth--;
    if (token.text === "+") return operand;
    if (token.text === "NOT") {
      const condition = this.asCondition(operand, start);
      return node({ op: "not", operand: condition }, [condition], token.position);
    }
    return negateNode(operand, token.position);
  }

  private parsePrimary(): Sql92Node {
    const token = this.next();
    switch (token.kind) {
      case "string":
        return { op: "literal", value: token.text, height: 1 };
      case "integer":
        return { op: "literal", value: parseLong(token), height: 1 };
      case "decimal":
        return { op: "literal", value: parseDouble(token), height: 1 };
      case "name":
        return { op: "property", name: token.text, height: 1 };
      case "keyword":
        if (token.text === "TRUE") return { op: "literal", value: true, height: 1 };
        if (token.text === "FALSE") return { op: "literal", value: false, height: 1 };
        if (token.text === "NULL") return { op: "literal", value: null, height: 1 };
        break;
      case "symbol":
        if (token.text === "(") {
          this.enter(token.position);
          const inner = this.parseOr();
          this.expectSymbol(")");
          this.depth--;
          return inner;
        }
        break;
      case "end":
        throw new Sql92SyntaxError("unexpected end of expression", token.position);
    }
    throw new Sql92SyntaxError(`unexpected ${describe(token)}`, token.position);
  }

  private enter(position: number): void {
    if (++this.depth > MAX_FILTER_NESTING)
      throw new Sql92SyntaxError(`nesting deeper than ${MAX_FILTER_NESTING}`, position);
  }
}

/** `-` of a numeric literal folds into the literal; of anything else it stays a node (unknown unless a number). */
function negateNode(operand: Sql92Node, position: number): Sql92Node {
  if (operand.op === "literal" && typeof operand.value === "bigint") return { ...operand, value: -operand.value };
  if (operand.op === "literal" && typeof operand.value === "number") return { ...operand, value: -operand.value };
  return node({ op: "negate", operand }, [operand], position);
}

/** RocketMQ's `checkLessThanOperand`: only numbers, names and unary minus are ordered, never a string, TRUE or NULL. */
function checkOrderedOperand(operand: Sql92Node, comparison: string, position: number): void {
  const literal = operand.op === "literal" && typeof operand.value !== "bigint" && typeof operand.value !== "number";
  if (literal || (operand.op !== "literal" && isBooleanNode(operand))) {
    throw new Sql92SyntaxError(`only numbers can be compared with ${comparison}`, position);
  }
}

const isNullLiteral = (n: Sql92Node): boolean => n.op === "literal" && n.value === null;

/** RocketMQ's `checkEqualOperand` and its compatibility check: no `= NULL` (use IS NULL), no `TRUE = 'x'`. */
function checkEqualOperands(left: Sql92Node, right: Sql92Node, position: number): void {
  if (isNullLiteral(left) || isNullLiteral(right)) {
    throw new Sql92SyntaxError("NULL cannot be compared with = or <>; use IS NULL", position);
  }
  if (
    left.op === "literal" &&
    right.op === "literal" &&
    typeof left.value === "boolean" &&
    typeof right.value !== "boolean"
  ) {
    throw new Sql92SyntaxError("TRUE and FALSE can only be compared with a condition", position);
  }
}

function safeCompare(a: Sql92Value, b: Sql92Value): number {
  try {
    return compareSql92Values(a, b);
  } catch {
    return 0;
  }
}

/** An integer literal is a Java `long`: up to 9223372036854775807 (RocketMQ refuses a larger one). */
function parseLong(token: Sql92Token): bigint {
  const value = BigInt(token.text);
  if (value > LONG_MAX) throw new Sql92SyntaxError("integer literal out of range", token.position);
  return value;
}

/** A decimal literal is a Java `double`; one too large to be finite is refused, as RocketMQ does. */
function parseDouble(token: Sql92Token): number {
  const value = Number(token.text);
  if (!Number.isFinite(value)) throw new Sql92SyntaxError("decimal literal out of range", token.position);
  return value;
}

/** A token for an error message, at most 24 characters of it. */
function describe(token: Sql92Token): string {
  if (token.kind === "end") return "end of expression";
  const text = token.text.length > 24 ? `${token.text.slice(0, 24)}...` : token.text;
  return token.kind === "string" ? `string '${text}'` : `'${text}'`;
}
