/**
 * @module The request and response fields the endpoints share: names with RocketMQ's rules (and wording),
 * queue ids and offsets, message bodies as base64 on the wire and bytes in code. Each is a zod schema that
 * works both ways: the server decodes requests and encodes answers with it, the SDK the other way round.
 */
import { z } from "zod";
import { isNimbusError } from "../core/errors.js";
import { compileFilter, FILTER_TYPES, type FilterType } from "../core/filter/index.js";
import {
  BROKER_NAME_MAX_LENGTH,
  CONSUMER_GROUP_MAX_LENGTH,
  GROUP_MAX_LENGTH,
  TOPIC_MAX_LENGTH,
  VALID_NAME_PATTERN,
  validateBrokerName,
  validateConsumerGroup,
  validateGroup,
  validateSendTopic,
  validateTopic,
  validateUserTopic,
} from "../core/names.js";
import { PermName } from "../core/perm-name.js";
import {
  MAX_BASE64_LENGTH,
  MAX_CLIENT_ID_LENGTH,
  MAX_KEYS_PER_MESSAGE,
  MAX_MAP_ENTRIES,
  MAX_PROPERTY_COUNT,
  MAX_PROPERTY_VALUE_LENGTH,
  MAX_QUEUE_ID,
  MAX_QUEUE_NUMS,
  MAX_TEXT_LENGTH,
} from "./bounds.js";

/** A string checked by one of core's name validators, whose RocketMQ message becomes the issue's. */
function named(validate: (name: string) => void, description: string, maxLength: number) {
  return z
    .string()
    .superRefine((value, ctx) => {
      try {
        validate(value);
      } catch (err) {
        if (!isNimbusError(err)) throw err;
        ctx.addIssue({ code: "custom", message: err.message });
      }
    })
    .meta({ description, minLength: 1, maxLength, pattern: VALID_NAME_PATTERN });
}

/** Any topic, system topics included (routes, pulls, offsets). */
export const topicName = named(validateTopic, "A topic, system topics included", TOPIC_MAX_LENGTH);
/** A topic a user may create, delete or send to: not a system topic (`TBW102`, `%RETRY%…`, `%DLQ%…`, `rmq_sys_…`). */
export const userTopicName = named(
  validateUserTopic,
  "A topic that is not a system topic (TBW102, %RETRY%..., %DLQ%..., rmq_sys_...)",
  TOPIC_MAX_LENGTH,
);
/** A topic a user may send to: a user topic, or the trace topic `RMQ_SYS_TRACE_TOPIC` (docs/trace.md). */
export const sendTopicName = named(
  validateSendTopic,
  "A topic that is not a system topic (TBW102, %RETRY%..., %DLQ%..., rmq_sys_...), or RMQ_SYS_TRACE_TOPIC",
  TOPIC_MAX_LENGTH,
);
export const groupName = named(validateGroup, "A producer group", GROUP_MAX_LENGTH);
/** A consumer group: at most 120 characters, so that its `%RETRY%` and `%DLQ%` topics are topics. */
export const consumerGroupName = named(
  validateConsumerGroup,
  "A consumer group (at most 120 characters: %RETRY%<group> is a topic)",
  CONSUMER_GROUP_MAX_LENGTH,
);
export const brokerName = named(validateBrokerName, "A broker name", BROKER_NAME_MAX_LENGTH);

export const queueId = z.number().int().min(0).max(MAX_QUEUE_ID);
export const queueOffset = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** Milliseconds since the epoch. */
export const timestamp = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const queueNums = z.number().int().min(1).max(MAX_QUEUE_NUMS);
export const perm = z
  .number()
  .int()
  .refine(PermName.isValid, "perm must be an integer from 0 to 15")
  .meta({ description: "RocketMQ's PermName bits: 4 read, 2 write, 1 inherit, 8 priority" });
/**
 * A topic's permission as `updateTopic` sets it: 2 (write), 4 (read) or 6 (read + write), as mqadmin's `-p`.
 * Other bits mean nothing on a topic (1 inherit is the broker's, 8 priority too) and 0 would hide it.
 */
