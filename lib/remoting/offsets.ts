/**
 * @module Consumer offsets (QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET), queue bounds (GET_MIN_OFFSET,
 * GET_MAX_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME), orderly consumers' queue locks
 * (LOCK_BATCH_MQ, UNLOCK_BATCH_MQ) and CONSUMER_SEND_MSG_BACK, each on the broker of the connection's address
 * (or the one its header names). A group without an offset on a queue is QUERY_NOT_FOUND, as RocketMQ answers a
 * group's first start (the client then starts where its consumeFromWhere says).
 */

import { z } from "zod";
import { searchOffsetByTime } from "../broker/consume/index.js";
import { servedBroker } from "../http/routes/broker-scope.js";
import {
  brokerName,
  clientId,
  consumerGroupName,
  MAX_OFFSETS_PER_COMMIT,
  type QueueRef,
  queueId,
  SendBackRequestSchema,
  topicName,
} from "../protocol/index.js";
import { type Call, jsonOf } from "./call.js";
import { type Answer, badHeader, jsonBody, ResponseCode, refusal, success } from "./codes.js";
import { decodeWith } from "./decode.js";
import { physicalOffset } from "./wire-message.js";

async function queueOf(call: Call, access: "read" | "write" = "read") {
  const f = call.fields;
  const topic = decodeWith(topicName, f.string("topic"), "topic");
  const named = f.optString("brokerName") ?? f.optString("bname");
  const brokerName = (await servedBroker(call.ctx, named, access)) ?? call.scope.brokerName;
  return { topic, brokerName, queueId: f.int("queueId") };
}

export async function queryConsumerOffset(call: Call): Promise<Answer> {
  const q = await queueOf(call);
  const group = decodeWith(consumerGroupName, call.fields.string("consumerGroup"), "consumerGroup");
  const offsets = await call.ctx.broker.offsets.query(group, q.topic);
  const found = offsets.find((e) => e.brokerName === q.brokerName && e.queueId === q.queueId);
  if (found === undefined)
    return refusal(ResponseCode.QUERY_NOT_FOUND, "Not found, maybe this group consumer boot first");
  return success({ offset: String(found.offset) });
}

export async function updateConsumerOffset(call: Call): Promise<Answer> {
  const q = await queueOf(call);
  const group = decodeWith(consumerGroupName, call.fields.string("consumerGroup"), "consumerGroup");
  const entry = [{ brokerName: q.brokerName, queueId: q.queueId, offset: call.fields.number("commitOffset") }];
  // Every 5 s whether the offset moved or not: one this process stored already is not written again.
  await call.ctx.broker.offsets.commitMoved(group, q.topic, entry, call.scope.clientId);
  return success();
}

export async function getMaxOffset(call: Call): Promise<Answer> {
  const status = await call.ctx.broker.queueLog.status(await queueOf(call));
  return success({ offset: String(status.maxOffset) });
}

export async function getMinOffset(call: Call): Promise<Answer> {
  const status = await call.ctx.broker.queueLog.status(await queueOf(call));
  return success({ offset: String(status.minOffset) });
}

export async function searchOffset(call: Call): Promise<Answer> {
  const q = await queueOf(call);
  const offset = await searchOffsetByTime(call.ctx.broker.queueLog, q, call.fields.number("timestamp"));
  return success({ offset: String(offset) });
}

export async function earliestStoreTime(call: Call): Promise<Answer> {
  const q = await queueOf(call);
  const queueLog = call.ctx.broker.queueLog;
  const status = await queueLog.status(q);
  const read = await queueLog.read(q, status.minOffset, { maxMessages: 1 });
  return success({ timestamp: String(read.messages[0]?.storeTimestamp ?? 0) });
}

/** A lock body's queue as RocketMQ's MessageQueue serializes it. */
const WireQueueSchema = z.object({ topic: topicName, brokerName, queueId });
type WireQueue = z.output<typeof WireQueueSchema>;

/** LOCK_BATCH_MQ's and UNLOCK_BATCH_MQ's body (LockBatchRequestBody): the HTTP lock request's bounds. */
const LockBodySchema = z.object({
  consumerGroup: consumerGroupName,
  clientId,
  mqSet: z
    .array(WireQueueSchema)
    .max(MAX_OFFSETS_PER_COMMIT)
    .refine(
      (qs) => new Set(qs.map((q) => `${q.topic}\n${q.brokerName}\n${q.queueId}`)).size === qs.length,
      "a queue appears twice",
    ),
});

export function lockBody(call: Call): { group: string; clientId: string; queues: WireQueue[] } {
  const body = decodeWith(LockBodySchema, jsonOf(call), "lock body");
  return { group: body.consumerGroup, clientId: body.clientId, queues: body.mqSet };
}

/**
 * Locks per topic, as the broker's lock service takes them; answers the queues this client holds now. A queue its
 * topic does not have (a topic deleted, its queues shrunk: a client keeps its old queues while its route refresh
 * fails) is not locked and not answered, the others are: RocketMQ's client locks every queue of a broker in one
 * request, and one stray must not leave the rest unlocked.
 */
export async function lockBatch(call: Call): Promise<Answer> {
  const { group, clientId, queues } = lockBody(call);
  const { broker } = call.ctx;
  const locked: WireQueue[] = [];
  for (const [topic, list] of byTopic(queues)) {
    const present = await broker.routeCache.queuesOf(topic, list);
    if (present.length === 0) continue;
    for (const r of await broker.locks.lock(group, topic, clientId, present))
      if (r.locked) locked.push({ topic, brokerName: r.brokerName, queueId: r.queueId });
  }
  return success(undefined, jsonBody({ lockOKMQSet: locked }));
}

/** Unlocks every queue named, its topic's route or not: a lock of a queue since gone ends too. */
export async function unlockBatch(call: Call): Promise<Answer> {
  const { group, clientId, queues } = lockBody(call);
  for (const [topic, list] of byTopic(queues)) await call.ctx.broker.locks.unlock(group, topic, clientId, list);
  return success();
}

export function byTopic(queues: readonly WireQueue[]): Map<string, QueueRef[]> {
  const out = new Map<string, QueueRef[]>();
  for (const { topic, brokerName, queueId } of queues) {
    const list = out.get(topic);
    if (list === undefined) out.set(topic, [{ brokerName, queueId }]);
    else list.push({ brokerName, queueId });
  }
  return out;
}

/**
 * The failed message is named by its commit-log offset (wire-message.ts `physicalOffset`): the queue id and the
 * offset are in it; its topic is the one the client names or the group's retry topic, whichever matches.
 */
export async function consumerSendBack(call: Call): Promise<Answer> {
  const f = call.fields;
  const group = f.string("group");
  const offset = f.long("offset");
  const queueId = Number((offset >> 32n) & 0x3ffn);
  const queueOffset = Number(offset & 0xffffffffn);
  const brokerName = call.scope.brokerName;
  const candidates = [f.optString("originTopic"), `%RETRY%${group}`].filter((t) => t !== undefined);
  const topic = candidates.find((t) => physicalOffset(t, brokerName, queueId, queueOffset) === offset);
  if (topic === undefined) throw badHeader("the offset names no message of this broker's topic");
  const request = decodeWith(
    SendBackRequestSchema,
    {
      consumerGroup: group,
      topic,
      brokerName,
      queueId,
      queueOffset,
      delayLevel: f.optInt("delayLevel"),
      maxReconsumeTimes: f.optInt("maxReconsumeTimes"),
    },
    "CONSUMER_SEND_MSG_BACK",
  );
  await call.ctx.broker.sendBack.sendBack(request);
  return success();
}
