/** @module Client endpoints: heartbeats, unregistering, and a group's live consumers. */
import { z } from "zod";
import { groupPermission, type Permission, topicPermission } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import {
  MAX_GROUPS_PER_HEARTBEAT,
  MAX_LIST_ITEMS,
  MAX_OFFSETS_PER_COMMIT,
  MAX_SUB_EXPRESSION_LENGTH,
  MAX_SUBSCRIPTIONS_PER_GROUP,
  MAX_TEXT_LENGTH,
} from "../bounds.js";
import { endpoint } from "../endpoint.js";
import {
  brokerName,
  checkFilter,
  clientId,
  consumerGroupName,
  expressionType,
  groupName,
  queueId,
  queueOffset,
  success,
  timestamp,
  topicName,
} from "../fields.js";

export const CONSUME_TYPES = ["CONSUME_ACTIVELY", "CONSUME_PASSIVELY", "CONSUME_POP"] as const;
export const MESSAGE_MODELS = ["CLUSTERING", "BROADCASTING"] as const;
export type MessageModel = (typeof MESSAGE_MODELS)[number];
export const CONSUME_FROM_WHERE = [
  "CONSUME_FROM_LAST_OFFSET",
  "CONSUME_FROM_FIRST_OFFSET",
  "CONSUME_FROM_TIMESTAMP",
] as const;

/** RocketMQ's SubscriptionData: a topic and its filter, refused (400) when the filter does not compile. */
export const SubscriptionDataSchema = z
  .object({
    topic: topicName,
    subString: z.string().max(MAX_SUB_EXPRESSION_LENGTH),
    /** How `subString` reads: `TAG` (default) or `SQL92`. */
    expressionType: expressionType.optional(),
  })
  .superRefine((sub, ctx) => checkFilter(sub.expressionType, sub.subString, ctx, "subString"))
  .meta({ id: "SubscriptionData" });
export type SubscriptionData = z.output<typeof SubscriptionDataSchema>;

/** A subscription as the broker reports a member's (`expressionType` only when not TAG). */
export const ReportedSubscriptionSchema = z
  .object({
    topic: z.string().max(MAX_TEXT_LENGTH),
    subString: z.string().max(MAX_TEXT_LENGTH),
    expressionType: expressionType.optional(),
  })
  .meta({ id: "ReportedSubscription" });
export type ReportedSubscription = z.output<typeof ReportedSubscriptionSchema>;

/** One queue a consumer works on, as its heartbeat reports it (RocketMQ's ProcessQueueInfo, in part). */
export const QueueRunningInfoSchema = z
  .object({
    topic: topicName,
    brokerName,
    queueId,
    /** An orderly consumer holds the queue's broker lock (its own view of its lease). */
    locked: z.boolean(),
    /** Messages pulled and not consumed yet, and their body bytes. */
    cachedMsgCount: z.number().int().min(0),
    cachedMsgSize: z.number().int().min(0),
    /** The offset this consumer would commit now (-1 when it knows none). */
    consumeOffset: z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER),
    /** Its last pull that found messages, and its last listener call's end (0: none yet). */
    lastPullTimestamp: timestamp,
    lastConsumeTimestamp: timestamp,
  })
  .meta({ id: "QueueRunningInfo" });
export type QueueRunningInfo = z.output<typeof QueueRunningInfoSchema>;

/** What a consumer reports about its work with each heartbeat (RocketMQ's ConsumerRunningInfo, in part). */
export const ConsumerRunningInfoSchema = z
  .object({
    /** Its listener is orderly (`registerMessageListenerOrderly`). */
    consumeOrderly: z.boolean(),
    /** The queues its rebalance assigned to it, started or waiting for their turn. */
    assignedQueues: z.array(z.object({ topic: topicName, brokerName, queueId })).max(MAX_OFFSETS_PER_COMMIT),
    /** The queues it works on. */
    queues: z.array(QueueRunningInfoSchema).max(MAX_OFFSETS_PER_COMMIT),
  })
  .meta({ id: "ConsumerRunningInfo" });
export type ConsumerRunningInfo = z.output<typeof ConsumerRunningInfoSchema>;

/** Unknown fields are accepted and dropped, so RocketMQ-shaped heartbeats with more fields still pass. */
export const ConsumerDataSchema = z
  .object({
    groupName: consumerGroupName,
    consumeType: z.enum(CONSUME_TYPES).optional(),
    messageModel: z.enum(MESSAGE_MODELS).optional(),
    consumeFromWhere: z.enum(CONSUME_FROM_WHERE).optional(),
    subscriptionDataSet: z.array(SubscriptionDataSchema).max(MAX_SUBSCRIPTIONS_PER_GROUP).optional(),
    /** What the consumer works on, for `consumerStatus`. */
    runningInfo: ConsumerRunningInfoSchema.optional(),
  })
  .meta({ id: "ConsumerData" });
