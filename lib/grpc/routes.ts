/**
 * @module QueryRoute and QueryAssignment: a Nimbus topic's route as RocketMQ 5's `MessageQueue`s. Every queue
 * of every broker is listed with its permission and the four message types a Nimbus topic accepts; every
 * broker's endpoint is this endpoint (as RocketMQ's proxy answers: the clients call everything through it),
 * the address the client dialled when it says, else the server's own. Queue ids start at 0 on every broker,
 * which the Node.js client needs (it keeps only queue 0 of each broker). Unknown topics are TOPIC_NOT_FOUND:
 * a route query creates nothing.
 */

import { PermName } from "../core/perm-name.js";
import { MASTER_ID } from "../core/topology.js";
import type { QueueData, TopicRouteData } from "../protocol/index.js";
import { consumeNeeds, routeNeeds } from "./access.js";
import type { CallContext } from "./call-context.js";
import { okStatus } from "./codes.js";
import { decodeRequest } from "./decode.js";
import { type Endpoints, QueryAssignmentRequestSchema, QueryRouteRequestSchema } from "./wire.js";

export const ACCEPTED_TYPES = ["NORMAL", "FIFO", "DELAY", "TRANSACTION"] as const;

type Permission = "NONE" | "READ" | "WRITE" | "READ_WRITE";

function permissionOf(qd: QueueData, queueId: number): Permission {
  const read = PermName.isReadable(qd.perm) && queueId < qd.readQueueNums;
  const write = PermName.isWriteable(qd.perm) && queueId < qd.writeQueueNums;
  return read && write ? "READ_WRITE" : read ? "READ" : write ? "WRITE" : "NONE";
}

/** The endpoints to answer: those the client named (a load balancer's name), else this server's. */
export function answerEndpoints(given: Endpoints | null, own: Endpoints): Endpoints {
  return given !== null && given.addresses.length > 0 && given.scheme !== "ADDRESS_SCHEME_UNSPECIFIED" ? given : own;
}

export function messageQueues(topic: string, route: TopicRouteData, endpoints: Endpoints) {
  return route.queueDatas.flatMap((qd) =>
    Array.from({ length: Math.max(qd.readQueueNums, qd.writeQueueNums) }, (_, id) => ({
      topic: { resourceNamespace: "", name: topic },
      id,
      permission: permissionOf(qd, id),
      broker: { name: qd.brokerName, id: MASTER_ID, endpoints },
      acceptMessageTypes: [...ACCEPTED_TYPES],
    })),
  );
}

export async function queryRoute(raw: unknown, ctx: CallContext, own: Endpoints) {
  const req = decodeRequest(QueryRouteRequestSchema, raw, "ILLEGAL_TOPIC");
  const topic = req.topic.name;
  await ctx.authorize(routeNeeds(topic));
  const route = await ctx.broker.routeCache.get(topic);
  return { status: okStatus(), messageQueues: messageQueues(topic, route, answerEndpoints(req.endpoints, own)) };
}

/**
 * QueryAssignment (the 5.x PushConsumer): what it should receive from. POP needs no queue of its own per
 * consumer, so, as RocketMQ's proxy answers, each readable broker is one assignment the whole group shares.
 */
export async function queryAssignment(raw: unknown, ctx: CallContext, own: Endpoints) {
  const req = decodeRequest(QueryAssignmentRequestSchema, raw);
  const topic = req.topic.name;
  await ctx.authorize(consumeNeeds(req.group.name, topic));
  const route = await ctx.broker.routeCache.get(topic);
  const endpoints = answerEndpoints(req.endpoints, own);
  const assignments = route.queueDatas
    .filter((qd) => PermName.isReadable(qd.perm) && qd.readQueueNums > 0)
    .map((qd) => ({
      messageQueue: {
        topic: { resourceNamespace: "", name: topic },
        id: 0,
        permission: permissionOf(qd, 0),
        broker: { name: qd.brokerName, id: MASTER_ID, endpoints },
        acceptMessageTypes: [...ACCEPTED_TYPES],
      },
    }));
  return { status: okStatus(), assignments };
}
