/** @module Name server routes: health, cluster, topic route, and this API's OpenAPI document. */
import { endpoints } from "../../protocol/index.js";
import { openApiDocument } from "../../protocol/openapi.js";
import type { HandlerContext } from "../context.js";
import { route, serviceRoutes } from "../route.js";

let document: Record<string, unknown> | undefined;

export const nameServerRoutes = serviceRoutes<HandlerContext>("NameServer", [
  route(endpoints.health, async () => ({ status: "ok" as const })),
  route(endpoints.clusterInfo, (_in, { broker }) => broker.nameServer.clusterInfo()),
  route(endpoints.brokerList, async (_in, { broker }) => ({ brokers: await broker.nameServer.brokerList() })),
  route(endpoints.topicRoute, ({ params }, { broker }) => broker.nameServer.topicRoute(params.topic)),
  route(endpoints.channelInfo, async (_in, { channelUrl }) => ({ url: channelUrl ?? null })),
  // Generated once per process, on first request.
  route(endpoints.openApi, async () => {
    document ??= openApiDocument();
    return document;
  }),
]);
