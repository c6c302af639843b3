/**
 * @module Finding messages without their offset (mqadmin's queryMsgById, queryMsgByUniqueKey, queryMsgByKey):
 * by UNIQ_KEY and by key, through the broker's message index (docs/query.md).
 */
import { z } from "zod";
import { topicPermission } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import {
  MAX_QUERY_BY_ID_MESSAGES,
  MAX_QUERY_CURSOR_LENGTH,
  MAX_QUERY_KEY_LENGTH,
  MAX_QUERY_MESSAGES,
} from "../bounds.js";
import { endpoint } from "../endpoint.js";
import { timestamp, topicName } from "../fields.js";
import { PulledMessageSchema } from "./pull.js";

/** A message id or key: no blanks, no control characters (a key never holds one: see MessageConst.KEY_SEPARATOR). */
const queryText = z
  .string()
  .min(1)
  .max(MAX_QUERY_KEY_LENGTH)
  // A check rather than a `pattern`: OpenAPI tools (schemathesis) cannot build values for `\p{Cc}`.
  .refine((text) => !/[\s\p{Cc}]/u.test(text), "has no blanks and no control characters");

/** Store times `[begin, end]` in ms since the epoch; `end` defaults to now. */
const timeRange = {
  begin: timestamp.optional(),
  end: timestamp.optional(),
};

export const QueryByIdRequestSchema = z
  .object({
    topic: topicName,
    /** The UNIQ_KEY (the `msgId` sends answer); it carries its birth time, which bounds the search. */
    msgId: queryText,
    ...timeRange,
  })
  .strict()
  .meta({ id: "QueryByIdRequest" });
export type QueryByIdRequest = z.output<typeof QueryByIdRequestSchema>;

export const QueryByKeyRequestSchema = z
  .object({
    topic: topicName,
    key: queryText,
    ...timeRange,
    /** At most this many messages (default and maximum MAX_QUERY_MESSAGES, mqadmin's 64). */
    maxNum: z.number().int().min(1).max(MAX_QUERY_MESSAGES).optional(),
    /** The previous page's `nextCursor`. */
    cursor: z.string().max(MAX_QUERY_CURSOR_LENGTH).optional(),
  })
  .strict()
  .meta({ id: "QueryByKeyRequest" });
export type QueryByKeyRequest = z.output<typeof QueryByKeyRequestSchema>;

export const QueryByIdResponseSchema = z
  .object({ messages: z.array(PulledMessageSchema).min(1).max(MAX_QUERY_BY_ID_MESSAGES) })
  .meta({ id: "QueryByIdResponse" });
export type QueryByIdResponse = z.output<typeof QueryByIdResponseSchema>;

export const QueryByKeyResponseSchema = z
  .object({
    /** Oldest first (store time, then broker, queue and offset). */
    messages: z.array(PulledMessageSchema).max(MAX_QUERY_MESSAGES),
    /** Present when more messages may match: send it as `cursor` for the next page. */
    nextCursor: z.string().max(MAX_QUERY_CURSOR_LENGTH).optional(),
  })
  .meta({ id: "QueryByKeyResponse" });
export type QueryByKeyResponse = z.output<typeof QueryByKeyResponseSchema>;

export const queryMessageById = endpoint({
  id: "queryMessageById",
  // Message bodies: Sub on the topic, as RocketMQ's queryMessage and viewMessage (Get reads status, not bodies).
  access: ({ body }) => [topicPermission(body.topic, "Sub")],
  method: "POST",
  path: "/messages/by-id",
  service: "Pull",
  summary: "The message (and its copies) with a UNIQ_KEY, found by the message index (queryMsgByUniqueKey).",
  body: QueryByIdRequestSchema,
  response: QueryByIdResponseSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.TOPIC_NOT_EXIST, ErrorCode.QUERY_NOT_FOUND],
});

export const queryMessagesByKey = endpoint({
  id: "queryMessagesByKey",
  // Message bodies: Sub on the topic, as RocketMQ's queryMessage and viewMessage (Get reads status, not bodies).
  access: ({ body }) => [topicPermission(body.topic, "Sub")],
  method: "POST",
  path: "/messages/by-key",
  service: "Pull",
  summary: "Messages of a topic with a key, stored in a time range, a bounded page at a time (queryMsgByKey).",
  body: QueryByKeyRequestSchema,
  response: QueryByKeyResponseSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.TOPIC_NOT_EXIST],
});
