/** @module Message queries by id and by key (the Pull service: reads of stored messages). */
import { endpoints } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route } from "../route.js";

export const queryRoutes = [
  route(endpoints.queryMessageById, ({ body }, { broker }: HandlerContext) => broker.query.byId(body)),
  route(endpoints.queryMessagesByKey, ({ body }, { broker }: HandlerContext) => broker.query.byKey(body)),
];
