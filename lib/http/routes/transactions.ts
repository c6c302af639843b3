/** @module Transaction routes: half messages, ending them, and reading a transaction or its message. */
import { topicPermission } from "../../core/acl.js";
import { endpoints } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route, serviceRoutes } from "../route.js";
import { refuseOnSlave, servedBroker } from "./broker-scope.js";

export const transactionRoutes = serviceRoutes<HandlerContext>("Transactions", [
  route(endpoints.sendHalfMessage, async ({ body }, ctx) => {
    const brokerName = await servedBroker(ctx, body.brokerName, "write");
    return ctx.broker.transactions.sendHalf({ ...body, brokerName });
  }),
  route(endpoints.endTransaction, async ({ params, body }, ctx) => {
    refuseOnSlave(ctx, "end transactions");
    return ctx.broker.transactions.end(body.producerGroup, params.transactionId, body.commitOrRollback);
  }),
  route(endpoints.transactionInfo, ({ params, query }, { broker }) =>
    broker.transactions.info(query.producerGroup, params.transactionId),
  ),
  route(endpoints.transactionMessage, async ({ params, query }, ctx) => {
    const message = await ctx.broker.transactions.message(query.producerGroup, params.transactionId);
    // A producer answering a check-back may read what it may send: Pub on the message's topic too (the group's
    // Pub alone would read the half messages of every topic its producers send to).
    if (ctx.auth && ctx.caller) await ctx.auth.require(ctx.caller, [topicPermission(message.topic, "Pub")]);
    return message;
  }),
]);
