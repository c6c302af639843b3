/** @module Subscription routes (docs/subscriptions.md). */

import { subscriptionInfo } from "../../broker/subscriptions/index.js";
import { groupPermission, topicPermission } from "../../core/acl.js";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { RMQ_SYS_TRACE_TOPIC } from "../../core/names.js";
import { endpoints } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route, serviceRoutes } from "../route.js";
import { refuseOnSlave } from "./broker-scope.js";

export const subscriptionRoutes = serviceRoutes<HandlerContext>("Subscriptions", [
  route(endpoints.updateSubscription, async ({ params, body }, ctx) => {
    refuseOnSlave(ctx, "change subscriptions");
    // Create on a group without a subscription, Update on one with (the endpoint admits either), as topics.
    if (ctx.auth && ctx.caller) {
      const action = (await ctx.broker.subscriptions.exists(params.group)) ? "Update" : "Create";
      await ctx.auth.require(ctx.caller, [groupPermission(params.group, action)]);
      // The broker writes the delivery traces on the caller's behalf: Pub on the trace topic, and Create on it
      // when the first record would create it.
      if (body.enableMsgTrace) {
        const traceTopic = body.customizedTraceTopic ?? RMQ_SYS_TRACE_TOPIC;
        const create = (await ctx.broker.topics.exists(traceTopic)) ? [] : [topicPermission(traceTopic, "Create")];
        await ctx.auth.require(ctx.caller, [topicPermission(traceTopic, "Pub"), ...create]);
      }
    }
    const { subscription } = await ctx.broker.subscriptions.put(params.group, body);
    return subscriptionInfo(subscription);
  }),
  route(endpoints.getSubscription, async ({ params }, { broker }) => {
    const subscription = await broker.subscriptions.get(params.group);
    if (!subscription) throw noSubscription(params.group);
    return subscriptionInfo(subscription, await broker.subscriptions.lastDeliveryError(params.group));
  }),
  route(endpoints.deleteSubscription, async ({ params }, ctx) => {
    refuseOnSlave(ctx, "change subscriptions");
    await ctx.broker.subscriptions.delete(params.group);
    return { code: "SUCCESS" as const };
  }),
  route(endpoints.listSubscriptions, async ({ query }, { broker }) => {
    const [subscriptions, errors] = await Promise.all([
      broker.subscriptions.list(query.topic),
      broker.subscriptions.lastDeliveryErrors(),
    ]);
    return { subscriptions: subscriptions.map((s) => subscriptionInfo(s, errors.get(s.group))) };
  }),
]);

const noSubscription = (group: string): NimbusError =>
  new NimbusError(ErrorCode.SUBSCRIPTION_GROUP_NOT_EXIST, `the group ${group} has no subscription`);
