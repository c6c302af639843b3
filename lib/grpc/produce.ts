/**
 * @module SendMessage and EndTransaction. Each message of a send is one broker send, answered by its own entry:
 * NORMAL and DELAY on the queue the broker picks (a delay message waits in the timer store until its
 * `delivery_timestamp`), FIFO on its group's queue (`SendService.queueOfGroup`, the group kept as
 * `__SHARDINGKEY`), TRANSACTION as a half message whose transaction id is its message id and whose producer
 * group is its topic (RocketMQ 5 producers have no group; its proxy registers them under their topics).
 * The queue id a client names is not used: like RocketMQ's proxy, the broker picks the queue. A topic must
 * exist: a send never creates one.
 */
import { MessageConst } from "../core/message.js";
import { endNeeds, sendNeeds } from "./access.js";
import type { CallContext } from "./call-context.js";
import { okStatus, statusOfError, type WireStatus } from "./codes.js";
import { decodeRequest } from "./decode.js";
import { decodeSend } from "./messages.js";
import { EndTransactionRequestSchema, SendMessageRequestSchema, type WireMessage } from "./wire.js";
import { wirePropertiesOf } from "./wire-properties.js";

interface SendEntry {
  status: WireStatus;
  messageId: string;
  transactionId: string;
  offset: number;
  recallHandle: string;
}

async function sendOne(m: WireMessage, asSent: [string, string][] | undefined, ctx: CallContext): Promise<SendEntry> {
  const topic = m.topic.name;
  const { message, type, messageGroup } = decodeSend(m, asSent);
  await ctx.authorize(sendNeeds(topic, message, type === "TRANSACTION"));
  const broker = ctx.broker;
  // The route first: an unknown topic is TOPIC_NOT_FOUND here, never auto-created by a send.
  await broker.routeCache.get(topic);
  if (type === "TRANSACTION") {
    const half = await broker.transactions.sendHalf({ producerGroup: topic, topic, message });
    return {
      status: okStatus(),
      messageId: half.msgId,
      transactionId: half.transactionId,
      offset: half.queueOffset,
      recallHandle: "",
    };
  }
  const where = messageGroup === undefined ? {} : await broker.sender.queueOfGroup(topic, messageGroup);
  const sent = await broker.sender.send({ topic, ...where, messages: [message] });
  const messageId = sent.msgIds[0] ?? message.properties?.[MessageConst.UNIQ_KEY] ?? "";
  return { status: okStatus(), messageId, transactionId: "", offset: sent.queueOffset, recallHandle: "" };
}

export async function sendMessage(raw: unknown, ctx: CallContext) {
  const req = decodeRequest(SendMessageRequestSchema, raw);
  const asSent = wirePropertiesOf(raw);
  const entries: SendEntry[] = [];
  for (const [i, m] of req.messages.entries()) {
    try {
      entries.push(await sendOne(m, asSent?.[i], ctx));
    } catch (err) {
      const messageId = m.systemProperties.messageId;
      entries.push({ status: statusOfError(err), messageId, transactionId: "", offset: 0, recallHandle: "" });
    }
  }
  const failed = entries.find((e) => e.status.code !== "OK");
  return { status: failed?.status ?? okStatus(), entries };
}

export async function endTransaction(raw: unknown, ctx: CallContext) {
  const req = decodeRequest(EndTransactionRequestSchema, raw);
  const topic = req.topic.name;
  await ctx.authorize(endNeeds(topic, req.transactionId));
  await ctx.broker.transactions.end(
    topic,
    req.transactionId,
    req.resolution === "COMMIT" ? "COMMIT_MESSAGE" : "ROLLBACK_MESSAGE",
  );
  return { status: okStatus() };
}
