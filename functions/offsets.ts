/** @module Offset routes: query and commit a group's offsets on a topic, and the group's consumer progress. */
import { z } from "zod";
import type { Route } from "../lib/http/api-types.js";
import { createApiHandler } from "../lib/http/handler.js";
import { awsContext } from "./shared/aws-context.js";
import type { HandlerContext } from "./shared/context.js";
import { name, nonNegativeInt, parse, queueId } from "./shared/schemas.js";

const groupTopic = z.object({ group: name, topic: name });
const commitBody = z
  .object({ offsetTable: z.array(z.object({ brokerName: name, queueId, offset: nonNegativeInt }).strict()) })
  .strict();

export const routes: Route<HandlerContext>[] = [
  {
    method: "GET",
    path: "/offsets/{group}/{topic}",
    handle: async (req, { broker }) => {
      const { group, topic } = parse(groupTopic, req.params);
      return { offsetTable: await broker.offsets.query(group, topic) };
    },
  },
  {
    method: "PUT",
    path: "/offsets/{group}/{topic}",
    handle: async (req, { broker }) => {
      const { group, topic } = parse(groupTopic, req.params);
      const { offsetTable } = parse(commitBody, req.body);
      await broker.offsets.commit(group, topic, offsetTable);
      return { offsetTable: await broker.offsets.query(group, topic) };
    },
  },
  {
    method: "GET",
    path: "/groups/{group}/progress",
    handle: async (req, { broker }) => {
      const { group } = parse(z.object({ group: name }), req.params);
      const { topic } = parse(z.object({ topic: name.optional() }), req.query);
      return { rows: await broker.offsets.progress(group, topic) };
    },
  },
];

export const handler = createApiHandler(routes, awsContext);
