/** @module Consumer route: `POST /pull`. Answers at once (no long polling): clients back off on NO_NEW_MSG. */
import { z } from "zod";
import type { Route } from "../lib/http/api-types.js";
import { createApiHandler } from "../lib/http/handler.js";
import { awsContext } from "./shared/aws-context.js";
import type { HandlerContext } from "./shared/context.js";
import { name, nonNegativeInt, parse, queueId } from "./shared/schemas.js";

const pullBody = z
  .object({
    consumerGroup: name,
    topic: name,
    brokerName: name,
    queueId,
    queueOffset: nonNegativeInt,
    maxMsgNums: z.number().int().min(1).max(1024).optional(),
    subExpression: z.string().max(4096).optional(),
  })
  .strict();

export const routes: Route<HandlerContext>[] = [
  {
    method: "POST",
    path: "/pull",
    handle: async (req, { broker }) => {
      const result = await broker.puller.pull(parse(pullBody, req.body));
      return {
        ...result,
        messages: result.messages.map((m) => ({ ...m, body: Buffer.from(m.body).toString("base64") })),
      };
    },
  },
];

export const handler = createApiHandler(routes, awsContext);
