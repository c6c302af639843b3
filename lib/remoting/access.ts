/**
 * @module What each request code needs of the caller's ACL: the permissions of its HTTP counterpart, asked of that
 * endpoint's own rule (lib/protocol, `access`) with the input the HTTP request would carry, as the gRPC door does
 * (lib/grpc/access.ts), so the doors cannot drift apart. A code without a rule here is refused with auth on (fail
 * closed); test/remoting/acl.test.ts checks that every served code has one. VIEW_MESSAGE_BY_ID names no topic: its
 * handler asks Sub on the topic of the message it found before answering it (as `POST /messages/by-id`).
 */
import type { Permission } from "../core/acl.js";
import { topicPermission } from "../core/acl.js";
import { endpoints, heartbeatAccess, userTopicName } from "../protocol/index.js";
import type { Call } from "./call.js";
import { heartbeatOf } from "./clients.js";
import { RequestCode } from "./codes.js";
import { decodeWith } from "./decode.js";
import { byTopic, lockBody } from "./offsets.js";
import { sendFields } from "./produce.js";
import { SysFlag } from "./wire-message.js";

type Rule<I> = { readonly access?: "super" | ((input: I) => Permission[]) | undefined };

function rule<I>(endpoint: Rule<I>, input: I): Permission[] {
  const access = endpoint.access;
  if (typeof access !== "function") throw new Error("a remoting counterpart must have a per-resource ACL rule");
  return access(input);
}

const none = { params: {}, query: {} } as const;
const groupTopic = (group: string, topic: string) => ({ query: {}, body: undefined, params: { group, topic } });

/** The group 4.x clients register their inner producer under (its sends are checked as sends). */
const CLIENT_INNER_PRODUCER_GROUP = "CLIENT_INNER_PRODUCER";

type Needs = (call: Call) => Permission[] | Promise<Permission[]>;

const send: Needs = (call) => {
  const f = sendFields(call);
  const topic = f.string("topic");
  // A prepared message is a half message of its producer group: `POST /transactions`.
  if ((f.int("sysFlag") & SysFlag.TRANSACTION_PREPARED) !== 0)
    return rule(endpoints.sendHalfMessage, {
      ...none,
      body: { producerGroup: f.string("producerGroup"), topic, message: { body: new Uint8Array(0) } },
    });
  return rule(endpoints.send, { ...none, body: { topic, messages: [] } });
};

const consume = (group: string, topic: string) =>
  rule(endpoints.pull, { ...none, body: { consumerGroup: group, topic, brokerName: "", queueId: 0, queueOffset: 0 } });

const queueBounds: Needs = (call) =>
  rule(endpoints.topicStatus, { query: {}, body: undefined, params: { topic: call.fields.string("topic") } });

const locks: Needs = (call) => {
  const { group, queues } = lockBody(call);
  const body = { clientId: "", queues: [] };
  return [...byTopic(queues).keys()].flatMap((topic) =>
    rule(endpoints.lockQueues, { ...groupTopic(group, topic), body }),
  );
};

const groupOnly = (call: Call) => ({
  query: {},
  body: undefined,
  params: { group: call.fields.string("consumerGroup") },
});

const topicParams = (call: Call) => ({ query: {}, body: undefined, params: { topic: call.fields.string("topic") } });

/** VIEW_MESSAGE_BY_ID, once its message is found: `POST /messages/by-id`'s rule on the message's topic. */
export const viewNeeds = (topic: string): Permission[] =>
  rule(endpoints.queryMessageById, { ...none, body: { topic, msgId: "" } });

