/** @module One Lambda handler per service: the service's routes (lib/http/routes) on this container's AWS-wired broker. */

import { WAKE_SETTLE_MS } from "../../lib/config/dispatch-wake.js";
import type { ApiEvent, ApiResult } from "../../lib/http/api-types.js";
import type { HandlerContext } from "../../lib/http/context.js";
import { createApiHandler } from "../../lib/http/handler.js";
import { SERVICE_ROUTES } from "../../lib/http/routes/index.js";
import type { ServiceName } from "../../lib/protocol/index.js";
import { awsContext } from "./aws-context.js";

/** A Lambda handler that says which service it serves (test/infra checks it against infra/manifest.ts). */
export type ServiceHandler = ((event: ApiEvent) => Promise<ApiResult>) & { readonly service: ServiceName };

/**
 * How long an answer may wait for the push hints its request caused (docs/push-channel.md): a frozen Lambda
 * sends nothing, so hints go out before the answer, at most this late. A hint not sent by then is dropped
 * (the client's poll finds the messages).
 */
export const CHANNEL_SETTLE_MS = 150;

/** `context`: this container's (the AWS-wired broker), or a test's. */
export function serviceHandler(
  service: ServiceName,
  context: () => Promise<HandlerContext> = awsContext,
): ServiceHandler {
  const handle = createApiHandler(SERVICE_ROUTES[service], context);
  return Object.assign(
    async (event: ApiEvent) => {
      const result = await handle(event);
      const ctx = await context();
      await Promise.all([ctx.broker.channel.settle(CHANNEL_SETTLE_MS), ctx.dispatchWake?.settle(WAKE_SETTLE_MS)]);
      return result;
    },
    { service },
  );
}
