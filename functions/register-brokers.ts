/**
 * @module Scheduled every 30 s (EventBridge, or the local server's timer): registers the configured brokers
 * with the name server, as RocketMQ brokers do. A broker not registered for 120 s drops out of routes.
 */

import { awsContext } from "./shared/aws-context.js";
import type { HandlerContext } from "./shared/context.js";

export async function registerBrokers(ctx: HandlerContext): Promise<{ registered: number }> {
  await ctx.broker.registerBrokers();
  return { registered: (await ctx.broker.nameServer.liveBrokers()).length };
}

export const handler = async (): Promise<{ registered: number }> => registerBrokers(await awsContext());
