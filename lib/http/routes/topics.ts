/** @module Topic administration routes. */
import { endpoints } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route, serviceRoutes } from "../route.js";

export const topicRoutes = serviceRoutes<HandlerContext>("Topics", [
  route(endpoints.listTopics, async (_in, { broker }) => ({ topics: await broker.topics.list() })),
  route(endpoints.updateTopic, ({ params, body }, { broker }) => broker.topics.upsert(params.topic, body ?? {})),
  route(endpoints.deleteTopic, async ({ params }, { broker }) => {
    await broker.topics.delete(params.topic);
    return { topic: params.topic, deleted: true as const };
  }),
  route(endpoints.topicStatus, async ({ params }, { broker }) => ({
    queues: await broker.topics.status(params.topic),
  })),
]);
