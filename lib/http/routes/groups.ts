/** @module Consumer group routes: subscription groups, the list of every group, a group's lag history. */
import { groupPermission } from "../../core/acl.js";
import { endpoints, MAX_GROUPS_PER_PAGE } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route, serviceRoutes } from "../route.js";
import { refuseOnSlave } from "./broker-scope.js";

export const groupRoutes = serviceRoutes<HandlerContext>("Groups", [
  route(endpoints.listGroups, async ({ query }, { broker }) =>
    broker.groups.list({ startAfter: query.startAfter, limit: query.limit ?? MAX_GROUPS_PER_PAGE }),
  ),
  route(endpoints.getSubGroup, async ({ params }, { broker }) => broker.subscriptionGroups.configOf(params.group)),
  route(endpoints.updateSubGroup, async ({ params, body }, ctx) => {
    refuseOnSlave(ctx, "change subscription groups");
    // As RocketMQ 5: Update on a group that has a config, Create on one that has none (the endpoint admits either).
    if (ctx.auth && ctx.caller) {
      const action = (await ctx.broker.subscriptionGroups.configOf(params.group)).configured ? "Update" : "Create";
      await ctx.auth.require(ctx.caller, [groupPermission(params.group, action)]);
    }
    return ctx.broker.subscriptionGroups.update(params.group, body);
  }),
  route(endpoints.deleteSubGroup, async ({ params }, ctx) => {
    refuseOnSlave(ctx, "change subscription groups");
    await ctx.broker.subscriptionGroups.delete(params.group);
    return { group: params.group, deleted: true as const };
  }),
  route(endpoints.lagHistory, async ({ params }, { broker }) => ({
    samples: await broker.lagSamples.history(params.group),
    intervalMs: broker.lagSamples.options.intervalMs,
  })),
]);
