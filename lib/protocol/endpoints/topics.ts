/** @module Topic administration endpoints (mqadmin's updateTopic, topicList, deleteTopic, topicStatus). */
import { z } from "zod";
import { clusterPermission, topicPermission } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import { MAX_LIST_ITEMS, MAX_TEXT_LENGTH } from "../bounds.js";
import { endpoint } from "../endpoint.js";
import {
  brokerName,
  queueId,
  queueNums,
  queueOffset,
  timestamp,
  topicName,
  topicPerm,
  userTopicName,
} from "../fields.js";
import { TopicRouteDataSchema } from "./name-server.js";

export const TopicConfigSchema = z
  .object({
    readQueueNums: queueNums.optional(),
    writeQueueNums: queueNums.optional(),
    perm: topicPerm.optional(),
    /** Brokers to set the QueueData on; default every live master. Other brokers' QueueData stays as it was. */
    brokerNames: z.array(brokerName).max(MAX_LIST_ITEMS).min(1).optional(),
    /**
     * The topic attribute `key.index` (mqadmin `updateTopic -a +key.index=false`): whether the message index
     * keeps its messages' keys (queryMsgByKey). Ids are always indexed. Absent: unchanged (new topics: true).
     */
    keyIndex: z.boolean().optional(),
  })
  .strict()
  .meta({ id: "TopicConfig" });
export type TopicConfig = z.output<typeof TopicConfigSchema>;

/** A queue's write load against DynamoDB's per-key ceiling, from its newest index items (`?load=true` only). */
export const QueueLoadSchema = z
  .object({
    /** Keys the queue's index is spread over (a hot topic's K; 1 otherwise). */
    indexKeys: z.number().int().min(1).max(64),
    /** Index items read for the measure (at most 32 per key). */
    sampledAppends: z.number().int().min(0),
    appendsPerSecond: z.number().min(0),
    messagesPerSecond: z.number().min(0),
    /** Write units per second of the queue's busiest partition key (index puts; a one-key queue's counter too). */
    busiestKeyWriteUnits: z.number().min(0),
    /** That over the key's ceiling, 1,000 write units/s. */
    busiestKeyShare: z.number().min(0),
    /** The busiest key at 80 % of its ceiling or more: throttling is near (docs/deploy.md, capacity). */
    nearLimit: z.boolean(),
  })
  .meta({ id: "QueueLoad" });

export const QueueStatusSchema = z
  .object({
    brokerName: z.string().max(MAX_TEXT_LENGTH),
    queueId,
    minOffset: queueOffset,
    maxOffset: queueOffset,
    lastUpdateTimestamp: timestamp,
    load: QueueLoadSchema.optional(),
  })
  .meta({ id: "QueueStatus" });
export type QueueStatus = z.output<typeof QueueStatusSchema>;

export const listTopics = endpoint({
  id: "listTopics",
  access: () => [clusterPermission("List")],
  method: "GET",
  path: "/topics",
  service: "Topics",
  summary: "Every topic (one partition query, never a scan).",
  response: z.object({ topics: z.array(z.string().max(MAX_TEXT_LENGTH)).max(MAX_LIST_ITEMS) }),
  errors: [],
});

export const updateTopic = endpoint({
  id: "updateTopic",
  access: ({ params }) => [topicPermission(params.topic, "Create", "Update")],
  method: "PUT",
  path: "/topics/{topic}",
  service: "Topics",
  summary: "Creates or updates the topic's QueueData on the named live masters (default all); answers the route.",
  params: z.object({ topic: userTopicName }),
  // An empty request body means every default.
  body: TopicConfigSchema.optional(),
  response: TopicRouteDataSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.SERVICE_NOT_AVAILABLE],
});

export const deleteTopic = endpoint({
  id: "deleteTopic",
  access: ({ params }) => [topicPermission(params.topic, "Delete")],
  method: "DELETE",
  path: "/topics/{topic}",
  service: "Topics",
  summary: "Deletes the topic's route at once; its messages stay until retention.",
  params: z.object({ topic: userTopicName }),
  response: z.object({ topic: z.string().max(MAX_TEXT_LENGTH), deleted: z.literal(true) }),
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.TOPIC_NOT_EXIST],
});

export const topicStatus = endpoint({
  id: "topicStatus",
  access: ({ params }) => [topicPermission(params.topic, "Get", "Sub")],
  method: "GET",
  path: "/topics/{topic}/status",
  service: "Topics",
  summary:
    "Min and max offset and last store time of every queue of the topic on every broker; with load=true, each queue's write load against its keys' ceiling (one query per index key, newest 32 items).",
  params: z.object({ topic: topicName }),
  query: z.object({ load: z.enum(["true", "false"]).optional() }).strict(),
  response: z.object({ queues: z.array(QueueStatusSchema).max(MAX_LIST_ITEMS) }),
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.TOPIC_NOT_EXIST],
});
