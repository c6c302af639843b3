/**
 * @module The filter of a POP receive, in the shape `compileFilter` (lib/core/filter, branch sql92) gives:
 * `{type, expression}` compiled once per receive into a `matches(message)`. Until the SQL92 filters land,
 * TAG expressions use RocketMQ's tag rules (lib/core/subscription) and SQL92 is refused as not supported.
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { matchesTag, parseSubExpression } from "../../core/subscription.js";
import { MAX_FILTER_EXPRESSION_LENGTH } from "../../protocol/index.js";

export type FilterType = "TAG" | "SQL92";
export interface FilterExpression {
  type: FilterType;
  expression: string;
}

export interface MessageFilter {
  readonly type: FilterType;
  readonly expression: string;
  /** True when every message matches (no need to look). */
  readonly all: boolean;
  matches(message: { tags?: string | undefined; properties: Readonly<Record<string, string>> }): boolean;
}

/** Compiles a filter once; a bad or unsupported expression is PARAMETER_ILLEGAL. */
export function compilePopFilter(filter: FilterExpression): MessageFilter {
  if (filter.expression.length > MAX_FILTER_EXPRESSION_LENGTH) {
    throw new NimbusError(
      ErrorCode.PARAMETER_ILLEGAL,
      `a filter expression is at most ${MAX_FILTER_EXPRESSION_LENGTH} characters`,
    );
  }
  if (filter.type !== "TAG") {
    throw new NimbusError(
      ErrorCode.PARAMETER_ILLEGAL,
      `filter type ${String(filter.type).slice(0, 16)} is not supported yet`,
    );
  }
  const sub = parseSubExpression(filter.expression);
  return {
    type: filter.type,
    expression: filter.expression,
    all: sub.all,
    matches: (m) => sub.all || matchesTag(sub, m.tags),
  };
}
