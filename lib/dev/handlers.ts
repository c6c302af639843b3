/** @module Every HTTP route of the API, from the handler modules in functions/, in one list. */
import { routes as clients } from "../../functions/clients.js";
import { routes as nameServer } from "../../functions/name-server.js";
import { routes as offsets } from "../../functions/offsets.js";
import { routes as pull } from "../../functions/pull.js";
import { routes as send } from "../../functions/send.js";
import type { HandlerContext } from "../../functions/shared/context.js";
import { routes as topics } from "../../functions/topics.js";
import type { Route } from "../http/api-types.js";

export const ALL_ROUTES: Route<HandlerContext>[] = [...nameServer, ...topics, ...send, ...pull, ...offsets, ...clients];
