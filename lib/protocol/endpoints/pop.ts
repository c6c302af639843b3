/**
 * @module POP consumption (RocketMQ 5's SimpleConsumer; docs/pop.md): `POST /receive` hands out messages with a
 * receipt handle and an invisible time, `POST /ack` ends many of them at once, `POST /change-invisible-duration`
 * moves one message's invisible time (a new handle), `POST /receive/start` fixes when a group starts on a topic (a
 * consumer's start). Same access as pull: Sub on the topic and the group.
 */
import { z } from "zod";
import { groupPermission, topicPermission } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import { MAX_FILTER_EXPRESSION_LENGTH } from "../../core/filter/index.js";
import {
  MAX_ACK_HANDLES,
  MAX_INVISIBLE_MS,
  MAX_LONG_POLL_MS,
  MAX_RECEIPT_HANDLE_LENGTH,
  MAX_RECEIVE_MESSAGES,
  MIN_INVISIBLE_MS,
} from "../bounds.js";
import { endpoint } from "../endpoint.js";
import { brokerName, checkFilter, clientId, expressionType, groupName, timestamp, topicName } from "../fields.js";
import { PulledMessageSchema } from "./pull.js";

/** RocketMQ 5's FilterExpression: a TAG expression (`*`, `TagA || TagB`) or an SQL92 one over user properties. */
export const FilterExpressionSchema = z
  .object({
    type: expressionType,
    expression: z.string().max(MAX_FILTER_EXPRESSION_LENGTH),
  })
  .strict()
  // A bad expression is a 400 at receive time (docs/filters.md), before anything is read or written.
  .superRefine((f, ctx) => checkFilter(f.type, f.expression, ctx, "expression"))
  .meta({ id: "FilterExpression" });

const receiptHandle = z.string().min(1).max(MAX_RECEIPT_HANDLE_LENGTH);
const invisibleDurationMs = z.number().int().min(MIN_INVISIBLE_MS).max(MAX_INVISIBLE_MS);

export const ReceiveRequestSchema = z
  .object({
    consumerGroup: groupName,
    topic: topicName,
    /** Default `{type: "TAG", expression: "*"}`: every message. */
    filterExpression: FilterExpressionSchema.optional(),
    /** 1 to 32; default 16. */
    maxMessages: z.number().int().min(1).max(MAX_RECEIVE_MESSAGES).optional(),
    /** How long the messages stay invisible to the group's other receivers unless acked. */
    invisibleDurationMs,
    /** Long polling: wait up to this long for a message (0 to 20 s; default 0). */
    awaitDurationMs: z.number().int().min(0).max(MAX_LONG_POLL_MS).optional(),
    /** Only this broker's queues; default the broker this process serves (all of them on an all-in-one process). */
    brokerName: brokerName.optional(),
    clientId: clientId.optional(),
  })
  .strict()
  .meta({ id: "ReceiveRequest" });
export type ReceiveRequest = z.output<typeof ReceiveRequestSchema>;

export const ReceivedMessageSchema = PulledMessageSchema.extend({
  /** What ack and change-invisible-duration take: valid until acked, changed, or the invisible time ends. */
  receiptHandle,
  /** 1 on the first delivery, one more on each redelivery. */
  deliveryAttempt: z.number().int().min(1),
  /** When the message becomes visible again unless acked (ms since epoch). */
  invisibleUntil: timestamp,
}).meta({ id: "ReceivedMessage" });
export type ReceivedMessage = z.output<typeof ReceivedMessageSchema>;

export const ReceiveResponseSchema = z
  .object({ messages: z.array(ReceivedMessageSchema).max(MAX_RECEIVE_MESSAGES) })
  .meta({ id: "ReceiveResponse" });
export type ReceiveResponse = z.output<typeof ReceiveResponseSchema>;

export const AckRequestSchema = z
  .object({
    consumerGroup: groupName,
    topic: topicName,
    receiptHandles: z.array(receiptHandle).min(1).max(MAX_ACK_HANDLES),
  })
  .strict()
  .meta({ id: "AckRequest" });
