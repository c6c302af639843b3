/** @module The producer's endpoint: `POST /send`, one batch into one queue (RocketMQ's SEND_BATCH_MESSAGE). */
import { z } from "zod";
import { topicPermission } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import { MAX_BATCH_MESSAGES, MAX_JSON_ARRAY_ITEMS, MAX_LIST_ITEMS, MAX_TAG_BYTES, MAX_TEXT_LENGTH } from "../bounds.js";
import { endpoint } from "../endpoint.js";
import {
  brokerName,
  bytes,
  groupName,
  messageKeys,
  messageProperties,
  messageQueue,
  queueId,
  queueOffset,
  sendTopicName,
  timestamp,
  userTopicName,
} from "../fields.js";

export const SendMessageSchema = z
  .object({
    body: bytes,
    tags: z.string().max(MAX_TAG_BYTES).optional(),
    keys: messageKeys.optional(),
    /** User properties; `UNIQ_KEY` (the message id) is kept when given, so a retried send keeps its ids. */
    properties: messageProperties.optional(),
    flag: z.number().int().min(-0x80000000).max(0x7fffffff).optional(),
    /**
     * RocketMQ's delay level (1 to the deployment's level count; 0 or absent: no delay), the same as the
     * `DELAY` property. Timer messages set `TIMER_DELIVER_MS` (or `TIMER_DELAY_SEC` / `TIMER_DELAY_MS`).
     */
    delayTimeLevel: z.number().int().min(0).optional(),
  })
  .strict()
  .meta({ id: "SendMessage" });
export type SendMessage = z.output<typeof SendMessageSchema>;

/** Where a send (or a half message) goes: a topic, and optionally a broker, or a broker's queue. */
export const sendTarget = {
  topic: userTopicName,
  /** With `queueId`, the queue to append to; alone, a broker whose queue the broker picks. */
  brokerName: brokerName.optional(),
  queueId: queueId.optional(),
};

export const SendRequestSchema = z
  .object({
    producerGroup: groupName.optional(),
    ...sendTarget,
    /** A user topic, or RMQ_SYS_TRACE_TOPIC for a client's trace records (docs/trace.md). */
    topic: sendTopicName,
    // More than MAX_BATCH_MESSAGES is the broker's MESSAGE_ILLEGAL, as RocketMQ answers an oversized batch.
    messages: z
      .array(SendMessageSchema)
      .min(1)
      .max(MAX_JSON_ARRAY_ITEMS)
      .meta({
        description: `1 to ${MAX_BATCH_MESSAGES} messages (${MAX_BATCH_MESSAGES + 1} to ${MAX_JSON_ARRAY_ITEMS}: 400 MESSAGE_ILLEGAL from the broker, more: 400 PARAMETER_ILLEGAL)`,
      }),
  })
  .strict()
  .meta({ id: "SendRequest" });
export type SendRequest = z.output<typeof SendRequestSchema>;

export const SendResponseSchema = z
  .object({
    sendStatus: z.literal("SEND_OK"),
    messageQueue,
    /** Offset of the batch's first message; the others follow consecutively. */
    queueOffset,
    /** Each message's UNIQ_KEY. */
    msgIds: z.array(z.string().max(MAX_TEXT_LENGTH)).max(MAX_LIST_ITEMS),
    storeTimestamp: timestamp,
    /**
     * Delayed messages only: when each is due. They wait in the timer store and are appended to
     * `messageQueue` when due; `queueOffset` is then 0 (the offset is known only at delivery).
     */
    deliverTimeMs: z.array(timestamp).max(MAX_LIST_ITEMS).optional(),
    /**
     * Present when this send created its topic (it did not exist and the broker auto-creates topics, RocketMQ's
     * autoCreateTopicEnable): a typo in a topic name shows here instead of silently making a new topic.
     */
    topicCreated: z.literal(true).optional(),
  })
  .meta({ id: "SendResponse" });
export type SendResponse = z.output<typeof SendResponseSchema>;

/** What a send may answer besides the usual: bad messages, no permission, no topic (or no broker to create it on). */
export const SEND_ERRORS = [
  ErrorCode.PARAMETER_ILLEGAL,
  ErrorCode.MESSAGE_ILLEGAL,
  ErrorCode.MESSAGE_BODY_TOO_LARGE,
  ErrorCode.NO_PERMISSION,
  ErrorCode.TOPIC_NOT_EXIST,
  ErrorCode.SERVICE_NOT_AVAILABLE,
  ErrorCode.WRONG_BROKER,
] as const;

export const send = endpoint({
  id: "send",
  access: ({ body }) => [topicPermission(body.topic, "Pub")],
  method: "POST",
  path: "/send",
  service: "Send",
  summary: "Appends a batch of 1 to 1024 messages to one queue at consecutive offsets; unknown topics may auto-create.",
  body: SendRequestSchema,
  response: SendResponseSchema,
  errors: SEND_ERRORS,
});
