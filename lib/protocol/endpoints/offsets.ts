/**
 * @module Offset endpoints: a group's offsets on a topic (query, commit), the queue handover (release, owners;
 * docs/client.md "Queue handover") and its consumer progress.
 */
import { z } from "zod";
import { groupPermission, topicPermission } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import { MAX_LIST_ITEMS, MAX_OFFSETS_PER_COMMIT, MAX_TEXT_LENGTH } from "../bounds.js";
import { endpoint } from "../endpoint.js";
import {
  brokerName,
  clientId,
  consumerGroupName,
  queueId,
  queueOffset,
  success,
  timestamp,
  topicName,
} from "../fields.js";

export const OffsetEntrySchema = z
  .object({ brokerName, queueId, offset: queueOffset })
  .strict()
  .meta({ id: "OffsetEntry" });
export type OffsetEntry = z.output<typeof OffsetEntrySchema>;

/** A row of RocketMQ's consumerProgress. */
export const ProgressRowSchema = z
  .object({
    topic: z.string().max(MAX_TEXT_LENGTH),
    brokerName: z.string().max(MAX_TEXT_LENGTH),
    queueId,
    brokerOffset: queueOffset,
    consumerOffset: queueOffset,
    /** The lag in messages (sealed offsets excluded): exact over 32 index items, an upper bound past them. */
    diff: z.number().int(),
    /** Store time of the last consumed message (offset - 1), 0 when nothing was consumed. */
    lastTimestamp: timestamp,
  })
  .meta({ id: "ProgressRow" });
export type ProgressRow = z.output<typeof ProgressRowSchema>;

/**
 * Who holds a queue of a group, as its offset record says: the client that wrote the offset last, and
 * whether it released the queue with that write (it stopped reading it and committed where it stopped).
 */
export const QueueOwnerSchema = z
  .object({
    brokerName: z.string().max(MAX_TEXT_LENGTH),
    queueId,
    offset: queueOffset,
    /** The client id of the last commit or release; "" when the commit named no client (an admin reset). */
    owner: z.string().max(MAX_TEXT_LENGTH),
    released: z.boolean(),
    /** Released to this client (the owner's view of the next allocation); "" when not released or unknown. */
    successor: z.string().max(MAX_TEXT_LENGTH),
    updatedAt: timestamp,
  })
  .meta({ id: "QueueOwner" });
export type QueueOwner = z.output<typeof QueueOwnerSchema>;

/** A queue's offset at its release, and who the releasing consumer's rebalance gives it to next. */
export const ReleaseEntrySchema = z
  .object({ brokerName, queueId, offset: queueOffset, successor: clientId.optional() })
  .strict()
  .meta({ id: "ReleaseEntry" });
export type ReleaseEntry = z.output<typeof ReleaseEntrySchema>;

const groupTopic = z.object({ group: consumerGroupName, topic: topicName });
const offsetTable = z.object({ offsetTable: z.array(OffsetEntrySchema).max(MAX_LIST_ITEMS) });

export const queryOffsets = endpoint({
  id: "queryOffsets",
  access: ({ params }) => [groupPermission(params.group, "Sub", "Get"), topicPermission(params.topic, "Sub", "Get")],
  method: "GET",
  path: "/offsets/{group}/{topic}",
  service: "Offsets",
  summary: "The group's committed offset of every queue of the topic (QUERY_CONSUMER_OFFSET).",
  params: groupTopic,
  response: offsetTable,
  errors: [ErrorCode.PARAMETER_ILLEGAL],
});

