/**
 * @module RocketMQ's `MessageQueueSelector` and its stock selectors: `SelectMessageQueueByHash` (the same
 * argument always picks the same queue, which keeps per-key order) and `SelectMessageQueueByRandom`.
 * A selector is a function or an object with `select(mqs, msg, arg)`.
 *
 * @example
 * await producer.send(msg, new SelectMessageQueueByHash(), order.id); // every message of an order, one queue
 * await producer.send(msg, (mqs, _msg, n: number) => mqs[n % mqs.length]!, 7);
 */

import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { MessageQueue } from "../../core/message-queue.js";
import { javaStringHashCode } from "../../core/subscription.js";
import type { Message } from "../message.js";

/** Picks one of `mqs` (the topic's writable queues, in route order) for `msg`. */
export type MessageQueueSelectFn<A = unknown> = (
  mqs: readonly MessageQueue[],
  msg: Message,
  arg: A,
) => MessageQueue | undefined;

export interface MessageQueueSelectorObject<A = unknown> {
  select(mqs: readonly MessageQueue[], msg: Message, arg: A): MessageQueue | undefined;
}

export type MessageQueueSelector<A = unknown> = MessageQueueSelectFn<A> | MessageQueueSelectorObject<A>;

/**
 * Java's `hashCode()` of the argument, so that a key picks the queue a Java producer would pick:
 * `String.hashCode` for strings, `Integer`/`Long`/`Double.hashCode` for numbers, `Long.hashCode` for
 * bigints, `Boolean.hashCode` for booleans, an object's own `hashCode()` if it has one, and otherwise the
 * `String.hashCode` of its JSON.
 *
 * @example
 * javaHashCode("order-1"); // as "order-1".hashCode() in Java
 */
export function javaHashCode(arg: unknown): number {
  switch (typeof arg) {
    case "string":
      return javaStringHashCode(arg);
    case "boolean":
      return arg ? 1231 : 1237;
    case "bigint":
      return longHashCode(BigInt.asIntN(64, arg));
    case "number":
      if (Number.isInteger(arg) && arg >= -0x80000000 && arg <= 0x7fffffff) return arg;
      if (Number.isSafeInteger(arg)) return longHashCode(BigInt(arg));
      return doubleHashCode(arg);
    case "object": {
      if (arg === null) break;
      const own = (arg as { hashCode?: unknown }).hashCode;
      if (typeof own === "function") return Number(own.call(arg)) | 0;
      return javaStringHashCode(JSON.stringify(arg));
    }
    default:
      break;
  }
  throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `cannot hash a selector argument of type ${typeof arg}`);
}

function longHashCode(v: bigint): number {
  const bits = BigInt.asUintN(64, v);
  return Number(BigInt.asIntN(32, bits ^ (bits >> 32n)));
}

function doubleHashCode(v: number): number {
  const view = new DataView(new ArrayBuffer(8));
  // Java's doubleToLongBits folds every NaN into one.
  view.setFloat64(0, Number.isNaN(v) ? Number.NaN : v);
  return longHashCode(view.getBigUint64(0));
}

/**
 * RocketMQ's `SelectMessageQueueByHash`: `abs(hashCode(arg) % mqs.length)`. The same argument picks the
 * same queue as long as the topic's queues do not change.
 *
 * @example
 * await producer.send(msg, new SelectMessageQueueByHash(), "order-42");
 */
export class SelectMessageQueueByHash implements MessageQueueSelectorObject<unknown> {
  select(mqs: readonly MessageQueue[], _msg: Message, arg: unknown): MessageQueue | undefined {
    if (mqs.length === 0) return undefined;
    return mqs[Math.abs(javaHashCode(arg) % mqs.length)];
  }
}

/**
 * RocketMQ's `SelectMessageQueueByRandom`: any queue, uniformly; the argument is ignored.
 *
 * @example
 * await producer.send(msg, new SelectMessageQueueByRandom(), null);
 */
export class SelectMessageQueueByRandom implements MessageQueueSelectorObject<unknown> {
  select(mqs: readonly MessageQueue[]): MessageQueue | undefined {
    return mqs[Math.floor(Math.random() * mqs.length)];
  }
}

/**
 * Runs a selector (function or object) and checks its answer: a queue of the message's topic.
 * Throws `PARAMETER_ILLEGAL` otherwise (RocketMQ's "select message queue return null").
 */
export function selectMessageQueue<A>(
  selector: MessageQueueSelector<A>,
  mqs: readonly MessageQueue[],
  msg: Message,
  arg: A,
): MessageQueue {
  const picked = typeof selector === "function" ? selector(mqs, msg, arg) : selector.select(mqs, msg, arg);
  if (picked === undefined || picked === null) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "select message queue return null.");
  }
  if (picked.topic !== msg.topic) {
    throw new NimbusError(
      ErrorCode.PARAMETER_ILLEGAL,
      `the selected queue's topic ${picked.topic} is not the message's topic ${msg.topic}`,
    );
  }
  return picked;
}

/** True when `value` can serve as a selector (a function or an object with `select`). */
export function isMessageQueueSelector(value: unknown): value is MessageQueueSelector<unknown> {
  return (
    typeof value === "function" ||
    (typeof value === "object" && value !== null && typeof (value as { select?: unknown }).select === "function")
  );
}
