/**
 * @module Message filters, RocketMQ's two expression types (`ExpressionType.TAG`, `ExpressionType.SQL92`):
 * a tag expression (`*`, `TagA || TagB`, as lib/core/subscription.ts parses it) or a SQL92 condition over a
 * message's properties (`MessageSelector.bySql("a > 5 AND region IN ('eu', 'us')")`), compiled once and then
 * matched against each message. docs/filters.md has the grammar, RocketMQ's rules and the bounds.
 *
 * @example
 * const filter = compileFilter({ type: "SQL92", expression: "amount > 100 AND TAGS = 'order'" });
 * filter.matches({ tags: "order", properties: { amount: "250" } }); // true
 * filter.matches({ tags: "order", properties: {} }); // false: a missing property is unknown, never true
 */
import { BoundedMap } from "../bounded-map.js";
import { ErrorCode, NimbusError } from "../errors.js";
import { MessageConst } from "../message.js";
import { matchesTag, parseSubExpression } from "../subscription.js";
import type { Sql92Node } from "./sql92-ast.js";
import { sql92Matches } from "./sql92-evaluate.js";
import { MAX_FILTER_NESTING, parseSql92 } from "./sql92-parser.js";
import { Sql92SyntaxError } from "./sql92-tokens.js";

export { MAX_FILTER_NESTING };

/** RocketMQ's `ExpressionType` names. */
export type FilterType = "TAG" | "SQL92";
export const FILTER_TYPES: readonly FilterType[] = ["TAG", "SQL92"];

export interface FilterExpression {
  type: FilterType;
  expression: string;
}

/** What a filter looks at: the tag ("" or undefined for none), the keys, and the properties the message carries. */
export interface FilterableMessage {
  tags?: string | undefined;
  keys?: readonly string[] | undefined;
  properties: Readonly<Record<string, string>>;
}

export interface MessageFilter {
  readonly type: FilterType;
  readonly expression: string;
  /** A TAG `*` (or empty) expression: every message matches, so a reader may skip the filter. */
  readonly matchesEverything: boolean;
  /**
   * RocketMQ's rules: TAG `*` or `a || b` against the message's tag; SQL92 over the message's properties,
   * where `TAGS` is the tag and `KEYS` the keys joined by a space, as RocketMQ's stored properties have them.
   */
  matches(message: FilterableMessage): boolean;
}

/** The longest expression accepted, in UTF-16 characters (the same as a tag subscription's bound). */
export const MAX_FILTER_EXPRESSION_LENGTH = 4096;

/** Compiled filters kept for reuse: a pull compiles its subscription's expression on every request. */
const CACHE_SIZE = 128;
const cache = new BoundedMap<string, MessageFilter>(CACHE_SIZE);

/**
 * Parses once; a bad expression throws `NimbusError(PARAMETER_ILLEGAL)` with a short message that names the
 * position (0-based) where it went wrong. Cost is linear in the expression's length, and an expression
 * longer than `MAX_FILTER_EXPRESSION_LENGTH` is refused before it is read.
 *
 * @example
 * compileFilter({ type: "TAG", expression: "TagA || TagB" }).matches({ tags: "TagB", properties: {} }); // true
 * compileFilter({ type: "SQL92", expression: "a >" }); // throws PARAMETER_ILLEGAL "SQL92 filter: unexpected end of expression at position 3"
 */
export function compileFilter(filter: FilterExpression): MessageFilter {
  const { type, expression } = filter;
  if (type !== "TAG" && type !== "SQL92") {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "filter type must be TAG or SQL92");
  }
  if (typeof expression !== "string" || expression.length > MAX_FILTER_EXPRESSION_LENGTH) {
    throw new NimbusError(
      ErrorCode.PARAMETER_ILLEGAL,
      `filter expression longer than ${MAX_FILTER_EXPRESSION_LENGTH} characters`,
    );
  }
  const key = `${type}:${expression}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const compiled = type === "TAG" ? compileTag(expression) : compileSql92(expression);
  cache.set(key, compiled);
  return compiled;
}

function compileTag(expression: string): MessageFilter {
  const subscription = parseSubExpression(expression);
  return Object.freeze({
    type: "TAG" as const,
    expression,
    matchesEverything: subscription.all,
    matches: (message: FilterableMessage) => matchesTag(subscription, message.tags),
  });
}

function compileSql92(expression: string): MessageFilter {
  // RocketMQ's FilterAPI.build refuses an empty SQL92 expression ("Expression can't be null").
  if (expression.length === 0) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "SQL92 filter: empty expression");
  let tree: Sql92Node;
  try {
    tree = parseSql92(expression);
  } catch (err) {
    if (!(err instanceof Sql92SyntaxError)) throw err;
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `SQL92 filter: ${err.message} at position ${err.position}`);
  }
  return Object.freeze({
    type: "SQL92" as const,
    expression,
    matchesEverything: false,
    matches: (message: FilterableMessage) => sql92Matches(tree, (name) => propertyOf(message, name)),
  });
}

/** A property as RocketMQ's stored message has it: user and system properties, plus `TAGS` and `KEYS`. */
function propertyOf(message: FilterableMessage, name: string): string | undefined {
  if (name === MessageConst.TAGS && message.tags) return message.tags;
  if (name === MessageConst.KEYS && message.keys !== undefined && message.keys.length > 0) {
    return message.keys.join(MessageConst.KEY_SEPARATOR);
  }
  // Own properties only: a name such as `constructor` must not read Object.prototype.
  return Object.hasOwn(message.properties, name) ? message.properties[name] : undefined;
}
