/** @module Name server routes: health, cluster, topic route. */

import type { Route } from "../lib/http/api-types.js";
import { createApiHandler } from "../lib/http/handler.js";
import { awsContext } from "./shared/aws-context.js";
import type { HandlerContext } from "./shared/context.js";
import { parse, topicParams } from "./shared/schemas.js";

export const routes: Route<HandlerContext>[] = [
  { method: "GET", path: "/health", handle: async () => ({ status: "ok" }) },
  { method: "GET", path: "/cluster", handle: (_req, { broker }) => broker.nameServer.clusterInfo() },
  {
    method: "GET",
    path: "/topics/{topic}/route",
    handle: (req, { broker }) => broker.nameServer.topicRoute(parse(topicParams, req.params).topic),
  },
];

export const handler = createApiHandler(routes, awsContext);
