/** @module The consumer's endpoint: `POST /pull` (RocketMQ's PULL_MESSAGE, answered at once: no long polling). */
import { z } from "zod";
import { consumePermissions } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import {
  MAX_KEYS_PER_MESSAGE,
  MAX_LIST_ITEMS,
  MAX_PULL_MESSAGES,
  MAX_SUB_EXPRESSION_LENGTH,
  MAX_TEXT_LENGTH,
} from "../bounds.js";
import { endpoint } from "../endpoint.js";
import {
  brokerName,
  bytes,
  checkFilter,
  consumerGroupName,
  expressionType,
  messageProperties,
  queueId,
  queueOffset,
  timestamp,
  topicName,
} from "../fields.js";

export const PullRequestSchema = z
  .object({
    consumerGroup: consumerGroupName,
    topic: topicName,
    brokerName,
    queueId,
    queueOffset,
    /** Default `DEFAULT_PULL_MESSAGES` (32). */
    maxMsgNums: z.number().int().min(1).max(MAX_PULL_MESSAGES).optional(),
    /** TAG: `*` or empty, every message; `TagA || TagB`, those tags. SQL92: a condition (docs/filters.md). */
    subExpression: z.string().max(MAX_SUB_EXPRESSION_LENGTH).optional(),
    /** How `subExpression` reads: `TAG` (default) or `SQL92`. */
    expressionType: expressionType.optional(),
  })
  .strict()
  .superRefine((req, ctx) => checkFilter(req.expressionType, req.subExpression, ctx, "subExpression"))
  .meta({ id: "PullRequest" });
export type PullRequest = z.output<typeof PullRequestSchema>;

export const PULL_STATUSES = ["FOUND", "NO_NEW_MSG", "NO_MATCHED_MSG", "OFFSET_ILLEGAL"] as const;
export type PullStatus = (typeof PULL_STATUSES)[number];

/** A message as a pull hands it out (RocketMQ's MessageExt fields). `msgId` is the UNIQ_KEY. */
export const PulledMessageSchema = z
  .object({
    msgId: z.string().max(MAX_TEXT_LENGTH),
    topic: z.string().max(MAX_TEXT_LENGTH),
    brokerName: z.string().max(MAX_TEXT_LENGTH),
    queueId,
    queueOffset,
    tags: z.string().max(MAX_TEXT_LENGTH),
    keys: z.array(z.string().max(MAX_TEXT_LENGTH)).max(MAX_KEYS_PER_MESSAGE),
    properties: messageProperties,
    body: bytes,
    flag: z.number().int(),
    bornTimestamp: timestamp,
    storeTimestamp: timestamp,
    reconsumeTimes: z.number().int().min(0),
  })
  .meta({ id: "PulledMessage" });
export type PulledMessage = z.output<typeof PulledMessageSchema>;

export const PullResponseSchema = z
  .object({
    pullStatus: z.enum(PULL_STATUSES),
    nextBeginOffset: queueOffset,
    minOffset: queueOffset,
    maxOffset: queueOffset,
    messages: z.array(PulledMessageSchema).max(MAX_LIST_ITEMS),
  })
  .meta({ id: "PullResponse" });
export type PullResponse = z.output<typeof PullResponseSchema>;

export const pull = endpoint({
  id: "pull",
  access: ({ body }) => consumePermissions(body),
  method: "POST",
  path: "/pull",
  service: "Pull",
  summary: "Reads up to maxMsgNums messages of one queue from an offset, filtered by tags or SQL92; deletes nothing.",
  body: PullRequestSchema,
  response: PullResponseSchema,
  errors: [
    ErrorCode.PARAMETER_ILLEGAL,
    ErrorCode.NO_PERMISSION,
    ErrorCode.TOPIC_NOT_EXIST,
    ErrorCode.DATA_CORRUPTED,
    ErrorCode.WRONG_BROKER,
  ],
});
