/**
 * @module The messages of `apache.rocketmq.v2` this adapter reads, as zod schemas over what proto-loader
 * decodes (messaging-service.ts): the one parse at the edge. Protobuf has already checked the wire types;
 * these check what protobuf cannot (names, sizes, counts, enum values this endpoint knows) so that a
 * request the broker would refuse is refused here with a status, before anything is written.
 */
import { z } from "zod";
import { clientId, groupName, MAX_PROPERTIES_BYTES, topicName, transactionId } from "../protocol/index.js";

/** Strings this adapter takes from a client that have no schema of their own: at most this long. */
export const MAX_WIRE_STRING = 1024;
/** Addresses an `Endpoints` may list (the clients send one). */
export const MAX_ADDRESSES = 16;
/** Messages one SendMessage may carry (the clients send one; a batch is at most this). */
export const MAX_MESSAGES_PER_SEND = 32;
/** Receipt handles one AckMessage may carry. */
export const MAX_ACK_ENTRIES = 32;
/** Topics a producer's Settings, or subscriptions a consumer's, may list. */
export const MAX_SETTINGS_TOPICS = 256;

const text = z.string().max(MAX_WIRE_STRING);

/** A topic as a request names it: a Nimbus topic name (namespaces are not served). */
export const topicResource = z.object({
  resourceNamespace: z.literal("", "namespaces are not served"),
  name: topicName,
});
export const groupResource = z.object({
  resourceNamespace: z.literal("", "namespaces are not served"),
  name: groupName,
});

export const AddressSchema = z.object({ host: z.string().min(1).max(255), port: z.number().int().min(0).max(65535) });
export const EndpointsSchema = z.object({
  scheme: z.enum(["ADDRESS_SCHEME_UNSPECIFIED", "IPv4", "IPv6", "DOMAIN_NAME"]),
  addresses: z.array(AddressSchema).max(MAX_ADDRESSES),
});
export type Endpoints = z.output<typeof EndpointsSchema>;

/** A Duration or Timestamp: seconds and nanos. */
export const SecondsSchema = z.object({
  seconds: z
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER / 1000),
  nanos: z.number().int().min(0).max(999_999_999),
});
export type Seconds = z.output<typeof SecondsSchema>;
export const toMs = (s: Seconds): number => s.seconds * 1000 + Math.floor(s.nanos / 1_000_000);
export const fromMs = (ms: number): Seconds => ({ seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 });

export const MESSAGE_TYPES = [
  "MESSAGE_TYPE_UNSPECIFIED",
  "NORMAL",
  "FIFO",
  "DELAY",
  "TRANSACTION",
  "LITE",
  "PRIORITY",
] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export const SystemPropertiesSchema = z.object({
  tag: text.optional(),
  keys: z.array(text).max(64),
  messageId: text,
  bodyEncoding: z.enum(["ENCODING_UNSPECIFIED", "IDENTITY", "GZIP"]),
  messageType: z.enum(MESSAGE_TYPES),
  bornTimestamp: SecondsSchema.nullable(),
  bornHost: text,
  deliveryTimestamp: SecondsSchema.optional(),
  messageGroup: text.optional(),
  liteTopic: text.optional(),
  priority: z.number().int().optional(),
});

export const WireMessageSchema = z.object({
  topic: topicResource,
  userProperties: z
    .record(z.string(), z.string())
    .refine(
      (p) => Object.entries(p).reduce((n, [k, v]) => n + k.length + v.length, 0) <= MAX_PROPERTIES_BYTES,
      `user properties are over ${MAX_PROPERTIES_BYTES} characters`,
    ),
  systemProperties: SystemPropertiesSchema,
  body: z.instanceof(Uint8Array),
});
export type WireMessage = z.output<typeof WireMessageSchema>;

export const QueryRouteRequestSchema = z.object({ topic: topicResource, endpoints: EndpointsSchema.nullable() });
export const SendMessageRequestSchema = z.object({
  messages: z.array(WireMessageSchema).min(1).max(MAX_MESSAGES_PER_SEND),
});
export const HeartbeatRequestSchema = z.object({
  group: groupResource.optional(),
  clientType: z.string(),
});
export const EndTransactionRequestSchema = z.object({
  topic: topicResource,
  messageId: text,
  transactionId,
  resolution: z.enum(["COMMIT", "ROLLBACK"]),
  source: z.enum(["SOURCE_UNSPECIFIED", "SOURCE_CLIENT", "SOURCE_SERVER_CHECK"]),
});
export const NotifyClientTerminationRequestSchema = z.object({ group: groupResource.optional() });
export const QueryAssignmentRequestSchema = z.object({
  topic: topicResource,
  group: groupResource,
  endpoints: EndpointsSchema.nullable(),
});

export const FilterExpressionSchema = z.object({
  type: z.enum(["FILTER_TYPE_UNSPECIFIED", "TAG", "SQL"]),
  expression: z.string().max(4096),
});

export const SubscriptionEntrySchema = z.object({
  topic: topicResource,
  expression: FilterExpressionSchema.nullable(),
});

export const CLIENT_TYPES = [
  "CLIENT_TYPE_UNSPECIFIED",
  "PRODUCER",
  "PUSH_CONSUMER",
  "SIMPLE_CONSUMER",
  "PULL_CONSUMER",
  "LITE_PUSH_CONSUMER",
  "LITE_SIMPLE_CONSUMER",
] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

export const ClientSettingsSchema = z.object({
  clientType: z.enum(CLIENT_TYPES).optional(),
  requestTimeout: SecondsSchema.nullish(),
  pubSub: z.enum(["publishing", "subscription"]).optional(),
  publishing: z.object({ topics: z.array(topicResource).max(MAX_SETTINGS_TOPICS) }).nullish(),
  subscription: z
    .object({
      group: groupResource.optional(),
      subscriptions: z.array(SubscriptionEntrySchema).max(MAX_SETTINGS_TOPICS),
      longPollingTimeout: SecondsSchema.optional(),
    })
    .nullish(),
  userAgent: z.object({ language: z.string().max(64), version: z.string().max(64) }).nullable(),
});
export type ClientSettings = z.output<typeof ClientSettingsSchema>;

const receiptHandle = z.string().min(1).max(MAX_WIRE_STRING);

export const ReceiveMessageRequestSchema = z.object({
  group: groupResource,
  messageQueue: z.object({ topic: topicResource, broker: z.object({ name: text }).nullable() }),
  filterExpression: FilterExpressionSchema.nullable(),
  batchSize: z.number().int().min(0).max(1024),
  invisibleDuration: SecondsSchema.optional(),
  longPollingTimeout: SecondsSchema.optional(),
});
export const AckMessageRequestSchema = z.object({
  group: groupResource,
  topic: topicResource,
  entries: z
    .array(z.object({ messageId: text, receiptHandle }))
    .min(1)
    .max(MAX_ACK_ENTRIES),
});
export const ChangeInvisibleDurationRequestSchema = z.object({
  group: groupResource,
  topic: topicResource,
  receiptHandle,
  invisibleDuration: SecondsSchema,
  messageId: text,
});
export const ForwardMessageToDeadLetterQueueRequestSchema = z.object({
  group: groupResource,
  topic: topicResource,
  receiptHandle,
  messageId: text,
});

/** A command a client writes on its Telemetry stream; only `settings` is acted on. */
export const TelemetryCommandSchema = z.object({ command: z.string().optional(), settings: z.unknown().optional() });

/** The client id every call carries in `x-mq-client-id`. */
export const clientIdHeader = clientId;