/** Request code -> the permissions it needs (computed from its header fields, or its body where they are). */
export const ACCESS: ReadonlyMap<number, Needs> = new Map<number, Needs>([
  [RequestCode.SEND_MESSAGE, send],
  [RequestCode.SEND_MESSAGE_V2, send],
  [RequestCode.SEND_BATCH_MESSAGE, send],
  [
    RequestCode.END_TRANSACTION,
    (call) =>
      rule(endpoints.endTransaction, {
        query: {},
        params: { transactionId: "" },
        body: { producerGroup: call.fields.string("producerGroup"), commitOrRollback: "COMMIT_MESSAGE" as const },
      }),
  ],
  [RequestCode.PULL_MESSAGE, (call) => consume(call.fields.string("consumerGroup"), call.fields.string("topic"))],
  [RequestCode.LITE_PULL_MESSAGE, (call) => consume(call.fields.string("consumerGroup"), call.fields.string("topic"))],
  // Checked by its handler on the message it finds (the request names no topic).
  [RequestCode.VIEW_MESSAGE_BY_ID, () => []],
  [
    RequestCode.QUERY_MESSAGE,
    (call) => rule(endpoints.queryMessagesByKey, { ...none, body: { topic: call.fields.string("topic"), key: "" } }),
  ],
  [
    RequestCode.QUERY_CONSUMER_OFFSET,
    (call) =>
      rule(endpoints.queryOffsets, groupTopic(call.fields.string("consumerGroup"), call.fields.string("topic"))),
  ],
  [
    RequestCode.UPDATE_CONSUMER_OFFSET,
    (call) =>
      rule(endpoints.commitOffsets, {
        ...groupTopic(call.fields.string("consumerGroup"), call.fields.string("topic")),
        body: { offsetTable: [] },
      }),
  ],
  [RequestCode.GET_MAX_OFFSET, queueBounds],
  [RequestCode.GET_MIN_OFFSET, queueBounds],
  [RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, queueBounds],
  [RequestCode.GET_EARLIEST_MSG_STORETIME, queueBounds],
  [RequestCode.LOCK_BATCH_MQ, locks],
  [RequestCode.UNLOCK_BATCH_MQ, locks],
  [
    RequestCode.CONSUMER_SEND_MSG_BACK,
    (call) => {
      const group = call.fields.string("group");
      return consume(group, call.fields.optString("originTopic") ?? `%RETRY%${group}`);
    },
  ],
  [
    RequestCode.HEART_BEAT,
    (call) => {
      const hb = heartbeatOf(call);
      const producers = (hb.producerDataSet ?? []).filter((p) => p.groupName !== CLIENT_INNER_PRODUCER_GROUP);
      return heartbeatAccess({ body: { ...hb, producerDataSet: producers } });
    },
  ],
  [
    RequestCode.UNREGISTER_CLIENT,
    (call) => {
      const producerGroup = call.fields.optString("producerGroup");
      const consumerGroup = call.fields.optString("consumerGroup");
      return rule(endpoints.unregister, {
        ...none,
        body: {
          clientId: call.fields.string("clientID"),
          ...(producerGroup !== undefined && producerGroup !== CLIENT_INNER_PRODUCER_GROUP && { producerGroup }),
          ...(consumerGroup !== undefined && { consumerGroup }),
        },
      });
    },
  ],
  [
    RequestCode.GET_CONSUMER_LIST_BY_GROUP,
    (call) =>
      rule(endpoints.consumerConnection, {
        query: {},
        body: undefined,
        params: { group: call.fields.string("consumerGroup") },
      }),
  ],
  [RequestCode.GET_ROUTEINFO_BY_TOPIC, (call) => rule(endpoints.topicRoute, topicParams(call))],
  [RequestCode.GET_BROKER_CLUSTER_INFO, () => rule(endpoints.clusterInfo, { ...none, body: undefined })],
  [RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, () => rule(endpoints.listTopics, { ...none, body: undefined })],
  [
    RequestCode.UPDATE_AND_CREATE_TOPIC,
    // As `PUT /topics/{topic}`: Update on a topic that exists, Create on one that does not.
    async (call) => {
      // A name the topic's own request would refuse is refused before the store is asked of it.
      const topic = decodeWith(userTopicName, call.fields.string("topic"), "topic");
      return [topicPermission(topic, (await call.ctx.broker.topics.exists(topic)) ? "Update" : "Create")];
    },
  ],
  [RequestCode.DELETE_TOPIC_IN_BROKER, (call) => rule(endpoints.deleteTopic, topicParams(call))],
  [RequestCode.DELETE_TOPIC_IN_NAMESRV, (call) => rule(endpoints.deleteTopic, topicParams(call))],
  // mqadmin's admin codes (lib/remoting/admin.ts, client-admin.ts), each as its HTTP counterpart.
  [RequestCode.GET_BROKER_RUNTIME_INFO, () => rule(endpoints.clusterInfo, { ...none, body: undefined })],
  [RequestCode.GET_TOPIC_STATS_INFO, (call) => rule(endpoints.topicStatus, topicParams(call))],
  // The groups consuming a topic: read with the topic's status (`GET /topics/{topic}/status`).
  [RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, (call) => rule(endpoints.topicStatus, topicParams(call))],
  [
    RequestCode.GET_CONSUME_STATS,
    (call) => {
      const topic = call.fields.optString("topic");
      return rule(endpoints.consumerProgress, {
        params: { group: call.fields.string("consumerGroup") },
        query: topic === undefined ? {} : { topic },
        body: undefined,
      });
    },
  ],
  [RequestCode.GET_CONSUMER_CONNECTION_LIST, (call) => rule(endpoints.consumerConnection, groupOnly(call))],
  [RequestCode.GET_CONSUMER_RUNNING_INFO, (call) => rule(endpoints.consumerStatus, groupOnly(call))],
  [
    RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
    (call) =>
      rule(endpoints.resetOffsetByTime, {
        ...groupTopic(call.fields.string("group"), call.fields.string("topic")),
        body: { timestamp: 0 },
      }),
  ],
]);
