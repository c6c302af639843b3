/** @module Client routes: heartbeats, unregistering, and the live consumers of a group. */
import { z } from "zod";
import type { Route } from "../lib/http/api-types.js";
import { createApiHandler } from "../lib/http/handler.js";
import { awsContext } from "./shared/aws-context.js";
import type { HandlerContext } from "./shared/context.js";
import { name, parse } from "./shared/schemas.js";

const heartbeatBody = z
  .object({
    clientId: z.string(),
    producerDataSet: z
      .array(z.object({ groupName: name }).passthrough())
      .max(256)
      .optional(),
    consumerDataSet: z
      .array(
        z
          .object({
            groupName: name,
            consumeType: z.enum(["CONSUME_ACTIVELY", "CONSUME_PASSIVELY", "CONSUME_POP"]).optional(),
            messageModel: z.enum(["CLUSTERING", "BROADCASTING"]).optional(),
            consumeFromWhere: z
              .enum(["CONSUME_FROM_LAST_OFFSET", "CONSUME_FROM_FIRST_OFFSET", "CONSUME_FROM_TIMESTAMP"])
              .optional(),
            subscriptionDataSet: z
              .array(z.object({ topic: name, subString: z.string().max(4096) }).passthrough())
              .max(256)
              .optional(),
          })
          .passthrough(),
      )
      .max(256)
      .optional(),
  })
  .strict();

const unregisterBody = z
  .object({ clientId: z.string(), producerGroup: name.optional(), consumerGroup: name.optional() })
  .strict();

export const routes: Route<HandlerContext>[] = [
  {
    method: "POST",
    path: "/heartbeat",
    handle: async (req, { broker }) => {
      await broker.clients.heartbeat(parse(heartbeatBody, req.body));
      return { code: "SUCCESS" };
    },
  },
  {
    method: "POST",
    path: "/unregister",
    handle: async (req, { broker }) => {
      const { clientId, ...groups } = parse(unregisterBody, req.body);
      await broker.clients.unregister(clientId, groups);
      return { code: "SUCCESS" };
    },
  },
  {
    method: "GET",
    path: "/groups/{group}/consumers",
    handle: async (req, { broker }) => {
      const { group } = parse(z.object({ group: name }), req.params);
      const consumers = await broker.clients.consumers(group);
      return { consumerIdList: consumers.map((c) => c.clientId), consumers };
    },
  },
];

export const handler = createApiHandler(routes, awsContext);
