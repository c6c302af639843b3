/** @module Client routes: heartbeats, unregistering, and the live consumers of a group. */
import { endpoints } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route, serviceRoutes } from "../route.js";

const SUCCESS = { code: "SUCCESS" } as const;

export const clientRoutes = serviceRoutes<HandlerContext>("Clients", [
  route(endpoints.heartbeat, async ({ body }, { broker }) => ({
    code: "SUCCESS" as const,
    transactionChecks: await broker.clients.heartbeat(body),
  })),
  route(endpoints.unregister, async ({ body: { clientId, ...groups } }, { broker }) => {
    await broker.clients.unregister(clientId, groups);
    return SUCCESS;
  }),
  route(endpoints.producerConnection, async ({ params }, { broker }) => ({
    producers: await broker.clients.producers(params.group),
  })),
  route(endpoints.consumerConnection, async ({ params }, { broker }) => {
    const { consumers, offsetResets } = await broker.clients.connection(params.group);
    return {
      consumerIdList: consumers.map((c) => c.clientId),
      consumers,
      subscriptionsConsistent: consumers.every((c) => c.subscriptionConsistent),
      offsetResets,
    };
  }),
  route(endpoints.consumerStatus, async ({ params }, { broker }) => ({
    consumers: await broker.clients.status(params.group),
  })),
]);
