/**
 * @module The push channel's messages (docs/push-channel.md): one WebSocket per client instance, JSON text
 * frames. The client says who it is and what it holds (`register`, again whenever that changes) and keeps
 * the connection alive (`ping`); the broker sends hints: a queue has messages up to an offset, a group's
 * members changed, check-backs wait for a producer. A hint is never the truth: clients pull and read the
 * consumer list over HTTP as without the channel, so a lost or stale hint only delays, never loses or
 * duplicates. Served by API Gateway's WebSocket API on AWS and by the local server at `CHANNEL_PATH`.
 */
import { z } from "zod";
import { type Permission, topicPermission } from "../core/acl.js";
import { MAX_GROUPS_PER_HEARTBEAT, MAX_TEXT_LENGTH } from "./bounds.js";
import { HeartbeatSchema, heartbeatAccess } from "./endpoints/clients.js";
import { brokerName, groupName, queueId, topicName } from "./fields.js";

/** Where the local server accepts the channel's WebSocket upgrade. */
export const CHANNEL_PATH = "/channel";

/** The most queues one registration names (a consumer holding more falls back to polling the rest). */
export const MAX_CHANNEL_QUEUES = 1024;

/** How long a registration keeps its client live without a ping or a new registration (docs/push-channel.md). */
export const CHANNEL_LEASE_MS = 20 * 60_000;

/** The SDK's ping period: under API Gateway's 10 min idle limit, and under half the lease. */
export const CHANNEL_PING_INTERVAL_MS = 8 * 60_000;

export const ChannelQueueSchema = z.object({ topic: topicName, brokerName, queueId }).strict();
export type ChannelQueue = z.output<typeof ChannelQueueSchema>;

/**
 * Who the client is and what it holds; each registration replaces the previous one of the connection.
 * `heartbeat` is the HTTP heartbeat's body: the broker records it with the channel's lease, so a client
 * with an open channel is live without HTTP heartbeats, and leaves its groups when the connection closes.
 */
export const RegisterFrameSchema = z
  .object({
    type: z.literal("register"),
    heartbeat: HeartbeatSchema,
    /** The queues whose appends this client wants to hear of (a consumer's assigned queues). */
    queues: z.array(ChannelQueueSchema).max(MAX_CHANNEL_QUEUES),
  })
  .strict();
export type RegisterFrame = z.output<typeof RegisterFrameSchema>;

/**
 * What a registration needs on a deployment with auth: what its heartbeat needs over HTTP (Pub on its
 * producer groups, Sub on its consumer groups and their topics) and Sub on the topic of each queue it wants
 * hints of. A client thus never hears of a group or a queue it may not subscribe to.
 */
export function registerAccess(frame: RegisterFrame): Permission[] {
  return [
    ...heartbeatAccess({ body: frame.heartbeat }),
    ...[...new Set(frame.queues.map((q) => q.topic))].map((t) => topicPermission(t, "Sub")),
  ];
}

/** Keeps the connection (API Gateway closes one idle 10 min) and renews the registration's lease. */
export const PingFrameSchema = z.object({ type: z.literal("ping") }).strict();

export const ClientFrameSchema = z.discriminatedUnion("type", [RegisterFrameSchema, PingFrameSchema]);
export type ClientFrame = z.output<typeof ClientFrameSchema>;

/** The answer to a registration or a ping: the broker has it (and the groups it changed were told). */
export const RegisteredFrameSchema = z
  .object({
    type: z.literal("registered"),
    connectionId: z.string().max(MAX_TEXT_LENGTH),
    queues: z.number().int().min(0),
  })
  .strict();

/** Queue `topic/brokerName/queueId` holds messages below `maxOffset` (the next append's offset). */
export const QueueHintFrameSchema = z
  .object({ type: z.literal("queue"), topic: topicName, brokerName, queueId, maxOffset: z.number().int().min(0) })
  .strict();
export type QueueHintFrame = z.output<typeof QueueHintFrameSchema>;

/** The live consumers of `consumerGroup` changed: rebalance (reading the list over HTTP as always). */
export const MembersFrameSchema = z.object({ type: z.literal("members"), consumerGroup: groupName }).strict();

/** Check-backs wait for this producer in `producerGroup`: heartbeat now to take them. */
export const ChecksFrameSchema = z.object({ type: z.literal("checks"), producerGroup: groupName }).strict();

/**
 * The answer to a ping when the broker holds no registration for the connection (it expired or was removed
 * while the socket stayed open): register again, or the client is no longer in its groups.
 */
export const RegisterAgainFrameSchema = z.object({ type: z.literal("register-again") }).strict();

/** A frame the broker refused (bad JSON or schema), with the API's `{code, message}`; nothing was written. */
export const ChannelErrorFrameSchema = z
  .object({ type: z.literal("error"), code: z.string().max(MAX_TEXT_LENGTH), message: z.string().max(MAX_TEXT_LENGTH) })
  .strict();

export const ServerFrameSchema = z.discriminatedUnion("type", [
  RegisteredFrameSchema,
  QueueHintFrameSchema,
  MembersFrameSchema,
  ChecksFrameSchema,
  RegisterAgainFrameSchema,
  ChannelErrorFrameSchema,
]);
export type ServerFrame = z.output<typeof ServerFrameSchema>;

/** The groups one registration may join, as a heartbeat. */
export const MAX_CHANNEL_GROUPS = MAX_GROUPS_PER_HEARTBEAT;

/** Every channel message, for docs/api.md and the OpenAPI extension. */
export const CHANNEL_FRAMES = {
  client: { register: RegisterFrameSchema, ping: PingFrameSchema },
  server: {
    registered: RegisteredFrameSchema,
    queue: QueueHintFrameSchema,
    members: MembersFrameSchema,
    checks: ChecksFrameSchema,
    "register-again": RegisterAgainFrameSchema,
    error: ChannelErrorFrameSchema,
  },
} as const;
