/**
 * @module Scheduled: registers the configured brokers with the name server, as RocketMQ brokers do every
 * 30 s. The local server runs it every 30 s; on AWS EventBridge's shortest period is a minute, which the
 * 120 s expiry tolerates (one missed run does not drop a broker).
 */

import type { HandlerContext } from "../lib/http/context.js";
import { awsContext } from "./shared/aws-context.js";

export async function registerBrokers(ctx: HandlerContext): Promise<{ registered: number }> {
  await ctx.broker.registerBrokers();
  return { registered: (await ctx.broker.nameServer.liveBrokers()).length };
}

export const handler = async (): Promise<{ registered: number }> => registerBrokers(await awsContext());