export type ConsumerData = z.output<typeof ConsumerDataSchema>;

export const HeartbeatSchema = z
  .object({
    clientId,
    /** RocketMQ's LanguageCode of the client, e.g. `TYPESCRIPT`, `JAVA`. */
    language: z.string().max(32).optional(),
    /** The client's version. */
    version: z.string().max(64).optional(),
    producerDataSet: z
      .array(
        z.object({
          groupName,
          /** A TransactionProducer: it answers check-backs, so the broker sends them to it. */
          transactional: z.boolean().optional(),
        }),
      )
      .max(MAX_GROUPS_PER_HEARTBEAT)
      .optional(),
    consumerDataSet: z.array(ConsumerDataSchema).max(MAX_GROUPS_PER_HEARTBEAT).optional(),
  })
  .strict()
  .meta({ id: "HeartbeatData" });
export type HeartbeatData = z.output<typeof HeartbeatSchema>;

/** A check-back for a producer: "what became of this transaction?" (RocketMQ's CHECK_TRANSACTION_STATE). */
export const TransactionCheckSchema = z
  .object({
    transactionId: z.string().max(MAX_TEXT_LENGTH),
    producerGroup: z.string().max(MAX_TEXT_LENGTH),
    checkTimes: z.number().int().min(1),
  })
  .meta({ id: "TransactionCheck" });
export type TransactionCheck = z.output<typeof TransactionCheckSchema>;

/** A heartbeat's answer: success, and the check-backs waiting for this client (producers only). */
export const HeartbeatResponseSchema = z
  .object({ code: z.literal("SUCCESS"), transactionChecks: z.array(TransactionCheckSchema).max(MAX_LIST_ITEMS) })
  .meta({ id: "HeartbeatResponse" });
export type HeartbeatResponse = z.output<typeof HeartbeatResponseSchema>;

/** A live producer of a group (mqadmin's producerConnection). */
export const ProducerInfoSchema = z
  .object({
    clientId: z.string().max(MAX_TEXT_LENGTH),
    /** The client's IP, from its client id (`ip@instance`). */
    clientAddr: z.string().max(MAX_TEXT_LENGTH),
    language: z.string().max(MAX_TEXT_LENGTH),
    version: z.string().max(MAX_TEXT_LENGTH),
    /** It answers transaction check-backs. */
    transactional: z.boolean(),
    lastHeartbeat: timestamp,
  })
  .meta({ id: "ProducerInfo" });
export type ProducerInfo = z.output<typeof ProducerInfoSchema>;

/** A live consumer of a group, as its last heartbeat described it. */
export const ConsumerInfoSchema = z
  .object({
    clientId: z.string().max(MAX_TEXT_LENGTH),
    consumeType: z.string().max(MAX_TEXT_LENGTH),
    messageModel: z.enum(MESSAGE_MODELS),
    consumeFromWhere: z.string().max(MAX_TEXT_LENGTH),
    subscriptionDataSet: z.array(ReportedSubscriptionSchema).max(MAX_LIST_ITEMS),
    lastHeartbeat: timestamp,
    /**
     * False when this member's subscription (topics and filter expressions) differs from the group's: the one
     * most live members share (ties: the one of the member heard from first). RocketMQ requires one.
     */
    subscriptionConsistent: z.boolean(),
  })
  .meta({ id: "ConsumerInfo" });
export type ConsumerInfo = z.output<typeof ConsumerInfoSchema>;

/** An offset reset of the group (`resetOffsetByTime`): live consumers move their queues of the topic there. */
export const OffsetResetSchema = z
  .object({
    topic: z.string().max(MAX_TEXT_LENGTH),
    resetAt: timestamp,
    offsetTable: z
      .array(z.object({ brokerName: z.string().max(MAX_TEXT_LENGTH), queueId, offset: queueOffset }))
      .max(MAX_LIST_ITEMS),
  })
  .meta({ id: "OffsetReset" });
export type OffsetReset = z.output<typeof OffsetResetSchema>;

