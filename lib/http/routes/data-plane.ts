/** @module The data plane's routes: send (one batch into one queue) and pull (answered at once, no long polling). */
import { endpoints } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route, serviceRoutes } from "../route.js";

export const sendRoutes = serviceRoutes<HandlerContext>("Send", [
  route(endpoints.send, ({ body }, { broker }) => broker.sender.send(body)),
]);

export const pullRoutes = serviceRoutes<HandlerContext>("Pull", [
  route(endpoints.pull, ({ body }, { broker }) => broker.puller.pull(body)),
]);
