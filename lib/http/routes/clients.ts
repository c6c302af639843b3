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

/**
 * A heartbeat, whichever door it came through (this route, the remoting door's HEART_BEAT): a clustering consumer's
 * group gets its retry topic before its first failure (RocketMQ does it here too), not on a slave, which writes
 * nothing, and a failure there does not fail the heartbeat; the client is recorded; the members of a group it joins
 * hear of it on the push channel (docs/push-channel.md). Answers the check-backs waiting for it (producers only).
 */
export async function recordHeartbeat(ctx: HandlerContext, hb: HeartbeatData): Promise<TransactionCheck[]> {
  const { broker, role } = ctx;
  const slave = role.kind === "broker" && role.brokerId !== MASTER_ID;
  const clustering = slave
    ? []
    : (hb.consumerDataSet ?? []).filter((c) => (c.messageModel ?? "CLUSTERING") === "CLUSTERING");
  await Promise.all(
    clustering.map((c) =>
      broker.sendBack
        .ensureRetryTopic(c.groupName)
        .catch((err: unknown) => console.error(`nimbus: creating the retry topic of ${c.groupName} failed:`, err)),
    ),
  );
  const joining = await broker.channel.joiningGroups(hb);
  const checks = await broker.clients.heartbeat(hb);
  await Promise.all(joining.map((g) => broker.channel.groupChanged(g)));
  return checks;
}
