/** @module Every service's routes, by service: what each Lambda function serves, and all of it for the local server. */
import type { ServiceName } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import type { Route } from "../route.js";
import { aclRoutes } from "./acl.js";
import { clientRoutes } from "./clients.js";
import { pullRoutes, sendRoutes } from "./data-plane.js";
import { groupRoutes } from "./groups.js";
import { nameServerRoutes } from "./name-server.js";
import { offsetRoutes } from "./offsets.js";
import { subscriptionRoutes } from "./subscriptions.js";
import { topicRoutes } from "./topics.js";
import { transactionRoutes } from "./transactions.js";

export const SERVICE_ROUTES: Readonly<Record<ServiceName, Route<HandlerContext>[]>> = {
  NameServer: nameServerRoutes,
  Topics: topicRoutes,
  Send: sendRoutes,
  Pull: pullRoutes,
  Offsets: offsetRoutes,
  Groups: groupRoutes,
  Clients: clientRoutes,
  Transactions: transactionRoutes,
  Acl: aclRoutes,
  Subscriptions: subscriptionRoutes,
};

/** Every route of the API: what the local server serves. */
export const ALL_ROUTES: Route<HandlerContext>[] = Object.values(SERVICE_ROUTES).flat();
