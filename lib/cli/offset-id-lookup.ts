/**
 * @module `queryMsgById` with an offset message id (a 4.x client's `offsetMsgId`, mqadmin's `-i`): the id says
 * where its message is, up to two hashes (lib/core/offset-message-id.ts), so no topic is needed: the topics and
 * brokers whose hashes match are tried, each with one read of one message at the id's queue and offset.
 */
import type { NimbusApi, PulledMessage } from "../client/transport/index.js";
import { ErrorCode, isNimbusError } from "../core/errors.js";
import { offsetPlace } from "../core/offset-message-id.js";
import { messageAt } from "./common.js";

/** Topic and broker pairs read for one id, at most (16-bit and 5-bit hashes: more than one match is rare). */
const MAX_PLACES_READ = 16;

/** The messages an offset message id may name: none, or (hash clashes) more than one. */
export async function messagesAtOffsetId(api: NimbusApi, offset: bigint, topic?: string): Promise<PulledMessage[]> {
  const place = offsetPlace(offset);
  const topics = (topic === undefined ? await api.listTopics() : [topic]).filter(place.topicMatches);
  if (topics.length === 0) return [];
  const brokers = [
    ...new Set(Object.values((await api.clusterInfo()).brokerAddrTable).map((b) => b.brokerName)),
  ].filter(place.brokerMatches);
  const places = topics
    .flatMap((t) => brokers.map((brokerName) => ({ topic: t, brokerName })))
    .slice(0, MAX_PLACES_READ);
  const found: PulledMessage[] = [];
  for (const where of places) {
    try {
      const { message } = await messageAt(api, { ...where, queueId: place.queueId, offset: place.queueOffset });
      if (message !== undefined) found.push(message);
    } catch (err) {
      if (!notThere(err, topic === undefined)) throw err;
    }
  }
  return found;
}

/**
 * A topic without that broker or queue is not the message's place; nor, when the topic was not named, one this
 * user may not read (a hash clash with another tenant's topic must not fail the lookup).
 */
function notThere(err: unknown, topicGuessed: boolean): boolean {
  if (!isNimbusError(err)) return false;
  const codes: string[] = [ErrorCode.TOPIC_NOT_EXIST, ErrorCode.PARAMETER_ILLEGAL, ErrorCode.WRONG_BROKER];
  if (topicGuessed) codes.push(ErrorCode.NO_PERMISSION);
  return codes.includes(err.code);
}
