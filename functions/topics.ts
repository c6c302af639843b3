/** @module Topic administration routes. */
import { z } from "zod";
import type { Route } from "../lib/http/api-types.js";
import { createApiHandler } from "../lib/http/handler.js";
import { awsContext } from "./shared/aws-context.js";
import type { HandlerContext } from "./shared/context.js";
import { name, parse, topicParams } from "./shared/schemas.js";

const topicConfig = z
  .object({
    readQueueNums: z.number().int().optional(),
    writeQueueNums: z.number().int().optional(),
    perm: z.number().int().optional(),
    brokerNames: z.array(name).min(1).optional(),
  })
  .strict();

export const routes: Route<HandlerContext>[] = [
  { method: "GET", path: "/topics", handle: async (_req, { broker }) => ({ topics: await broker.topics.list() }) },
  {
    method: "PUT",
    path: "/topics/{topic}",
    handle: (req, { broker }) =>
      broker.topics.upsert(parse(topicParams, req.params).topic, parse(topicConfig, req.body ?? {})),
  },
  {
    method: "DELETE",
    path: "/topics/{topic}",
    handle: async (req, { broker }) => {
      const { topic } = parse(topicParams, req.params);
      await broker.topics.delete(topic);
      return { topic, deleted: true };
    },
  },
  {
    method: "GET",
    path: "/topics/{topic}/status",
    handle: async (req, { broker }) => ({ queues: await broker.topics.status(parse(topicParams, req.params).topic) }),
  },
];

export const handler = createApiHandler(routes, awsContext);