/** The ids (RocketMQ's consumerIdList) and each consumer's details (an extension). */
export const ConsumerConnectionSchema = z
  .object({
    consumerIdList: z.array(z.string().max(MAX_TEXT_LENGTH)).max(MAX_LIST_ITEMS),
    consumers: z.array(ConsumerInfoSchema).max(MAX_LIST_ITEMS),
    /** Every live member has the group's subscription. */
    subscriptionsConsistent: z.boolean(),
    /** The group's latest offset reset per topic, which consumers apply once, when they first see it. */
    offsetResets: z.array(OffsetResetSchema).max(MAX_LIST_ITEMS),
  })
  .meta({ id: "ConsumerConnection" });
export type ConsumerConnection = z.output<typeof ConsumerConnectionSchema>;

/**
 * A heartbeat registers the client in its groups: Pub on each producer group; Sub on each consumer group and
 * on each topic it subscribes to (as RocketMQ 5 checks HEART_BEAT).
 */
export function heartbeatAccess({ body }: { body: HeartbeatData }): Permission[] {
  return [
    ...(body.producerDataSet ?? []).map((p) => groupPermission(p.groupName, "Pub")),
    ...(body.consumerDataSet ?? []).flatMap((c) => [
      groupPermission(c.groupName, "Sub"),
      ...(c.subscriptionDataSet ?? []).map((s) => topicPermission(s.topic, "Sub")),
    ]),
  ];
}

export const heartbeat = endpoint({
  id: "heartbeat",
  access: heartbeatAccess,
  method: "POST",
  path: "/heartbeat",
  service: "Clients",
  summary: "Registers or renews a client in its groups (live for 120 s) and hands it its check-backs (HEART_BEAT).",
  body: HeartbeatSchema,
  response: HeartbeatResponseSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL],
});

export const unregister = endpoint({
  id: "unregister",
  access: ({ body }) => [
    ...(body.producerGroup === undefined ? [] : [groupPermission(body.producerGroup, "Pub")]),
    ...(body.consumerGroup === undefined ? [] : [groupPermission(body.consumerGroup, "Sub")]),
  ],
  method: "POST",
  path: "/unregister",
  service: "Clients",
  summary: "Removes a client from its groups at once, so a rebalance need not wait 120 s (UNREGISTER_CLIENT).",
  body: z
    .object({ clientId, producerGroup: groupName.optional(), consumerGroup: consumerGroupName.optional() })
    .strict(),
  response: success,
  errors: [ErrorCode.PARAMETER_ILLEGAL],
});

export const consumerConnection = endpoint({
  id: "consumerConnection",
  access: ({ params }) => [groupPermission(params.group, "Get", "Sub")],
  method: "GET",
  path: "/groups/{group}/consumers",
  service: "Clients",
  summary: "The group's live consumers with their subscriptions (GET_CONSUMER_LIST_BY_GROUP, consumerConnection).",
  params: z.object({ group: consumerGroupName }),
  response: ConsumerConnectionSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL],
});

export const producerConnection = endpoint({
  id: "producerConnection",
  access: ({ params }) => [groupPermission(params.group, "Get", "Pub")],
  method: "GET",
  path: "/groups/{group}/producers",
  service: "Clients",
  summary: "The group's live producers (GET_PRODUCER_CONNECTION_LIST, mqadmin's producerConnection).",
  params: z.object({ group: groupName }),
  response: z.object({ producers: z.array(ProducerInfoSchema).max(MAX_LIST_ITEMS) }),
  errors: [ErrorCode.PARAMETER_ILLEGAL],
});

/** A live member with what it reported in its last heartbeat (`runningInfo` absent: it reports nothing). */
export const ConsumerStatusSchema = z
  .object({
    clientId: z.string().max(MAX_TEXT_LENGTH),
    lastHeartbeat: timestamp,
    subscriptionDataSet: z.array(ReportedSubscriptionSchema).max(MAX_LIST_ITEMS),
    subscriptionConsistent: z.boolean(),
    runningInfo: ConsumerRunningInfoSchema.optional(),
  })
  .meta({ id: "ConsumerStatus" });
export type ConsumerStatus = z.output<typeof ConsumerStatusSchema>;

export const consumerStatus = endpoint({
  id: "consumerStatus",
  method: "GET",
  path: "/groups/{group}/status",
  service: "Clients",
  access: ({ params }) => [groupPermission(params.group, "Get", "Sub")],
  summary:
    "Per live member: assigned queues, locks, process-queue sizes, last pull and consume times, as its last heartbeat reported (consumerStatus).",
  params: z.object({ group: consumerGroupName }),
  response: z.object({ consumers: z.array(ConsumerStatusSchema).max(MAX_LIST_ITEMS) }),
  errors: [ErrorCode.PARAMETER_ILLEGAL],
});
