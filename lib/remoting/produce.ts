/**
 * @module Sends (SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE; sync, async and oneway alike: oneway only
 * writes no answer) and END_TRANSACTION. A send is one broker send into the queue the client picked, on the broker
 * its header names or else the broker of the address it dialled; a body the client compressed is inflated (bounded)
 * so that every door reads the same bytes; TAGS and KEYS become the message's tags and keys; a prepared message
 * (sysFlag TRANSACTION_PREPARED) is a half message of its producer group. The answer's msgId is the offset message
 * id (store host and the first message's commit-log offset of Nimbus' making), as 4.x producers decode it.
 */
import { inflateSync } from "node:zlib";
import { MessageConst } from "../core/message.js";
import { refuseOnSlave, servedBroker } from "../http/routes/broker-scope.js";
import {
  groupName,
  MAX_BODY_BYTES,
  type SendMessage,
  transactionId as transactionIdSchema,
} from "../protocol/index.js";
import type { Call } from "./call.js";
import { type Answer, badHeader, RequestCode, success } from "./codes.js";
import { decodeWith } from "./decode.js";
import { Fields } from "./fields.js";
import { type BatchEntry, decodeBatch, offsetMsgId, parseProperties, physicalOffset, SysFlag } from "./wire-message.js";

/** SEND_MESSAGE_V2's one-letter fields, by SEND_MESSAGE's names. */
const V2_NAMES: ReadonlyMap<string, string> = new Map([
  ["producerGroup", "a"],
  ["topic", "b"],
  ["defaultTopic", "c"],
  ["defaultTopicQueueNums", "d"],
  ["queueId", "e"],
  ["sysFlag", "f"],
  ["bornTimestamp", "g"],
  ["flag", "h"],
  ["properties", "i"],
  ["reconsumeTimes", "j"],
  ["unitMode", "k"],
  ["maxReconsumeTimes", "l"],
  ["batch", "m"],
  ["brokerName", "n"],
]);

/** A send's header fields by SEND_MESSAGE's names (SEND_MESSAGE_V2 and batches use one-letter names). */
export function sendFields(call: Call): Fields {
  if (call.request.code === RequestCode.SEND_MESSAGE) return call.fields;
  return new Fields(call.request.extFields, V2_NAMES);
}

/** RocketMQ's compression type bits of a sysFlag: 0 and 3 are zlib (the 4.x default); lz4 and zstd are refused. */
const COMPRESSION_TYPE_BITS = 0x700;

function inflated(body: Uint8Array, sysFlag: number): Uint8Array {
  const type = (sysFlag & COMPRESSION_TYPE_BITS) >> 8;
  if (type !== 0 && type !== 3) throw badHeader(`compression type ${type} is not served: send zlib (the default)`);
  try {
    return inflateSync(body, { maxOutputLength: MAX_BODY_BYTES + 1 });
  } catch {
    throw badHeader(`a compressed body that does not inflate to at most ${MAX_BODY_BYTES} bytes`);
  }
}

/** Properties a wire message carries that are not the stored message's own. */
const WIRE_ONLY: ReadonlySet<string> = new Set([
  MessageConst.TAGS,
  MessageConst.KEYS,
  MessageConst.TRAN_MSG,
  MessageConst.PGROUP,
]);

/** A wire message as Nimbus' SendMessage: TAGS and KEYS taken out of its properties, a transaction's markers dropped. */
function toSendMessage(entry: BatchEntry): SendMessage {
  const tags = entry.properties[MessageConst.TAGS];
  const keys = entry.properties[MessageConst.KEYS];
  const rest: Record<string, string> = Object.create(null);
  for (const k in entry.properties) if (!WIRE_ONLY.has(k)) rest[k] = entry.properties[k] as string;
  const keyList = (keys ?? "").split(MessageConst.KEY_SEPARATOR).filter((k) => k !== "");
  // The broker checks the message itself (body, tags, keys, properties), as for every door.
  // Optional fields set only when present, not spread in (V8 copies a spread through a generic path).
  const message: SendMessage = { body: entry.body, properties: rest, flag: entry.flag };
  if (tags !== undefined) message.tags = tags;
  if (keyList.length > 0) message.keys = keyList;
  return message;
}

export async function sendMessage(call: Call): Promise<Answer> {
  const f = sendFields(call);
  const topic = f.string("topic");
  const producerGroup = f.string("producerGroup");
  const queueId = f.int("queueId");
  const sysFlag = f.int("sysFlag");
  const flag = f.int("flag");
  const body = call.request.body ?? new Uint8Array(0);
  const batch = call.request.code === RequestCode.SEND_BATCH_MESSAGE;
  const entries: BatchEntry[] = batch
    ? decodeBatch(body)
    : [
        {
          flag,
          body: (sysFlag & SysFlag.COMPRESSED) !== 0 ? inflated(body, sysFlag) : body,
          properties: parseProperties(f.optString("properties")),
        },
      ];
  const messages = entries.map(toSendMessage);
  const broker = call.ctx.broker;
  const brokerName = (await servedBroker(call.ctx, f.optString("brokerName"), "write")) ?? call.scope.brokerName;
  const prepared = (sysFlag & SysFlag.TRANSACTION_PREPARED) !== 0;
  if (prepared) {
    const [message] = messages;
    if (message === undefined || messages.length !== 1) throw badHeader("a prepared message is sent alone");
    const half = await broker.transactions.sendHalf({ producerGroup, topic, brokerName, queueId, message });
    const fields = {
      msgId: offsetMsgId(call.scope.storeHost, physicalOffset(topic, brokerName, queueId, half.queueOffset)),
      queueId: String(half.messageQueue.queueId),
      queueOffset: String(half.queueOffset),
      transactionId: half.transactionId,
    };
    return success(fields);
  }
  const sent = await broker.sender.send({ producerGroup, topic, brokerName, queueId, messages });
  const q = sent.messageQueue;
  return success({
    msgId: offsetMsgId(call.scope.storeHost, physicalOffset(topic, q.brokerName, q.queueId, sent.queueOffset)),
    queueId: String(q.queueId),
    // No batchUniqId: RocketMQ answers it for an inner batch only (one stored message), and a 5.x producer then
    // takes the batch's own id as the send's; a batch here stores each message, whose ids the client has.
    queueOffset: String(sent.queueOffset),
  });
}

/** RocketMQ's MessageSysFlag values of commitOrRollback: 8 commit, 12 rollback, 0 unknown (left to check-backs). */
export async function endTransaction(call: Call): Promise<Answer> {
  const f = call.fields;
  // The HTTP end's bounds: the ids become store keys.
  const producerGroup = decodeWith(groupName, f.string("producerGroup"), "producerGroup");
  const transactionId = decodeWith(
    transactionIdSchema,
    f.optString("transactionId") ?? f.string("msgId"),
    "transactionId",
  );
  const state = f.int("commitOrRollback");
  refuseOnSlave(call.ctx, "end transactions");
  if (state === SysFlag.TRANSACTION_COMMIT || state === SysFlag.TRANSACTION_ROLLBACK) {
    const end = state === SysFlag.TRANSACTION_COMMIT ? "COMMIT_MESSAGE" : "ROLLBACK_MESSAGE";
    await call.ctx.broker.transactions.end(producerGroup, transactionId, end);
  }
  return success();
}