export type AckRequest = z.output<typeof AckRequestSchema>;

export const AckResponseSchema = z
  .object({
    /** One entry per handle, in order: OK, or INVALID_RECEIPT_HANDLE (forged, stale, expired, already acked). */
    entries: z.array(z.object({ receiptHandle, code: z.enum(["OK", "INVALID_RECEIPT_HANDLE"]) })).max(MAX_ACK_HANDLES),
  })
  .meta({ id: "AckResponse" });
export type AckResponse = z.output<typeof AckResponseSchema>;

export const ChangeInvisibleDurationRequestSchema = z
  .object({ consumerGroup: groupName, topic: topicName, receiptHandle, invisibleDurationMs })
  .strict()
  .meta({ id: "ChangeInvisibleDurationRequest" });
export type ChangeInvisibleDurationRequest = z.output<typeof ChangeInvisibleDurationRequestSchema>;

export const ChangeInvisibleDurationResponseSchema = z
  .object({ receiptHandle, invisibleUntil: timestamp })
  .meta({ id: "ChangeInvisibleDurationResponse" });
export type ChangeInvisibleDurationResponse = z.output<typeof ChangeInvisibleDurationResponseSchema>;

export const StartReceivingRequestSchema = z
  .object({ consumerGroup: groupName, topic: topicName })
  .strict()
  .meta({ id: "StartReceivingRequest" });
export type StartReceivingRequest = z.output<typeof StartReceivingRequestSchema>;

export const StartReceivingResponseSchema = z
  .object({
    consumerGroup: groupName,
    topic: topicName,
    /** When the group started on the topic (ms since epoch): its receives get every message stored from then on. */
    startedAt: timestamp,
  })
  .meta({ id: "StartReceivingResponse" });
export type StartReceivingResponse = z.output<typeof StartReceivingResponseSchema>;

const subOnTopicAndGroup = ({ body }: { body: { topic: string; consumerGroup: string } }) => [
  topicPermission(body.topic, "Sub"),
  groupPermission(body.consumerGroup, "Sub"),
];

export const receive = endpoint({
  id: "receive",
  access: subOnTopicAndGroup,
  method: "POST",
  path: "/receive",
  service: "Pull",
  summary:
    "Receives up to maxMessages messages of a topic for a group (POP): each with a receipt handle, invisible to the group's other receivers until acked or its invisible time ends.",
  body: ReceiveRequestSchema,
  response: ReceiveResponseSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.NO_PERMISSION, ErrorCode.TOPIC_NOT_EXIST, ErrorCode.WRONG_BROKER],
});

export const startReceiving = endpoint({
  id: "startReceiving",
  access: subOnTopicAndGroup,
  method: "POST",
  path: "/receive/start",
  service: "Pull",
  summary:
    "Fixes when a group starts receiving a topic, if it has not started yet (a consumer's start; the first receive does it too): every queue of the topic then delivers the group what is stored from that time on.",
  body: StartReceivingRequestSchema,
  response: StartReceivingResponseSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.NO_PERMISSION],
});

export const ack = endpoint({
  id: "ack",
  access: subOnTopicAndGroup,
  method: "POST",
  path: "/ack",
  service: "Pull",
  summary:
    "Acks received messages by their receipt handles (many per call); a stale or forged handle is refused alone.",
  body: AckRequestSchema,
  response: AckResponseSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.NO_PERMISSION],
});

export const changeInvisibleDuration = endpoint({
  id: "changeInvisibleDuration",
  access: subOnTopicAndGroup,
  method: "POST",
  path: "/change-invisible-duration",
  service: "Pull",
  summary:
    "Gives one received message a new invisible time from now; answers a new receipt handle (the old one is dead).",
  body: ChangeInvisibleDurationRequestSchema,
  response: ChangeInvisibleDurationResponseSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.NO_PERMISSION, ErrorCode.INVALID_RECEIPT_HANDLE],
});