export const commitOffsets = endpoint({
  id: "commitOffsets",
  access: ({ params }) => [groupPermission(params.group, "Sub"), topicPermission(params.topic, "Sub")],
  method: "PUT",
  path: "/offsets/{group}/{topic}",
  service: "Offsets",
  summary: "Commits offsets, last commit wins (UPDATE_CONSUMER_OFFSET); answers the group's offset table.",
  params: groupTopic,
  body: z
    .object({
      offsetTable: z.array(OffsetEntrySchema).max(MAX_OFFSETS_PER_COMMIT),
      /** The committing consumer: recorded as the queues' owner (see `queueOwners`). */
      clientId: clientId.optional(),
      /**
       * Write only the queues that have no offset yet (a new group's start position): of consumers claiming
       * the same new queue at once, exactly one writes it, and `queueOwners` says which.
       */
      claim: z.boolean().optional(),
    })
    .strict(),
  response: offsetTable,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.TOPIC_NOT_EXIST, ErrorCode.WRONG_BROKER],
});

export const releaseQueues = endpoint({
  id: "releaseQueues",
  access: ({ params }) => [groupPermission(params.group, "Sub"), topicPermission(params.topic, "Sub")],
  method: "POST",
  path: "/offsets/{group}/{topic}/release",
  service: "Offsets",
  summary: "Commits the offsets of queues a consumer stopped reading and marks them released: one write per queue.",
  params: groupTopic,
  body: z.object({ clientId, offsetTable: z.array(ReleaseEntrySchema).min(1).max(MAX_OFFSETS_PER_COMMIT) }).strict(),
  response: success,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.TOPIC_NOT_EXIST],
});

export const queueOwners = endpoint({
  id: "queueOwners",
  access: ({ params }) => [groupPermission(params.group, "Sub", "Get"), topicPermission(params.topic, "Sub", "Get")],
  method: "GET",
  path: "/offsets/{group}/{topic}/owners",
  service: "Offsets",
  summary: "Per queue of the topic with an offset: its offset, its owner and whether the owner released it.",
  params: groupTopic,
  response: z.object({ queues: z.array(QueueOwnerSchema).max(MAX_LIST_ITEMS) }),
  errors: [ErrorCode.PARAMETER_ILLEGAL],
});

export const consumerProgress = endpoint({
  id: "consumerProgress",
  // Without ?topic= the route lists only the topics the caller may Get or Sub.
  access: ({ params, query }) => [
    groupPermission(params.group, "Get", "Sub"),
    ...(query.topic === undefined ? [] : [topicPermission(query.topic, "Get", "Sub")]),
  ],
  method: "GET",
  path: "/groups/{group}/progress",
  service: "Offsets",
  summary: "Broker and consumer offset, lag and last consumed time per queue (mqadmin's consumerProgress).",
  params: z.object({ group: consumerGroupName }),
  query: z.object({ topic: topicName.optional() }).strict(),
  response: z.object({ rows: z.array(ProgressRowSchema).max(MAX_LIST_ITEMS) }),
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.TOPIC_NOT_EXIST],
});

/** Where `resetOffsetByTime` moves every queue: the first message stored at or after a time, or a named end. */
export const ResetTimeSchema = z
  .union([timestamp, z.enum(["now", "first"])])
  .meta({ description: "ms since the epoch, `now` (the broker's clock: past every stored message) or `first`" });

export const resetOffsetByTime = endpoint({
  id: "resetOffsetByTime",
  method: "POST",
  path: "/offsets/{group}/{topic}/reset-by-time",
  service: "Offsets",
  // An operator's move of the whole group (mqadmin's resetOffsetByTime), not a consumer's own commit.
  // The topic too, as every offset route: the reset reads the topic's queues and store times.
  access: ({ params }) => [groupPermission(params.group, "Update"), topicPermission(params.topic, "Sub", "Get")],
  summary:
    "Sets every queue's offset to the first message stored at or after a time (mqadmin's resetOffsetByTime); live consumers move there at their next membership read.",
  params: groupTopic,
  body: z.object({ timestamp: ResetTimeSchema }).strict(),
  response: z.object({ resetAt: timestamp, offsetTable: z.array(OffsetEntrySchema).max(MAX_LIST_ITEMS) }),
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.TOPIC_NOT_EXIST],
});
