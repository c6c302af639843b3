/** @module Scheduled hourly: deletes batches older than the retention (never a queue's newest batch). */
import type { RetentionReport } from "../lib/broker/index.js";
import type { HandlerContext } from "../lib/http/context.js";
import { awsContext } from "./shared/aws-context.js";

export const applyRetention = (ctx: HandlerContext): Promise<RetentionReport> => ctx.broker.applyRetention();

export const handler = async (): Promise<RetentionReport> => applyRetention(await awsContext());
