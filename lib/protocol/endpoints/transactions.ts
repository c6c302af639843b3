/**
 * @module Transaction endpoints (RocketMQ's transactional messages): store a half message, end it with commit
 * or rollback, read a transaction (what a producer answering a check-back needs, and what operators see).
 * Check-backs reach producers in their heartbeat answers (`transactionChecks`, see clients.ts).
 */
import { z } from "zod";
import { groupPermission, topicPermission } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import { MAX_TEXT_LENGTH } from "../bounds.js";
import { endpoint } from "../endpoint.js";
import { groupName, messageQueue, queueOffset, timestamp } from "../fields.js";
import { PulledMessageSchema } from "./pull.js";
import { SEND_ERRORS, SendMessageSchema, sendTarget } from "./send.js";

/** A transaction id: the half message's UNIQ_KEY, as RocketMQ's transactionId. */
export const transactionId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[0-9A-Za-z_-]+$/, "a transaction id is letters, digits, - and _")
  .meta({ description: "The half message's UNIQ_KEY" });

/** What a producer ends a transaction with (RocketMQ's LocalTransactionState, less UNKNOW). */
export const END_STATES = ["COMMIT_MESSAGE", "ROLLBACK_MESSAGE"] as const;
export type EndState = (typeof END_STATES)[number];

/** A transaction's state at the broker. */
export const TRANSACTION_STATES = ["PENDING", "COMMITTED", "ROLLED_BACK", "DISCARDED"] as const;
export type TransactionState = (typeof TRANSACTION_STATES)[number];

export const HalfMessageRequestSchema = z
  .object({
    producerGroup: groupName,
    /** The queue (or broker) the message goes to on commit. */
    ...sendTarget,
    message: SendMessageSchema,
  })
  .strict()
  .meta({ id: "HalfMessageRequest" });
export type HalfMessageRequest = z.output<typeof HalfMessageRequestSchema>;

export const HalfMessageResponseSchema = z
  .object({
    sendStatus: z.literal("SEND_OK"),
    transactionId,
    msgId: z.string().max(MAX_TEXT_LENGTH),
    /** The queue the message goes to on commit. */
    messageQueue,
    /** The half message's offset in its broker's half queue (RMQ_SYS_TRANS_HALF_TOPIC). */
    queueOffset,
    storeTimestamp: timestamp,
  })
  .meta({ id: "HalfMessageResponse" });
export type HalfMessageResponse = z.output<typeof HalfMessageResponseSchema>;

export const EndTransactionRequestSchema = z
  .object({
    producerGroup: groupName,
    commitOrRollback: z.enum(END_STATES),
    /** Set when this answers a check-back (RocketMQ's fromTransactionCheck). */
    fromTransactionCheck: z.boolean().optional(),
  })
  .strict()
  .meta({ id: "EndTransactionRequest" });
export type EndTransactionRequest = z.output<typeof EndTransactionRequestSchema>;

export const TransactionInfoSchema = z
  .object({
    transactionId,
    producerGroup: z.string().max(MAX_TEXT_LENGTH),
    state: z.enum(TRANSACTION_STATES),
    /** Check-backs sent so far. */
    checkTimes: z.number().int().min(0),
    /** The queue the message goes (or went) to; on commit, `queueOffset` is its offset there. */
    messageQueue,
    queueOffset: queueOffset.optional(),
    storeTimestamp: timestamp,
  })
  .meta({ id: "TransactionInfo" });
export type TransactionInfo = z.output<typeof TransactionInfoSchema>;

export const sendHalfMessage = endpoint({
  id: "sendHalfMessage",
  access: ({ body }) => [topicPermission(body.topic, "Pub"), groupPermission(body.producerGroup, "Pub")],
  method: "POST",
  path: "/transactions",
  service: "Transactions",
  summary: "Stores a half message: durable, invisible to consumers until its transaction commits.",
  body: HalfMessageRequestSchema,
  response: HalfMessageResponseSchema,
  errors: SEND_ERRORS,
});

export const endTransaction = endpoint({
  id: "endTransaction",
  access: ({ body }) => [groupPermission(body.producerGroup, "Pub")],
  method: "POST",
  path: "/transactions/{transactionId}/end",
  service: "Transactions",
  summary: "Commits (delivers once) or rolls back a half message; idempotent, the first end wins (END_TRANSACTION).",
  params: z.object({ transactionId }),
  body: EndTransactionRequestSchema,
  response: TransactionInfoSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.QUERY_NOT_FOUND],
});

/** A transaction of a group: the path names it, the query its producer group. */
const ofGroup = {
  params: z.object({ transactionId }),
  query: z.object({ producerGroup: groupName }).strict(),
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.QUERY_NOT_FOUND],
};

export const transactionInfo = endpoint({
  id: "transactionInfo",
  access: ({ query }) => [groupPermission(query.producerGroup, "Pub", "Get")],
  method: "GET",
  path: "/transactions/{transactionId}",
  service: "Transactions",
  summary: "A transaction's state and the queue its message goes to.",
  ...ofGroup,
  response: TransactionInfoSchema,
});

export const transactionMessage = endpoint({
  id: "transactionMessage",
  access: ({ query }) => [groupPermission(query.producerGroup, "Pub")],
  method: "GET",
  path: "/transactions/{transactionId}/message",
  service: "Transactions",
  summary: "The half message as RocketMQ's MessageExt, for a producer answering a check-back.",
  ...ofGroup,
  response: PulledMessageSchema,
});