const TOPIC_PERMS: readonly number[] = [2, 4, 6];
export const topicPerm = z
  .number()
  .int()
  .refine((p) => TOPIC_PERMS.includes(p), "a topic's perm is 2 (write), 4 (read) or 6 (read and write)")
  .meta({ description: "2 write, 4 read, 6 read and write" });
export const clientId = z
  .string()
  .min(1)
  .max(MAX_CLIENT_ID_LENGTH)
  .regex(/^\S+$/, "a client id has no blanks")
  .meta({ description: "RocketMQ's client id, `ip@instance[@unit]`" });

/**
 * A map of strings to `value` with at most `max` entries (zod's record has no maximum of its own: the count is
 * refined, and stated as `maxProperties` in the OpenAPI document). Requests reach it after the JSON shape check
 * (lib/http/json-body.ts), so it never walks more than MAX_JSON_OBJECT_KEYS entries.
 */
export function boundedMap<V extends z.ZodType>(value: V, max = MAX_MAP_ENTRIES): z.ZodRecord<z.ZodString, V> {
  return z
    .record(z.string().max(MAX_TEXT_LENGTH), value)
    .refine((m) => Object.keys(m).length <= max, `at most ${max} entries`)
    .meta({ maxProperties: max });
}

/** RocketMQ's `SubscriptionData.expressionType`: how a subscription expression reads; `TAG` when absent. */
export const expressionType = z
  .enum(FILTER_TYPES)
  .meta({ description: "TAG (default): `*` or tags joined by `||`; SQL92: a condition over the message's properties" });

/**
 * A 400 issue at `path` unless the expression compiles as its type (a tag list, or SQL92 as docs/filters.md
 * says): a bad filter is refused when it is subscribed or pulled with, never found later by a consumer.
 */
export function checkFilter(
  type: FilterType | undefined,
  expression: string | undefined,
  ctx: z.RefinementCtx,
  path: string,
): void {
  try {
    compileFilter({ type: type ?? "TAG", expression: expression ?? "*" });
  } catch (err) {
    if (!isNimbusError(err)) throw err;
    ctx.addIssue({ code: "custom", message: err.message, path: [path] });
  }
}

/** A message's properties: at most MAX_PROPERTY_COUNT (their bytes are the broker's check, 413 past 32 KiB). */
export const messageProperties = boundedMap(z.string().max(MAX_PROPERTY_VALUE_LENGTH), MAX_PROPERTY_COUNT);

/** A queue of a topic, as RocketMQ's MessageQueue. */
export const messageQueue = z.object({
  topic: z.string().max(MAX_TEXT_LENGTH),
  brokerName: z.string().max(MAX_TEXT_LENGTH),
  queueId,
});

const base64Text = z
  .string()
  .max(MAX_BASE64_LENGTH)
  .meta({ description: "Standard base64 (RFC 4648), padded", contentEncoding: "base64" });

/**
 * Bytes, carried as strict standard base64: what decodes must encode back to the same text. A round trip
 * is stricter than a regex and cheaper (a regex with a repeated group overflows the stack on megabytes).
 */
const byteArray = z.custom<Uint8Array>((v) => v instanceof Uint8Array, "must be bytes");

export const bytes = z.codec(base64Text, byteArray, {
  decode: (text, ctx) => {
    const buf = Buffer.from(text, "base64");
    if (buf.toString("base64") !== text) {
      ctx.issues.push({ code: "custom", message: "must be base64", input: text });
      return new Uint8Array(0);
    }
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  },
  encode: (b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64"),
});

/** Message keys: one string or a list on the wire, always a list in code. */
const keyList = z.array(z.string().max(MAX_TEXT_LENGTH)).max(MAX_KEYS_PER_MESSAGE);
export const messageKeys = z.codec(z.union([z.string().max(MAX_TEXT_LENGTH), keyList]), keyList, {
  decode: (keys) => (typeof keys === "string" ? [keys] : keys),
  encode: (keys) => keys,
});

/** Every failure's body: a RocketMQ ResponseCode name and a message. */
export const errorBody = z
  .object({ code: z.string().max(MAX_TEXT_LENGTH), message: z.string().max(MAX_TEXT_LENGTH) })
  .meta({ id: "Error" });

/** `{"code":"SUCCESS"}`, RocketMQ's answer to a command that returns nothing. */
export const success = z.object({ code: z.literal("SUCCESS") });
