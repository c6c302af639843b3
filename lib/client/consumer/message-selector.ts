/**
 * @module RocketMQ's `MessageSelector`: what a consumer subscribes a topic with, a tag expression or a SQL92
 * condition over message properties (docs/filters.md). `subscribe(topic, selector)` compiles it at once, so
 * a bad expression throws PARAMETER_ILLEGAL there and never reaches the broker; the broker checks it again
 * with each heartbeat and pull (400).
 *
 * @example
 * consumer.subscribe("Orders", MessageSelector.bySql("amount > 100 AND region IN ('eu', 'us')"));
 * consumer.subscribe("Audit", MessageSelector.byTag("TagA || TagB")); // the same as subscribe("Audit", "TagA || TagB")
 */
import { compileFilter, type FilterExpression, type FilterType, type MessageFilter } from "../../core/filter/index.js";

export class MessageSelector implements FilterExpression {
  private constructor(
    readonly type: FilterType,
    readonly expression: string,
  ) {}

  /** A SQL92 condition over the message's properties (and `TAGS`, `KEYS`), e.g. `a > 5 AND b = 'x'`. */
  static bySql(sql: string): MessageSelector {
    return new MessageSelector("SQL92", sql);
  }

  /** A tag expression: `*` (or empty) for every message, or tags joined by `||`. */
  static byTag(tag: string): MessageSelector {
    return new MessageSelector("TAG", tag);
  }

  /** RocketMQ's name: "TAG" or "SQL92". */
  getExpressionType(): FilterType {
    return this.type;
  }

  getExpression(): string {
    return this.expression;
  }
}

/** What `subscribe` takes: a selector, or a tag expression as a string (RocketMQ's `subscribe(topic, subExpression)`). */
export type Subscription = string | MessageSelector;

/** Compiles a subscription (PARAMETER_ILLEGAL when it is bad); a string is a tag expression. */
export function compileSubscription(subscription: Subscription): MessageFilter {
  return typeof subscription === "string"
    ? compileFilter({ type: "TAG", expression: subscription })
    : compileFilter({ type: subscription.type, expression: subscription.expression });
}

/** The filter of every message, as a retry topic or an assigned queue is read. */
export const EVERY_MESSAGE: MessageFilter = compileFilter({ type: "TAG", expression: "*" });

/** A filter as a pull request carries it: `expressionType` only when it is not TAG. */
export function pullFilterFields(filter: FilterExpression): { subExpression: string; expressionType?: "SQL92" } {
  return {
    subExpression: filter.expression,
    ...(filter.type === "SQL92" ? { expressionType: "SQL92" as const } : {}),
  };
}

/** A subscription as a heartbeat announces it: `expressionType` only when it is not TAG (RocketMQ's default). */
export function subscriptionData(
  topic: string,
  filter: FilterExpression,
): { topic: string; subString: string; expressionType?: "SQL92" } {
  return {
    topic,
    subString: filter.expression,
    ...(filter.type === "SQL92" ? { expressionType: "SQL92" as const } : {}),
  };
}
