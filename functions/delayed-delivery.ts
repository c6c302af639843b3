/**
 * @module Scheduled every minute: moves due delayed messages (delay levels, timer messages, retries) to
 * their queues, and stays up through the minute while buckets fall due in it (timer-store.ts), so a
 * deployment without traffic still delivers them close to their due time. The requests that run anyway
 * (sends and pulls) move them sooner.
 */
import type { TimerSweepReport } from "../lib/broker/timers/index.js";
import type { HandlerContext } from "../lib/http/context.js";
import { awsContext } from "./shared/aws-context.js";

/** How long one run stays up: under the one-minute schedule and the function's 60 s timeout. */
export const DELAYED_DELIVERY_RUN_MS = 55_000;

export const moveDueMessages = (ctx: HandlerContext, runMs = DELAYED_DELIVERY_RUN_MS): Promise<TimerSweepReport> =>
  ctx.broker.moveDueMessages(runMs);

export const handler = async (): Promise<TimerSweepReport> => moveDueMessages(await awsContext());
