/**
 * @module The data plane's routes: send (one batch into one queue) and pull (answered at once, no long
 * polling), each on the broker this process serves (broker-scope.ts).
 */
import { endpoints } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route, serviceRoutes } from "../route.js";
import { servedBroker } from "./broker-scope.js";

export const sendRoutes = serviceRoutes<HandlerContext>("Send", [
  route(endpoints.send, async ({ body }, ctx) => {
    const brokerName = await servedBroker(ctx, body.brokerName, "write");
    return ctx.broker.sender.send({ ...body, brokerName });
  }),
]);

export const pullRoutes = serviceRoutes<HandlerContext>("Pull", [
  route(endpoints.pull, async ({ body }, ctx) => {
    await servedBroker(ctx, body.brokerName, "read");
    return ctx.broker.puller.pull(body);
  }),
]);
