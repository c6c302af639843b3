/**
 * @module mqadmin's codes that reach the group's live clients over their own connections, as RocketMQ's broker
 * does: GET_CONSUMER_RUNNING_INFO (consumerStatus) is sent on to the client named, whose answer is relayed as it
 * came; INVOKE_BROKER_TO_RESET_OFFSET (resetOffsetByTime) resets the group's committed offsets of the topic in
 * the broker (the broker's reset, recorded for Nimbus' own consumers too), then sends RESET_CONSUMER_CLIENT_OFFSET
 * with this broker's queues and offsets to each live 4.x consumer of the group connected to this door, which
 * moves its queues there.
 */
import { resetGroupOffsets } from "../broker/consume/index.js";
import { consumerGroupName, topicName } from "../protocol/index.js";
import { objectWithRaw, queueKeyedMap } from "./admin-bodies.js";
import type { Call, Scope } from "./call.js";
import { ClientCallError } from "./client-calls.js";
import { type Answer, badHeader, RequestCode, ResponseCode, refusal, success } from "./codes.js";
import { decodeWith } from "./decode.js";

/** The connection of a live consumer of `group` that heartbeated on this door, if any. */
function consumerScope(call: Call, group: string, clientId: string): Scope | undefined {
  const scope = call.door.scopeOf(clientId);
  const consumes = scope?.heartbeat?.consumerDataSet?.some((c) => c.groupName === group) === true;
  return consumes ? scope : undefined;
}

/** consumerStatus: the client's ConsumerRunningInfo, asked over its connection (jstack when asked for). */
export async function consumerRunningInfo(call: Call): Promise<Answer> {
  const group = decodeWith(consumerGroupName, call.fields.string("consumerGroup"), "consumerGroup");
  const clientId = call.fields.string("clientId");
  const scope = consumerScope(call, group, clientId);
  if (scope === undefined || !(await call.ctx.broker.clients.isLiveConsumer(group, clientId)))
    return refusal(ResponseCode.SYSTEM_ERROR, `The Consumer <${group}> <${clientId}> not online on this server`);
  try {
    const answer = await scope.call(RequestCode.GET_CONSUMER_RUNNING_INFO, call.request.extFields, call.request.body);
    return {
      code: answer.code,
      remark: answer.remark,
      extFields: answer.extFields,
      body: answer.body,
    };
  } catch (err) {
    if (!(err instanceof ClientCallError)) throw err;
    const code = err.timedOut ? ResponseCode.CONSUME_MSG_TIMEOUT : ResponseCode.SYSTEM_ERROR;
    return refusal(code, `consumer <${group}> <${clientId}>: ${err.message}`);
  }
}

/**
 * resetOffsetByTime: `timestamp` -1 is the queues' ends (mqadmin's "now"); `isForce` false moves no queue
 * forwards. Answers this broker's queues and their offsets; the group's consumers here get the same table.
 */
export async function resetOffset(call: Call): Promise<Answer> {
  const f = call.fields;
  const group = decodeWith(consumerGroupName, f.string("group"), "group");
  const topic = decodeWith(topicName, f.string("topic"), "topic");
  const timestamp = f.number("timestamp");
  if (timestamp < -1) throw badHeader(`the header field timestamp is not a time: ${timestamp}`);
  const force = f.optString("isForce") !== "false";
  const broker = call.ctx.broker;
  const reset = await resetGroupOffsets(broker, group, topic, timestamp === -1 ? "now" : timestamp, { force });
  const here = reset.offsetTable.filter((e) => e.brokerName === call.scope.brokerName);
  const table = queueKeyedMap(here.map((e) => [{ topic, brokerName: e.brokerName, queueId: e.queueId }, e.offset]));
  const body = objectWithRaw({ offsetTable: table });
  const forC = objectWithRaw(
    {},
    { offsetTable: here.map((e) => ({ topic, brokerName: e.brokerName, queueId: e.queueId, offset: e.offset })) },
  );
  const header = { topic, group, timestamp: String(timestamp) };
  for (const c of await broker.clients.consumers(group))
    consumerScope(call, group, c.clientId)?.notify(
      RequestCode.RESET_CONSUMER_CLIENT_OFFSET,
      header,
      // mqadmin's -c (a C++ client's table) marks the request CPP.
      call.request.language === "CPP" ? forC : body,
    );
  return success(undefined, body);
}
