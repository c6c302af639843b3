/** @module Producer route: `POST /send` (one batch into one queue). */
import { z } from "zod";
import type { Route } from "../lib/http/api-types.js";
import { createApiHandler } from "../lib/http/handler.js";
import { awsContext } from "./shared/aws-context.js";
import type { HandlerContext } from "./shared/context.js";
import { base64, name, parse, queueId } from "./shared/schemas.js";

const message = z
  .object({
    body: base64,
    tags: z.string().optional(),
    keys: z.union([z.string().transform((k) => [k]), z.array(z.string())]).optional(),
    properties: z.record(z.string(), z.string()).optional(),
    flag: z.number().int().min(-0x80000000).max(0x7fffffff).optional(),
    delayTimeLevel: z.number().int().min(0).optional(),
  })
  .strict();

const sendBody = z
  .object({
    producerGroup: name.optional(),
    topic: name,
    brokerName: name.optional(),
    queueId: queueId.optional(),
    messages: z.array(message).min(1),
  })
  .strict();

export const routes: Route<HandlerContext>[] = [
  {
    method: "POST",
    path: "/send",
    handle: (req, { broker }) => {
      const body = parse(sendBody, req.body);
      return broker.sender.send({
        ...body,
        messages: body.messages.map((m) => ({ ...m, ...(m.keys ? { keys: m.keys } : {}) })),
      });
    },
  },
];

export const handler = createApiHandler(routes, awsContext);
