/**
 * @module Name rules for topics, groups and brokers, and the system topics, after RocketMQ's
 * `TopicValidator`, `Validators` and `MixAll`. Validation failures throw `PARAMETER_ILLEGAL` with
 * RocketMQ's wording, so messages read the same as a RocketMQ client's.
 */
import { ErrorCode, NimbusError } from "./errors.js";

/** The characters a topic, group or broker name may use, as RocketMQ prints them in its errors. */
export const VALID_NAME_PATTERN = "^[%|a-zA-Z0-9_-]+$";
const VALID_NAME = /^[%|a-zA-Z0-9_-]+$/;

export const TOPIC_MAX_LENGTH = 127;
export const GROUP_MAX_LENGTH = 255;
export const BROKER_NAME_MAX_LENGTH = 127;

// RocketMQ's TopicValidator names.
export const AUTO_CREATE_TOPIC_KEY_TOPIC = "TBW102";
export const RMQ_SYS_SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX";
export const RMQ_SYS_BENCHMARK_TOPIC = "BenchmarkTest";
export const RMQ_SYS_TRANS_HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC";
export const RMQ_SYS_TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC";
export const RMQ_SYS_TRANS_OP_HALF_TOPIC = "RMQ_SYS_TRANS_OP_HALF_TOPIC";
export const RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC";
export const RMQ_SYS_SELF_TEST_TOPIC = "SELF_TEST_TOPIC";
export const RMQ_SYS_OFFSET_MOVED_EVENT = "OFFSET_MOVED_EVENT";
/** Every topic that starts with this is a system topic. */
export const SYSTEM_TOPIC_PREFIX = "rmq_sys_";
// RocketMQ's MixAll prefixes: a consumer group's retry and dead-letter topics.
export const RETRY_GROUP_TOPIC_PREFIX = "%RETRY%";
export const DLQ_GROUP_TOPIC_PREFIX = "%DLQ%";

/** The system topics named one by one; the prefixes above add the rest. */
export const SYSTEM_TOPICS: ReadonlySet<string> = new Set([
  AUTO_CREATE_TOPIC_KEY_TOPIC,
  RMQ_SYS_SCHEDULE_TOPIC,
  RMQ_SYS_BENCHMARK_TOPIC,
  RMQ_SYS_TRANS_HALF_TOPIC,
  RMQ_SYS_TRACE_TOPIC,
  RMQ_SYS_TRANS_OP_HALF_TOPIC,
  RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC,
  RMQ_SYS_SELF_TEST_TOPIC,
  RMQ_SYS_OFFSET_MOVED_EVENT,
]);

export const isRetryTopic = (topic: string): boolean => topic.startsWith(RETRY_GROUP_TOPIC_PREFIX);
export const isDlqTopic = (topic: string): boolean => topic.startsWith(DLQ_GROUP_TOPIC_PREFIX);

/** A named system topic, an `rmq_sys_` topic, or a group's `%RETRY%` / `%DLQ%` topic. */
export function isSystemTopic(topic: string): boolean {
  return SYSTEM_TOPICS.has(topic) || topic.startsWith(SYSTEM_TOPIC_PREFIX) || isRetryTopic(topic) || isDlqTopic(topic);
}

/**
 * The retry topic of a consumer group. It is not validated: a group of more than 120 characters gives a
 * topic longer than `TOPIC_MAX_LENGTH`.
 *
 * @example
 * retryTopic("orders"); // "%RETRY%orders"
 */
export const retryTopic = (group: string): string => RETRY_GROUP_TOPIC_PREFIX + group;

/** The dead-letter topic of a consumer group, e.g. `%DLQ%orders`; not validated, as `retryTopic`. */
export const dlqTopic = (group: string): string => DLQ_GROUP_TOPIC_PREFIX + group;

function illegal(message: string): NimbusError {
  return new NimbusError(ErrorCode.PARAMETER_ILLEGAL, message);
}

/** Blank, then length, then characters: the RocketMQ client's order of checks and its wording (its group
 * messages start in lower case). */
function validateName(name: unknown, what: string, maxLength: number, the: "The" | "the"): void {
  if (typeof name !== "string" || name.trim() === "") throw illegal(`${the} specified ${what} is blank`);
  if (name.length > maxLength) {
    throw illegal(`${the} specified ${what} is longer than ${what} max length ${maxLength}.`);
  }
  if (!VALID_NAME.test(name)) {
    throw illegal(`${the} specified ${what}[${name}] contains illegal characters, allowing only ${VALID_NAME_PATTERN}`);
  }
}

/**
 * Throws `PARAMETER_ILLEGAL` unless `topic` is 1 to 127 characters of `^[%|a-zA-Z0-9_-]+$`. System
 * topics pass: use `validateUserTopic` where a user names the topic.
 */
export function validateTopic(topic: string): void {
  validateName(topic, "topic", TOPIC_MAX_LENGTH, "The");
}

/** `validateTopic`, and refuses system topics (including `%RETRY%` and `%DLQ%` ones). */
export function validateUserTopic(topic: string): void {
  validateTopic(topic);
  if (isSystemTopic(topic)) throw illegal(`The topic[${topic}] is conflict with system topic.`);
}

/**
 * `validateUserTopic`, but lets `RMQ_SYS_TRACE_TOPIC` through: a client with `enableMsgTrace` sends its trace
 * records there, as RocketMQ's trace dispatcher does (docs/trace.md).
 */
export function validateSendTopic(topic: string): void {
  if (topic === RMQ_SYS_TRACE_TOPIC) return;
  validateUserTopic(topic);
}

/** Throws `PARAMETER_ILLEGAL` unless `group` is 1 to 255 characters of `^[%|a-zA-Z0-9_-]+$`. */
export function validateGroup(group: string): void {
  validateName(group, "group", GROUP_MAX_LENGTH, "the");
}

/**
 * The longest consumer group: its `%RETRY%` topic (the longer of its two derived topics) must be a valid topic,
 * so every route that derives a topic from a group can store and read it (RocketMQ leaves this unchecked).
 */
export const CONSUMER_GROUP_MAX_LENGTH = TOPIC_MAX_LENGTH - RETRY_GROUP_TOPIC_PREFIX.length;

/** `validateGroup`, for a consumer group: at most 120 characters, so `%RETRY%<group>` is a topic. */
export function validateConsumerGroup(group: string): void {
  validateName(group, "consumer group", CONSUMER_GROUP_MAX_LENGTH, "the");
}

/** Throws `PARAMETER_ILLEGAL` unless `brokerName` is 1 to 127 characters of `^[%|a-zA-Z0-9_-]+$`. */
export function validateBrokerName(brokerName: string): void {
  validateName(brokerName, "brokerName", BROKER_NAME_MAX_LENGTH, "The");
}
