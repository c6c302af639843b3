/** @module Topic administration routes. */
import { topicPermission } from "../../core/acl.js";
import { endpoints } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route, serviceRoutes } from "../route.js";
import { refuseOnSlave } from "./broker-scope.js";

export const topicRoutes = serviceRoutes<HandlerContext>("Topics", [
  route(endpoints.listTopics, async (_in, { broker }) => ({ topics: await broker.topics.list() })),
  route(endpoints.updateTopic, async ({ params, body }, ctx) => {
    refuseOnSlave(ctx, "change topics");
    // As RocketMQ 5: Update on a topic that exists, Create on one that does not (the endpoint admits either).
    if (ctx.auth && ctx.caller) {
      const action = (await ctx.broker.topics.exists(params.topic)) ? "Update" : "Create";
      await ctx.auth.require(ctx.caller, [topicPermission(params.topic, action)]);
    }
    const route = await ctx.broker.topics.upsert(params.topic, body ?? {});
    if (body?.keyIndex !== undefined) await ctx.broker.keyIndexSettings.setKeysIndexed(params.topic, body.keyIndex);
    return route;
  }),
  route(endpoints.deleteTopic, async ({ params }, ctx) => {
    refuseOnSlave(ctx, "change topics");
    await ctx.broker.topics.delete(params.topic);
    return { topic: params.topic, deleted: true as const };
  }),
  route(endpoints.topicStatus, async ({ params, query }, { broker }) => ({
    queues: await broker.topics.status(params.topic, { load: query.load === "true" }),
  })),
]);
