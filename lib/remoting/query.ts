/**
 * @module VIEW_MESSAGE_BY_ID and QUERY_MESSAGE: a message by its offset message id, and messages by key or by
 * message id (UNIQ_KEY), through the broker's query service, answered in RocketMQ's stored-message encoding.
 *
 * An offset message id names the door's address and a commit-log offset of Nimbus' making (wire-message.ts
 * `physicalOffset`: a hash of the topic, a hash of the broker, the queue id and the queue offset). The broker is
 * the one of the address dialled; the topic is the one of the broker's topics whose hash it carries and that has a
 * message there (its retry and dead-letter topics included).
 *
 * QUERY_MESSAGE is sent by the client to every broker of the topic's route and the answers are merged: each
 * broker's address answers the messages of its own queues. None is QUERY_NOT_FOUND, as RocketMQ's broker answers.
 */
import { toPulled } from "../broker/consume/index.js";
import { ErrorCode, isNimbusError } from "../core/errors.js";
import type { PulledMessage } from "../protocol/index.js";
import { QueryByIdRequestSchema, QueryByKeyRequestSchema } from "../protocol/index.js";
import { viewNeeds } from "./access.js";
import type { Call } from "./call.js";
import { type Answer, ResponseCode, refusal, success } from "./codes.js";
import { decodeWith } from "./decode.js";
import { MAX_PULL_ANSWER_BYTES } from "./pull.js";
import { encodeStored, physicalOffset } from "./wire-message.js";

/** Topics whose hash matches an offset id that are read, at most (16-bit hashes: a clash is rare). */
const MAX_CANDIDATE_TOPICS = 16;
/** Messages one QUERY_MESSAGE answers, at most (RocketMQ's defaultQueryMaxNum is 32; Nimbus' key pages 64). */
const MAX_QUERY_ANSWER = 64;
const UNIQUE_KEY_QUERY = "_UNIQUE_KEY_QUERY";

const notFound = (what: string) => refusal(ResponseCode.QUERY_NOT_FOUND, `no message ${what}`);

export async function viewMessageById(call: Call): Promise<Answer> {
  const offset = call.fields.long("offset");
  const brokerName = call.scope.brokerName;
  const queueId = Number((offset >> 32n) & 0x3ffn);
  const queueOffset = Number(offset & 0xffffffffn);
  const { broker } = call.ctx;
  const topics = (await broker.topics.list())
    .filter((topic) => physicalOffset(topic, brokerName, queueId, queueOffset) === offset)
    .slice(0, MAX_CANDIDATE_TOPICS);
  for (const topic of topics) {
    const q = { topic, brokerName, queueId };
    const read = await broker.queueLog.read(q, queueOffset, { maxMessages: 1 });
    const stored = read.messages[0];
    if (stored === undefined || stored.queueOffset !== queueOffset) continue;
    await call.authorize(viewNeeds(topic));
    return success(undefined, encode(call, [toPulled(q, stored)]));
  }
  return notFound(`at commit-log offset ${offset} of ${brokerName}`);
}

export async function queryMessage(call: Call): Promise<Answer> {
  const f = call.fields;
  const topic = f.string("topic");
  const key = f.string("key");
  const maxNum = Math.min(Math.max(1, f.optInt("maxNum") ?? MAX_QUERY_ANSWER), MAX_QUERY_ANSWER);
  const { broker } = call.ctx;
  const now = broker.now();
  // The client's "any time" is 0 and Long.MAX_VALUE: the query service's defaults (the retention, now).
  const begin = f.optLong("beginTimestamp") ?? 0n;
  const end = f.optLong("endTimestamp") ?? BigInt(now);
  const range = {
    ...(begin > 0n && { begin: Math.min(Number(begin), now) }),
    ...(end < BigInt(now) && { end: Math.max(0, Number(end)) }),
  };
  let messages: PulledMessage[];
  if (f.bool(UNIQUE_KEY_QUERY)) {
    // The id carries its birth time, which bounds the search better than the client's range.
    const request = decodeWith(QueryByIdRequestSchema, { topic, msgId: key }, "QUERY_MESSAGE");
    messages = (await broker.query.byId(request).catch(orNone)).messages;
  } else {
    const request = decodeWith(QueryByKeyRequestSchema, { topic, key, maxNum, ...range }, "QUERY_MESSAGE");
    messages = (await broker.query.byKey(request)).messages;
  }
  const here = messages.filter((m) => m.brokerName === call.scope.brokerName).slice(0, maxNum);
  if (here.length === 0) return notFound(`with ${f.bool(UNIQUE_KEY_QUERY) ? "id" : "key"} ${key} in ${topic}`);
  const lastStore = Math.max(...here.map((m) => m.storeTimestamp));
  return success({ indexLastUpdateTimestamp: String(lastStore), indexLastUpdatePhyoffset: "0" }, encode(call, here));
}

/** A query by id that finds nothing is QUERY_NOT_FOUND in the query service: here an empty answer. */
function orNone(err: unknown): { messages: PulledMessage[] } {
  if (isNimbusError(err, ErrorCode.QUERY_NOT_FOUND)) return { messages: [] };
  throw err;
}

/**
 * The messages in RocketMQ's stored encoding, at most MAX_PULL_ANSWER_BYTES of them (the first whatever its size, as a
 * pull's answer): 64 messages of up to 4 MiB each would make a frame no client reads.
 */
function encode(call: Call, messages: readonly PulledMessage[]): Buffer {
  const hosts = { storeHost: call.scope.storeHost, bornHost: call.scope.storeHost };
  const encoded: Buffer[] = [];
  let bytes = 0;
  for (const m of messages) {
    const one = encodeStored(m, hosts);
    if (encoded.length > 0 && bytes + one.byteLength > MAX_PULL_ANSWER_BYTES) break;
    encoded.push(one);
    bytes += one.byteLength;
  }
  return Buffer.concat(encoded, bytes);
}
