/**
 * @module Subscription delivery on AWS (docs/subscriptions.md), scheduled every minute as the backstop, and
 * invocable with `{"topic": "<topic>"}` to deliver one topic's subscriptions. Each run wakes the subscriptions
 * once: their workers receive, deliver and settle while receives answer messages, and stop at the first empty
 * one, so a run over idle topics ends at once. A run past DISPATCH_RUN_MS stops receiving; a delivery it
 * abandons comes back when its invisible time ends (at least once). A retry due later is delivered by a later
 * run. Lambda targets are invoked with this function's role, which has no identity permission to invoke
 * anything: each subscriber function grants it by its resource policy (`lambda:InvokeFunction`, principal the
 * `dispatchRole` output), so it can invoke only the functions registered for it.
 */
import { LambdaClient } from "@aws-sdk/client-lambda";
import { z } from "zod";
import {
  type DispatchReport,
  SubscriptionDispatcher,
  subscriptionTargets,
  sumReports,
} from "../lib/broker/subscriptions/index.js";
import type { HandlerContext } from "../lib/http/context.js";
import { MAX_TEXT_LENGTH } from "../lib/protocol/index.js";
import { awsContext } from "./shared/aws-context.js";

/** How long one run delivers: under the function's 60 s timeout, with room to settle what is in flight. */
export const DISPATCH_RUN_MS = 45_000;

/** A schedule's event (anything without `topic`: every subscription), or one topic's. */
const DispatchEvent = z.object({ topic: z.string().min(1).max(MAX_TEXT_LENGTH).optional() }).passthrough();

export interface DispatchRun extends DispatchReport {
  subscriptions: number;
}

let lambda: LambdaClient | undefined;
const defaultLambda = (): LambdaClient => {
  lambda ??= new LambdaClient({});
  return lambda;
};

export async function dispatchSubscriptions(
  ctx: HandlerContext,
  options: { topic?: string | undefined; runMs?: number; lambdaClient?: () => LambdaClient } = {},
): Promise<DispatchRun> {
  const dispatcher = new SubscriptionDispatcher({
    pop: ctx.broker.pop,
    targetOf: subscriptionTargets(options.lambdaClient ?? defaultLambda),
  });
  const subscriptions = await ctx.broker.subscriptions.list(options.topic);
  const stop = setTimeout(() => void dispatcher.close(), options.runMs ?? DISPATCH_RUN_MS);
  try {
    const reports = await Promise.all(subscriptions.map((s) => dispatcher.wake(s)));
    return { subscriptions: subscriptions.length, ...sumReports(reports) };
  } finally {
    clearTimeout(stop);
    await dispatcher.close();
  }
}

export const handler = async (event: unknown): Promise<DispatchRun> => {
  const parsed = DispatchEvent.safeParse(event ?? {});
  return dispatchSubscriptions(await awsContext(), { topic: parsed.success ? parsed.data.topic : undefined });
};
