/** @module Client endpoints: heartbeats, unregistering, and a group's live consumers. */
import { z } from "zod";
import { groupPermission, type Permission, topicPermission } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import { MAX_GROUPS_PER_HEARTBEAT, MAX_SUB_EXPRESSION_LENGTH, MAX_SUBSCRIPTIONS_PER_GROUP } from "../bounds.js";
import { endpoint } from "../endpoint.js";
import { clientId, groupName, success, timestamp, topicName } from "../fields.js";

export const CONSUME_TYPES = ["CONSUME_ACTIVELY", "CONSUME_PASSIVELY", "CONSUME_POP"] as const;
export const MESSAGE_MODELS = ["CLUSTERING", "BROADCASTING"] as const;
export type MessageModel = (typeof MESSAGE_MODELS)[number];
export const CONSUME_FROM_WHERE = [
  "CONSUME_FROM_LAST_OFFSET",
  "CONSUME_FROM_FIRST_OFFSET",
  "CONSUME_FROM_TIMESTAMP",
] as const;

export const SubscriptionDataSchema = z
  .object({ topic: topicName, subString: z.string().max(MAX_SUB_EXPRESSION_LENGTH) })
  .meta({ id: "SubscriptionData" });

/** Unknown fields are accepted and dropped, so RocketMQ-shaped heartbeats with more fields still pass. */
export const ConsumerDataSchema = z
  .object({
    groupName,
    consumeType: z.enum(CONSUME_TYPES).optional(),
    messageModel: z.enum(MESSAGE_MODELS).optional(),
    consumeFromWhere: z.enum(CONSUME_FROM_WHERE).optional(),
    subscriptionDataSet: z.array(SubscriptionDataSchema).max(MAX_SUBSCRIPTIONS_PER_GROUP).optional(),
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
  .object({ transactionId: z.string(), producerGroup: z.string(), checkTimes: z.number().int().min(1) })
  .meta({ id: "TransactionCheck" });
export type TransactionCheck = z.output<typeof TransactionCheckSchema>;

/** A heartbeat's answer: success, and the check-backs waiting for this client (producers only). */
export const HeartbeatResponseSchema = z
  .object({ code: z.literal("SUCCESS"), transactionChecks: z.array(TransactionCheckSchema) })
  .meta({ id: "HeartbeatResponse" });
export type HeartbeatResponse = z.output<typeof HeartbeatResponseSchema>;

/** A live producer of a group (mqadmin's producerConnection). */
export const ProducerInfoSchema = z
  .object({
    clientId: z.string(),
    /** The client's IP, from its client id (`ip@instance`). */
    clientAddr: z.string(),
    language: z.string(),
    version: z.string(),
    /** It answers transaction check-backs. */
    transactional: z.boolean(),
    lastHeartbeat: timestamp,
  })
  .meta({ id: "ProducerInfo" });
export type ProducerInfo = z.output<typeof ProducerInfoSchema>;

/** A live consumer of a group, as its last heartbeat described it. */
export const ConsumerInfoSchema = z
  .object({
    clientId: z.string(),
    consumeType: z.string(),
    messageModel: z.enum(MESSAGE_MODELS),
    consumeFromWhere: z.string(),
    subscriptionDataSet: z.array(z.object({ topic: z.string(), subString: z.string() })),
    lastHeartbeat: timestamp,
  })
  .meta({ id: "ConsumerInfo" });
export type ConsumerInfo = z.output<typeof ConsumerInfoSchema>;

/** The ids (RocketMQ's consumerIdList) and each consumer's details (an extension). */
export const ConsumerConnectionSchema = z
  .object({ consumerIdList: z.array(z.string()), consumers: z.array(ConsumerInfoSchema) })
  .meta({ id: "ConsumerConnection" });
export type ConsumerConnection = z.output<typeof ConsumerConnectionSchema>;

/**
 * A heartbeat registers the client in its groups: Pub on each producer group; Sub on each consumer group and
 * on each topic it subscribes to (as RocketMQ 5 checks HEART_BEAT).
 */
function heartbeatAccess({ body }: { body: HeartbeatData }): Permission[] {
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
  body: z.object({ clientId, producerGroup: groupName.optional(), consumerGroup: groupName.optional() }).strict(),
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
  params: z.object({ group: groupName }),
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
  response: z.object({ producers: z.array(ProducerInfoSchema) }),
  errors: [ErrorCode.PARAMETER_ILLEGAL],
});
