/**
 * @module mqadmin's read-only broker codes, each on the broker of the address dialled (as RocketMQ's
 * AdminBrokerProcessor answers for its own broker; mqadmin asks every broker of the route and merges):
 * GET_BROKER_RUNTIME_INFO (clusterList), GET_TOPIC_STATS_INFO (topicStatus), GET_CONSUME_STATS
 * (consumerProgress), GET_CONSUMER_CONNECTION_LIST (consumerConnection, consumerStatus) and
 * QUERY_TOPIC_CONSUME_BY_WHO (topicList -c, queryMsgById's track), from the broker's services as the HTTP routes
 * call them.
 */
import { consumerGroupName, topicName } from "../protocol/index.js";
import { addressText, objectWithRaw, queueKeyedMap, type WireQueue, wireSubscription } from "./admin-bodies.js";
import type { Call } from "./call.js";
import { type Answer, jsonBody, ResponseCode, refusal, success } from "./codes.js";
import { decodeWith } from "./decode.js";

/** The version this door answers as (RocketMQ's V4_9_8), as every answer's header says. */
const VERSION = 453;
const VERSION_DESC = "V4_9_8";

/**
 * clusterList's row: the version, and zero rates and queue sizes (Nimbus keeps no per-second counters and has no
 * send or pull thread pools; clusterList parses `putTps` and `getTransferedTps`, so they are there).
 */
export async function brokerRuntimeInfo(call: Call): Promise<Answer> {
  const table: Record<string, string> = {
    brokerVersionDesc: VERSION_DESC,
    brokerVersion: String(VERSION),
    brokerName: call.scope.brokerName,
    putTps: "0.0 0.0 0.0",
    getTransferedTps: "0.0 0.0 0.0",
    sendThreadPoolQueueSize: "0",
    sendThreadPoolQueueHeadWaitTimeMills: "0",
    pullThreadPoolQueueSize: "0",
    pullThreadPoolQueueHeadWaitTimeMills: "0",
    pageCacheLockTimeMills: "0",
    msgPutTotalTodayNow: "0",
    msgGetTotalTodayNow: "0",
    ...processCounts(call),
  };
  return success(undefined, jsonBody({ table }));
}

/**
 * This process's own figures (one worker of `nimbus dev --workers N`): its pid, the append notices it and the
 * other workers told each other, and how its suspended pulls and long-polled receives ended.
 */
function processCounts(call: Call): Record<string, string> {
  const broker = call.ctx.broker;
  const notices = broker.queueLog.interest.notices;
  const pop = broker.pop.wakeCounts;
  const pulls = call.door.waits.wakeCounts;
  return {
    processId: String(process.pid),
    appendNoticesSent: String(notices.sent),
    appendNoticesWithheld: String(notices.withheld),
    appendNoticesCaughtUp: String(notices.caughtUp),
    appendNoticesHeard: String(notices.heard),
    pullWaitsWokenByAppend: String(pulls.append),
    pullWaitsTimedOut: String(pulls.timeout),
    popWaitsWokenByHint: String(pop.hint ?? 0),
    popWaitsTimedOut: String(pop.timeout ?? 0),
    popWaiting: String(broker.pop.waitingReceives),
  };
}

/** topicStatus: each queue of the topic on this broker, its min and max offsets and last store time. */
export async function topicStatsInfo(call: Call): Promise<Answer> {
  const topic = decodeWith(topicName, call.fields.string("topic"), "topic");
  const rows = (await call.ctx.broker.topics.status(topic)).filter((r) => r.brokerName === call.scope.brokerName);
  if (rows.length === 0)
    return refusal(ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] has no queues on ${call.scope.brokerName}`);
  const table = queueKeyedMap(
    rows.map((r) => [
      { topic, brokerName: r.brokerName, queueId: r.queueId },
      { minOffset: r.minOffset, maxOffset: r.maxOffset, lastUpdateTimestamp: r.lastUpdateTimestamp },
    ]),
  );
  return success(undefined, objectWithRaw({ offsetTable: table }));
}

/** consumerProgress: the group's offsets on this broker's queues (of one topic, or of every topic it committed on). */
export async function consumeStats(call: Call): Promise<Answer> {
  const group = decodeWith(consumerGroupName, call.fields.string("consumerGroup"), "consumerGroup");
  const named = call.fields.optString("topic");
  const topic = named === undefined ? undefined : decodeWith(topicName, named, "topic");
  const rows = (await call.ctx.broker.offsets.progress(group, topic)).filter(
    (r) => r.brokerName === call.scope.brokerName,
  );
  const table = queueKeyedMap(
    rows.map((r): [WireQueue, unknown] => [
      { topic: r.topic, brokerName: r.brokerName, queueId: r.queueId },
      { brokerOffset: r.brokerOffset, consumerOffset: r.consumerOffset, lastTimestamp: r.lastTimestamp },
    ]),
  );
  return success(undefined, objectWithRaw({ offsetTable: table }, { consumeTps: 0 }));
}

/**
 * consumerConnection: the group's live consumers, wherever they heartbeat (a client connected to this door is
 * named by its connection's address, language and version; another by its client id's address). No live
 * consumer is CONSUMER_NOT_ONLINE, as RocketMQ answers a group it does not know.
 */
export async function consumerConnectionList(call: Call): Promise<Answer> {
  const group = decodeWith(consumerGroupName, call.fields.string("consumerGroup"), "consumerGroup");
  const consumers = await call.ctx.broker.clients.consumers(group);
  const first = consumers[0];
  if (first === undefined) return refusal(ResponseCode.CONSUMER_NOT_ONLINE, `the consumer group[${group}] not online`);
  const connectionSet = consumers.map((c) => {
    const scope = call.door.scopeOf(c.clientId);
    return {
      clientId: c.clientId,
      clientAddr: scope === undefined ? (c.clientId.split("@")[0] ?? "") : addressText(scope.remote),
      language: scope?.heartbeat?.language ?? "OTHER",
      version: Number(scope?.heartbeat?.version ?? VERSION) || VERSION,
    };
  });
  const subscriptionTable: Record<string, unknown> = {};
  for (const c of consumers) for (const s of c.subscriptionDataSet) subscriptionTable[s.topic] ??= wireSubscription(s);
  return success(
    undefined,
    jsonBody({
      connectionSet,
      subscriptionTable,
      consumeType: first.consumeType,
      messageModel: first.messageModel,
      consumeFromWhere: first.consumeFromWhere,
    }),
  );
}

/** topicList -c and queryMsgById's track: the groups that consume the topic (committed offsets or live subscribers). */
export async function topicConsumeByWho(call: Call): Promise<Answer> {
  const topic = decodeWith(topicName, call.fields.string("topic"), "topic");
  return success(undefined, jsonBody({ groupList: await call.ctx.broker.groups.groupsOfTopic(topic) }));
}
