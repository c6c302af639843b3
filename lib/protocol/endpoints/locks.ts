/**
 * @module Orderly consumption's queue locks, as RocketMQ's LOCK_BATCH_MQ / UNLOCK_BATCH_MQ: an orderly
 * consumer locks the queues it is assigned before consuming them, renews the locks every 20 s and unlocks
 * them when they leave it (docs/client.md "Orderly consumption").
 */
import { z } from "zod";
import { groupPermission, topicPermission } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import { MAX_LIST_ITEMS, MAX_OFFSETS_PER_COMMIT, MAX_TEXT_LENGTH } from "../bounds.js";
import { endpoint } from "../endpoint.js";
import { brokerName, clientId, consumerGroupName, queueId, topicName } from "../fields.js";

/** One queue of the topic named by the path. */
export const QueueRefSchema = z.object({ brokerName, queueId }).strict().meta({ id: "QueueRef" });
export type QueueRef = z.output<typeof QueueRefSchema>;

/** A queue's lock after a lock request: granted (or renewed) to the caller, or held by `holder`. */
export const LockedQueueSchema = z
  .object({
    brokerName: z.string().max(MAX_TEXT_LENGTH),
    queueId,
    locked: z.boolean(),
    /** Who holds the lease now: the caller when `locked`; "" when nobody does. */
    holder: z.string().max(MAX_TEXT_LENGTH),
    /** The lease record's epoch (it grows by one with every lock, renewal and unlock of the queue). */
    epoch: z.number().int().min(0),
    /** How long the lease lasts from the moment the request was sent; 0 when not locked. */
    leaseMillis: z.number().int().min(0),
    /**
     * The caller held the queue's previous lease and nobody held it since: what it cached and consumed
     * under that lease is still valid. False on a first lock, and after another holder or an unlock.
     */
    continued: z.boolean(),
  })
  .meta({ id: "LockedQueue" });
export type LockedQueue = z.output<typeof LockedQueueSchema>;

const groupTopic = z.object({ group: consumerGroupName, topic: topicName });
const lockBody = z
  .object({ clientId, queues: z.array(QueueRefSchema).min(1).max(MAX_OFFSETS_PER_COMMIT) })
  .strict()
  .refine(
    (b) => new Set(b.queues.map((q) => `${q.brokerName}:${q.queueId}`)).size === b.queues.length,
    "a queue appears twice",
  );

/** Lock and unlock take one request (the caller's queues of the path's group and topic, Sub on both). */
function queueLockRequest<R extends z.ZodType>(id: string, path: `/${string}`, summary: string, response: R) {
  return endpoint({
    id,
    method: "POST",
    path,
    service: "Offsets",
    access: ({ params }) => [groupPermission(params.group, "Sub"), topicPermission(params.topic, "Sub")],
    summary,
    params: groupTopic,
    body: lockBody,
    response,
    errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.TOPIC_NOT_EXIST],
  });
}

export const lockQueues = queueLockRequest(
  "lockQueues",
  "/offsets/{group}/{topic}/lock",
  "Locks or renews queues for an orderly consumer; a queue another live lease holds is refused (LOCK_BATCH_MQ).",
  z.object({ queues: z.array(LockedQueueSchema).max(MAX_LIST_ITEMS) }),
);

export const unlockQueues = queueLockRequest(
  "unlockQueues",
  "/offsets/{group}/{topic}/unlock",
  "Ends the caller's locks of queues (UNLOCK_BATCH_MQ); answers the queues it held. Others' locks stay.",
  z.object({ unlocked: z.array(QueueRefSchema).max(MAX_LIST_ITEMS) }),
);

export const queueLocks = endpoint({
  id: "queueLocks",
  method: "GET",
  path: "/offsets/{group}/{topic}/locks",
  service: "Offsets",
  access: ({ params }) => [groupPermission(params.group, "Sub", "Get"), topicPermission(params.topic, "Sub", "Get")],
  summary: "The current lock of every queue of the topic: holder and remaining lease (mqadmin has no such command).",
  params: groupTopic,
  response: z.object({ queues: z.array(LockedQueueSchema).max(MAX_LIST_ITEMS) }),
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.TOPIC_NOT_EXIST],
});
