/**
 * @module `POST /send-back`: RocketMQ's CONSUMER_SEND_MSG_BACK. A clustering consumer hands back a message
 * it failed to consume; the broker re-stores it in the group's retry topic `%RETRY%<group>` with delay level
 * 3 + reconsumeTimes (or the level asked), or in `%DLQ%<group>` once it has been reconsumed
 * `maxReconsumeTimes` times (or when `delayLevel` is -1).
 */
import { z } from "zod";
import { consumePermissions } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import { MAX_TEXT_LENGTH } from "../bounds.js";
import { endpoint } from "../endpoint.js";
import { brokerName, consumerGroupName, queueId, queueOffset, timestamp, topicName } from "../fields.js";

/** RocketMQ's default maxReconsumeTimes of a concurrent consumer. */
export const DEFAULT_MAX_RECONSUME_TIMES = 16;

export const SendBackRequestSchema = z
  .object({
    consumerGroup: consumerGroupName,
    /** Where the failed message is stored: the queue it was pulled from (a topic's or the retry topic's). */
    topic: topicName,
    brokerName,
    queueId,
    queueOffset,
    /** 0 or absent: 3 + reconsumeTimes (clamped to the last level). -1: straight to the dead-letter queue. */
    delayLevel: z.number().int().min(-1).optional(),
    /** After this many reconsumes the message goes to the dead-letter queue. Default 16. */
    maxReconsumeTimes: z.number().int().min(0).max(1000).optional(),
  })
  .strict()
  .meta({ id: "SendBackRequest" });
export type SendBackRequest = z.output<typeof SendBackRequestSchema>;

export const SendBackResponseSchema = z
  .object({
    /** RETRY: waiting in the retry topic for `deliverTimeMs`; DLQ: stored in the dead-letter queue. */
    result: z.enum(["RETRY", "DLQ"]),
    msgId: z.string().max(MAX_TEXT_LENGTH),
    topic: topicName,
    brokerName,
    queueId,
    /** DLQ: the message's offset in the dead-letter queue. */
    queueOffset: queueOffset.optional(),
    /** RETRY: when it is appended to the retry topic. */
    deliverTimeMs: timestamp.optional(),
    /** The reconsume count the re-stored message carries. */
    reconsumeTimes: z.number().int().min(0),
  })
  .meta({ id: "SendBackResponse" });
export type SendBackResponse = z.output<typeof SendBackResponseSchema>;

export const sendBack = endpoint({
  id: "sendBack",
  // Reads the failed message as a pull does and writes only into the group's own retry or dead-letter topic.
  access: ({ body }) => consumePermissions(body),
  method: "POST",
  path: "/send-back",
  service: "Send",
  summary:
    "Hands a message a consumer failed back to the broker: into %RETRY%<group> after a delay level, or into %DLQ%<group>.",
  body: SendBackRequestSchema,
  response: SendBackResponseSchema,
  errors: [
    ErrorCode.PARAMETER_ILLEGAL,
    ErrorCode.QUERY_NOT_FOUND,
    ErrorCode.TOPIC_NOT_EXIST,
    ErrorCode.NO_PERMISSION,
    ErrorCode.SERVICE_NOT_AVAILABLE,
    ErrorCode.WRONG_BROKER,
  ],
});
