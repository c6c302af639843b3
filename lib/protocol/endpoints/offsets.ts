/** @module Offset endpoints: a group's offsets on a topic (query, commit) and its consumer progress. */
import { z } from "zod";
import { ErrorCode } from "../../core/errors.js";
import { MAX_OFFSETS_PER_COMMIT } from "../bounds.js";
import { endpoint } from "../endpoint.js";
import { brokerName, groupName, queueId, queueOffset, timestamp, topicName } from "../fields.js";

export const OffsetEntrySchema = z
  .object({ brokerName, queueId, offset: queueOffset })
  .strict()
  .meta({ id: "OffsetEntry" });
export type OffsetEntry = z.output<typeof OffsetEntrySchema>;

/** A row of RocketMQ's consumerProgress. */
export const ProgressRowSchema = z
  .object({
    topic: z.string(),
    brokerName: z.string(),
    queueId,
    brokerOffset: queueOffset,
    consumerOffset: queueOffset,
    diff: z.number().int(),
    /** Store time of the last consumed message (offset - 1), 0 when nothing was consumed. */
    lastTimestamp: timestamp,
  })
  .meta({ id: "ProgressRow" });
export type ProgressRow = z.output<typeof ProgressRowSchema>;

const groupTopic = z.object({ group: groupName, topic: topicName });
const offsetTable = z.object({ offsetTable: z.array(OffsetEntrySchema) });

export const queryOffsets = endpoint({
  id: "queryOffsets",
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
  method: "PUT",
  path: "/offsets/{group}/{topic}",
  service: "Offsets",
  summary: "Commits offsets, last commit wins (UPDATE_CONSUMER_OFFSET); answers the group's offset table.",
  params: groupTopic,
  body: z.object({ offsetTable: z.array(OffsetEntrySchema).max(MAX_OFFSETS_PER_COMMIT) }).strict(),
  response: offsetTable,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.TOPIC_NOT_EXIST, ErrorCode.WRONG_BROKER],
});

export const consumerProgress = endpoint({
  id: "consumerProgress",
  method: "GET",
  path: "/groups/{group}/progress",
  service: "Offsets",
  summary: "Broker and consumer offset, lag and last consumed time per queue (mqadmin's consumerProgress).",
  params: z.object({ group: groupName }),
  query: z.object({ topic: topicName.optional() }).strict(),
  response: z.object({ rows: z.array(ProgressRowSchema) }),
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.TOPIC_NOT_EXIST],
});
