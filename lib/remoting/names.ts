/**
 * @module The name-server role: topic routes, cluster info, the topic list, topic create and delete. Every
 * broker's address in an answer is where this door serves it (per broker name and broker id, so masters and
 * slaves keep their meaning). An unknown topic is TOPIC_NOT_EXIST, as RocketMQ's name server answers; the
 * auto-create key topic (TBW102) has a route on every live master while autoCreateTopic may create topics there,
 * which is how a 4.x producer sends to a topic that does not exist yet.
 */
import { ErrorCode, NimbusError } from "../core/errors.js";
import { AUTO_CREATE_TOPIC_KEY_TOPIC } from "../core/names.js";
import { PermName } from "../core/perm-name.js";
import { MASTER_ID } from "../core/topology.js";
import { refuseOnSlave } from "../http/routes/broker-scope.js";
import {
  type BrokerData,
  DEFAULT_AUTO_CREATE_QUEUE_NUMS,
  TopicConfigSchema,
  type TopicRouteData,
  userTopicName,
} from "../protocol/index.js";
import type { Call, DoorView } from "./call.js";
import { type Answer, jsonBody, success } from "./codes.js";
import { decodeWith } from "./decode.js";

function withAddresses(data: BrokerData, door: DoorView): BrokerData {
  const brokerAddrs: Record<string, string> = {};
  for (const [id, registered] of Object.entries(data.brokerAddrs))
    brokerAddrs[id] = door.addressOf(data.brokerName, Number(id), registered);
  return { ...data, brokerAddrs };
}

async function routeOf(call: Call, topic: string): Promise<TopicRouteData> {
  try {
    return await call.ctx.broker.nameServer.topicRoute(topic);
  } catch (err) {
    if (
      topic !== AUTO_CREATE_TOPIC_KEY_TOPIC ||
      !(err instanceof NimbusError) ||
      err.code !== ErrorCode.TOPIC_NOT_EXIST
    )
      throw err;
    const { brokerAddrTable } = await call.ctx.broker.nameServer.clusterInfo();
    const masters = Object.values(brokerAddrTable).filter((b) => b.brokerAddrs[String(MASTER_ID)] !== undefined);
    if (masters.length === 0) throw err;
    const queueDatas = masters.map((b) => ({
      brokerName: b.brokerName,
      readQueueNums: DEFAULT_AUTO_CREATE_QUEUE_NUMS,
      writeQueueNums: DEFAULT_AUTO_CREATE_QUEUE_NUMS,
      perm: PermName.PERM_READ | PermName.PERM_WRITE | PermName.PERM_INHERIT,
      topicSysFlag: 0,
    }));
    return { queueDatas, brokerDatas: masters };
  }
}

export async function getRouteInfo(call: Call): Promise<Answer> {
  const topic = call.fields.string("topic");
  const route = await routeOf(call, topic);
  const body = {
    queueDatas: route.queueDatas,
    brokerDatas: route.brokerDatas.map((b) => withAddresses(b, call.door)),
    filterServerTable: {},
  };
  return success(undefined, jsonBody(body));
}

export async function getClusterInfo(call: Call): Promise<Answer> {
  const info = await call.ctx.broker.nameServer.clusterInfo();
  const brokerAddrTable: Record<string, BrokerData> = {};
  for (const [name, data] of Object.entries(info.brokerAddrTable))
    brokerAddrTable[name] = withAddresses(data, call.door);
  return success(undefined, jsonBody({ brokerAddrTable, clusterAddrTable: info.clusterAddrTable }));
}

export async function getTopicList(call: Call): Promise<Answer> {
  return success(undefined, jsonBody({ topicList: await call.ctx.broker.topics.list() }));
}

/** mqadmin's updateTopic: sent to each master it creates the topic on (this door: the broker of the connection). */
export async function createTopic(call: Call): Promise<Answer> {
  const f = call.fields;
  const topic = decodeWith(userTopicName, f.string("topic"), "topic");
  const config = decodeWith(
    TopicConfigSchema,
    {
      readQueueNums: f.optInt("readQueueNums"),
      writeQueueNums: f.optInt("writeQueueNums"),
      perm: f.optInt("perm"),
      brokerNames: [call.scope.brokerName],
    },
    "UPDATE_AND_CREATE_TOPIC",
  );
  refuseOnSlave(call.ctx, "change topics");
  await call.ctx.broker.topics.upsert(topic, config);
  return success();
}

export async function deleteTopic(call: Call): Promise<Answer> {
  const topic = decodeWith(userTopicName, call.fields.string("topic"), "topic");
  refuseOnSlave(call.ctx, "change topics");
  // Sent to every master and to the name servers: the first deletes the route, the others find it gone.
  if (await call.ctx.broker.topics.exists(topic)) await call.ctx.broker.topics.delete(topic);
  return success();
}
