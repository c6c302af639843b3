/**
 * @module PULL_MESSAGE: the broker's pull, with RocketMQ's long polling. A pull that finds no new message and may
 * suspend (sysFlag FLAG_SUSPEND) waits on its queue until an append wakes it or its suspend time is over (at most
 * the door's `maxSuspendMs`), then reads once more. The offset it carries (FLAG_COMMIT_OFFSET) goes to the broker's
 * carried offsets, which write it within a second, as RocketMQ's broker keeps it in memory and persists it every
 * 5 s (lib/broker/consume/carried-offsets.ts). The subscription is the one
 * the header carries (FLAG_SUBSCRIPTION), else the one the client's heartbeat named on this connection, else every
 * message. Messages are answered in RocketMQ's stored-message encoding, at most `MAX_PULL_ANSWER_BYTES` of them
 * (the rest come with the next pull).
 *
 * Statuses: FOUND -> SUCCESS, NO_NEW_MSG -> PULL_NOT_FOUND, NO_MATCHED_MSG -> PULL_RETRY_IMMEDIATELY,
 * OFFSET_ILLEGAL -> PULL_OFFSET_MOVED (the client moves to `nextBeginOffset`).
 */

import type { PulledRecords } from "../broker/consume/index.js";
import { servedBroker } from "../http/routes/broker-scope.js";
import { type PullRequest, PullRequestSchema, type PullResponse } from "../protocol/index.js";
import type { Call } from "./call.js";
import { type Answer, ResponseCode } from "./codes.js";
import { decodeWith } from "./decode.js";
import { encodeStoredRecords } from "./stored-records.js";

const FLAG_COMMIT_OFFSET = 0x1;
const FLAG_SUSPEND = 0x2;
const FLAG_SUBSCRIPTION = 0x4;

/** Messages answered by one pull, at most (RocketMQ's maxTransferCountOnMessageInMemory is 32). */
export const MAX_PULL_ANSWER_MESSAGES = 64;
/** Bytes of messages answered by one pull, at most; one message more than this is answered alone. */
export const MAX_PULL_ANSWER_BYTES = 4 * 1024 * 1024;

const STATUS_CODE: Record<PullResponse["pullStatus"], number> = {
  FOUND: ResponseCode.SUCCESS,
  NO_NEW_MSG: ResponseCode.PULL_NOT_FOUND,
  NO_MATCHED_MSG: ResponseCode.PULL_RETRY_IMMEDIATELY,
  OFFSET_ILLEGAL: ResponseCode.PULL_OFFSET_MOVED,
};

export async function pullMessage(call: Call): Promise<Answer> {
  const f = call.fields;
  const sysFlag = f.int("sysFlag");
  const consumerGroup = f.string("consumerGroup");
  const topic = f.string("topic");
  const brokerName =
    (await servedBroker(call.ctx, f.optString("brokerName") ?? f.optString("bname"), "read")) ?? call.scope.brokerName;
  const known = call.scope.subscriptions.get(`${consumerGroup}\n${topic}`);
  const fromHeader = (sysFlag & FLAG_SUBSCRIPTION) !== 0 ? f.optString("subscription") : undefined;
  const expressionType = (fromHeader === undefined ? known?.expressionType : f.optString("expressionType")) ?? "TAG";
  const request = decodeWith(
    PullRequestSchema,
    {
      consumerGroup,
      topic,
      brokerName,
      queueId: f.int("queueId"),
      queueOffset: f.number("queueOffset"),
      maxMsgNums: Math.min(Math.max(1, f.int("maxMsgNums")), MAX_PULL_ANSWER_MESSAGES),
      subExpression: fromHeader ?? known?.subString ?? "*",
      expressionType,
    },
    "PULL_MESSAGE",
  );
  const broker = call.ctx.broker;
  const commitOffset = f.optNumber("commitOffset") ?? -1;
  // Before the read: a suspended pull's wait tells the other workers of appends from then on.
  const readFrom = Date.now();
  let answer = await broker.puller.pullRecords(request);
  // Held once the read answered (a pull of a queue the topic does not have holds nothing); written here only when
  // too many offsets are held already.
  if ((sysFlag & FLAG_COMMIT_OFFSET) !== 0 && commitOffset >= 0) {
    const entry = { brokerName, queueId: request.queueId, offset: commitOffset };
    await broker.offsets.carry(consumerGroup, topic, entry, call.scope.clientId);
  }
  if (answer.pullStatus === "NO_NEW_MSG" && (sysFlag & FLAG_SUSPEND) !== 0) {
    const suspendMs = Math.min(f.optNumber("suspendTimeoutMillis") ?? 0, call.door.maxSuspendMs);
    const queue = { topic, brokerName, queueId: request.queueId };
    if (await call.door.waits.wait(queue, suspendMs, call.scope.closed, readFrom))
      answer = await broker.puller.pullRecords(request);
  }
  return encodePull(call, request, answer);
}

function encodePull(call: Call, queue: PullRequest, answer: PulledRecords): Answer {
  const hosts = { storeHost: call.scope.storeHost, bornHost: call.scope.storeHost };
  const { body, count } = encodeStoredRecords(queue, answer.records, hosts, MAX_PULL_ANSWER_BYTES);
  // The messages that did not fit come with the next pull.
  const nextBeginOffset = answer.records[count]?.queueOffset ?? answer.nextBeginOffset;
  const code = STATUS_CODE[answer.pullStatus];
  return {
    code,
    remark: answer.pullStatus,
    extFields: {
      suggestWhichBrokerId: "0",
      nextBeginOffset: String(nextBeginOffset),
      minOffset: String(answer.minOffset),
      maxOffset: String(answer.maxOffset),
    },
    ...(count > 0 && { body }),
  };
}
