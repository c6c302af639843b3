/**
 * @module HEART_BEAT, UNREGISTER_CLIENT and GET_CONSUMER_LIST_BY_GROUP, on the broker's client service as the
 * HTTP routes call it: a 4.x heartbeat (`clientID`, fastjson's field names) becomes Nimbus' HeartbeatData; a
 * clustering consumer's group gets its retry topic; the connection remembers the client id and each group's
 * subscriptions (pulls that carry none use them).
 */
import { recordHeartbeat } from "../http/routes/clients.js";
import { type HeartbeatData, HeartbeatSchema } from "../protocol/index.js";
import { type Call, jsonOf, MAX_SCOPE_SUBSCRIPTIONS } from "./call.js";
import { sendChecks } from "./check-backs.js";
import { type Answer, badHeader, jsonBody, success } from "./codes.js";
import { decodeWith } from "./decode.js";

interface WireSubscription {
  topic?: unknown;
  subString?: unknown;
  expressionType?: unknown;
}

interface WireConsumer {
  groupName?: unknown;
  consumeType?: unknown;
  messageModel?: unknown;
  consumeFromWhere?: unknown;
  subscriptionDataSet?: WireSubscription[];
}

interface WireHeartbeat {
  clientID?: unknown;
  producerDataSet?: { groupName?: unknown }[];
  consumerDataSet?: WireConsumer[];
}

const list = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

/** A 4.x heartbeat's body as Nimbus' HeartbeatData (MESSAGE_ILLEGAL when it does not decode). */
export function heartbeatOf(call: Call): HeartbeatData {
  const raw = jsonOf(call) as WireHeartbeat | undefined;
  if (raw === undefined || typeof raw !== "object") throw badHeader("a heartbeat body is JSON HeartbeatData");
  return decodeWith(
    HeartbeatSchema,
    {
      clientId: raw.clientID,
      language: call.request.language,
      version: String(call.request.version),
      // RocketMQ checks a transaction with any producer of its group: every 4.x producer answers check-backs.
      producerDataSet: list<{ groupName?: unknown }>(raw.producerDataSet).map((p) => ({
        groupName: p.groupName,
        transactional: true,
      })),
      consumerDataSet: list<WireConsumer>(raw.consumerDataSet).map((c) => ({
        groupName: c.groupName,
        consumeType: c.consumeType,
        messageModel: c.messageModel,
        consumeFromWhere: c.consumeFromWhere,
        subscriptionDataSet: list<WireSubscription>(c.subscriptionDataSet).map((s) => ({
          topic: s.topic,
          subString: s.subString,
          expressionType: s.expressionType ?? "TAG",
        })),
      })),
    },
    "HEART_BEAT",
  );
}

export async function heartbeat(call: Call): Promise<Answer> {
  const hb = heartbeatOf(call);
  const consumers = hb.consumerDataSet ?? [];
  const checks = await recordHeartbeat(call.ctx, hb);
  const scope = call.scope;
  const known = new Set((scope.heartbeat?.consumerDataSet ?? []).map((c) => c.groupName));
  const previous = scope.clientId;
  scope.clientId = hb.clientId;
  scope.heartbeat = hb;
  for (const c of consumers) if (!known.has(c.groupName)) call.door.membersChanged(c.groupName);
  call.door.heard(scope, previous);
  await sendChecks(call.ctx, scope, checks);
  for (const c of consumers) {
    for (const s of c.subscriptionDataSet ?? []) {
      const key = `${c.groupName}\n${s.topic}`;
      if (!scope.subscriptions.has(key) && scope.subscriptions.size >= MAX_SCOPE_SUBSCRIPTIONS) continue;
      scope.subscriptions.set(key, { subString: s.subString, expressionType: s.expressionType ?? "TAG" });
    }
  }
  return success();
}

export async function unregisterClient(call: Call): Promise<Answer> {
  const f = call.fields;
  const clientId = f.string("clientID");
  const producerGroup = f.optString("producerGroup");
  const consumerGroup = f.optString("consumerGroup");
  const broker = call.ctx.broker;
  await broker.clients.unregister(clientId, {
    ...(producerGroup !== undefined && { producerGroup }),
    ...(consumerGroup !== undefined && { consumerGroup }),
  });
  if (consumerGroup !== undefined) {
    await broker.channel.groupChanged(consumerGroup);
    call.door.membersChanged(consumerGroup);
  }
  return success();
}

export async function consumerList(call: Call): Promise<Answer> {
  const group = call.fields.string("consumerGroup");
  const { consumers } = await call.ctx.broker.clients.connection(group);
  return success(undefined, jsonBody({ consumerIdList: consumers.map((c) => c.clientId) }));
}
