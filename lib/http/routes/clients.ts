/** @module Client routes: heartbeats, unregistering, and the live consumers of a group. */
import { MASTER_ID } from "../../core/topology.js";
import { endpoints, type HeartbeatData, type TransactionCheck } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route, serviceRoutes } from "../route.js";

const SUCCESS = { code: "SUCCESS" } as const;

export const clientRoutes = serviceRoutes<HandlerContext>("Clients", [
  route(endpoints.heartbeat, async ({ body }, ctx) => ({
    code: "SUCCESS" as const,
    transactionChecks: await recordHeartbeat(ctx, body),
  })),
  route(endpoints.unregister, async ({ body: { clientId, ...groups } }, { broker }) => {
    await broker.clients.unregister(clientId, groups);
    if (groups.consumerGroup !== undefined) await broker.channel.groupChanged(groups.consumerGroup);
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

/** A heartbeat, whichever door it came through (this route, the remoting door's HEART_BEAT): the broker's rules. */
export function recordHeartbeat(ctx: HandlerContext, hb: HeartbeatData): Promise<TransactionCheck[]> {
  const { role } = ctx;
  return ctx.broker.heartbeat(hb, { writes: role.kind !== "broker" || role.brokerId === MASTER_ID });
}
