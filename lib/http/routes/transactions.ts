/** @module Transaction routes: half messages, ending them, and reading a transaction or its message. */
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
  route(endpoints.transactionMessage, ({ params, query }, { broker }) =>
    broker.transactions.message(query.producerGroup, params.transactionId),
  ),
]);
