/**
 * @module RocketMQ's tag subscription expressions (`FilterAPI.buildSubscriptionData`, `SubscriptionData`):
 * `*` for every message, or tags joined by `||`. The broker compares a message's tag with the subscribed
 * tag strings themselves (RocketMQ's broker compares hash codes first; with the tags at hand, Nimbus needs
 * no such pre-filter, and a hash collision can never deliver a wrong tag). `javaStringHashCode` stays for
 * the producer's hash queue selector.
 */
import { ErrorCode, NimbusError } from "./errors.js";

/** RocketMQ's `SubscriptionData.SUB_ALL`. */
export const SUB_ALL = "*";

/** A parsed tag expression. `tagsSet` is empty when `all` is true. */
export interface TagSubscription {
  /** The expression as given, or "*" when it subscribes to everything. */
  subString: string;
  tagsSet: Set<string>;
  all: boolean;
}

/**
 * Java's `String.hashCode()`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16 code units, as a signed 32-bit
 * int, as RocketMQ's SelectMessageQueueByHash uses it.
 *
 * @example
 * javaStringHashCode("TagA"); // 2598919
 */
export function javaStringHashCode(value: string): number {
  let hash = 0;
  for (let i = 0; i < value.length; i++) hash = (Math.imul(hash, 31) + value.charCodeAt(i)) | 0;
  return hash;
}

/** Java's `String.trim()`: strips code units up to U+0020 only, not every Unicode space as JS `trim` does. */
export function javaTrim(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && value.charCodeAt(start) <= 0x20) start++;
  while (end > start && value.charCodeAt(end - 1) <= 0x20) end--;
  return value.slice(start, end);
}

/**
 * Parses a tag expression as RocketMQ's FilterAPI does. Undefined, "" and "*" subscribe to everything.
 * Otherwise the expression is split on `||` (Java's `split`, which drops trailing empty parts), each part
 * trimmed, and empty parts dropped.
 *
 * Two corner cases follow Java: an expression of only `||` separators (`"||"`, `"||||"`) splits into
 * nothing and throws `PARAMETER_ILLEGAL` "subString split error"; one with blanks between or around the
 * separators (`" || "`, `" "`) parses to no tags at all and so matches no message.
 *
 * @example
 * parseSubExpression("TagA || TagB").tagsSet; // Set { "TagA", "TagB" }
 * parseSubExpression(undefined).all; // true
 */
export function parseSubExpression(expr: string | undefined | null): TagSubscription {
  if (expr === undefined || expr === null || expr === "" || expr === SUB_ALL) {
    return { subString: SUB_ALL, tagsSet: new Set(), all: true };
  }
  const parts = expr.split("||");
  while (parts.length > 0 && parts[parts.length - 1] === "") parts.pop();
  if (parts.length === 0) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "subString split error");
  const tagsSet = new Set<string>();
  for (const part of parts) {
    const tag = javaTrim(part);
    if (tag.length === 0) continue;
    tagsSet.add(tag);
  }
  return { subString: expr, tagsSet, all: false };
}

/**
 * True when a message with `tags` ("" for none) is delivered to `sub`: every message for `*`, otherwise
 * only a message whose tag is one of the subscribed tags. A message without tags matches only `*`.
 *
 * @example
 * matchesTag(parseSubExpression("TagA || TagB"), "TagB"); // true
 * matchesTag(parseSubExpression("TagA"), ""); // false
 */
export function matchesTag(sub: TagSubscription, tags: string | undefined | null): boolean {
  if (sub.all) return true;
  if (tags === undefined || tags === null || tags === "") return false;
  return sub.tagsSet.has(tags);
}
