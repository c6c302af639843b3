/**
 * @module Subscription delivery on AWS (docs/subscriptions.md), scheduled every minute as the backstop, and
 * invoked with `{"topic": "<topic>", "until": <ms>}` by a send to a subscribed topic (the send-time wake,
 * lib/config/dispatch-wake.ts) to deliver that topic's subscriptions. Each run wakes the subscriptions
 * once: their workers receive, deliver and settle while receives answer messages, and stop at the first empty
 * one, so a run over idle topics ends at once. A run past DISPATCH_RUN_MS stops receiving; a delivery it
 * abandons comes back when its invisible time ends (at least once). A retry due later is delivered by a later
 * run. Lambda targets are invoked with this function's role, which has no identity permission to invoke
 * anything: each subscriber function grants it by its resource policy (`lambda:InvokeFunction`, principal the
 * `dispatchRole` output), so it can invoke only the functions registered for it.
 */
import type { LambdaClient } from "@aws-sdk/client-lambda";
import type { Agent } from "undici";
import { z } from "zod";
import {
  type DispatchReport,
  SubscriptionDispatcher,
  subscriptionTargets,
  sumReports,
  targetAgent,
} from "../lib/broker/subscriptions/index.js";
import type { TargetNetworks } from "../lib/core/target-address.js";
import type { HandlerContext } from "../lib/http/context.js";
import { MAX_TEXT_LENGTH } from "../lib/protocol/index.js";
import { awsContext, defaultLambdaClient } from "./shared/aws-context.js";

/** How long one run delivers: under the function's 60 s timeout, with room to settle what is in flight. */
export const DISPATCH_RUN_MS = 45_000;

/**
 * A send-time wake looks once more this long after its window ends (lib/config/dispatch-wake.ts): an append
 * in the window woke nobody, and it happened before the window's end on the sender's clock, which may be this far
 * off Dispatch's.
 */
export const WAKE_CLOCK_MARGIN_MS = 200;
/** The longest a woken run waits for its window's end (a window is WAKE_WINDOW_MS, 1 s). */
const MAX_WAKE_WAIT_MS = 2_000;

/**
 * A schedule's event (anything without `topic`: every subscription), or one topic's; a send-time wake's also
 * says when its window ends (`until`, epoch ms).
 */
const DispatchEvent = z
  .object({
    topic: z.string().min(1).max(MAX_TEXT_LENGTH).optional(),
    until: z.number().int().nonnegative().optional(),
  })
  .passthrough();

/** The HTTPS targets' pool of this container, kept across runs (keep-alive connections). */
let agent: { networks: TargetNetworks; pool: Agent } | undefined;
function containerAgent(networks: TargetNetworks): Agent {
  if (agent?.networks !== networks) agent = { networks, pool: targetAgent(networks) };
  return agent.pool;
}

export interface DispatchRun extends DispatchReport {
  subscriptions: number;
}

export async function dispatchSubscriptions(
  ctx: HandlerContext,
  options: {
    topic?: string | undefined;
    /** A send-time wake's window end: after the first round, one more round once it has passed. */
    until?: number | undefined;
    runMs?: number;
    lambdaClient?: () => LambdaClient;
  } = {},
): Promise<DispatchRun> {
  const dispatcher = new SubscriptionDispatcher({
    pop: ctx.broker.pop,
    targetOf: subscriptionTargets(
      options.lambdaClient ?? defaultLambdaClient,
      containerAgent(ctx.broker.subscriptions.targetNetworks),
      ctx.broker.subscriptions.targetNetworks,
    ),
    // Traced subscriptions' records, appended by the broker's send path; flushed when the run closes the dispatcher.
    traceSend: (topic, messages) => ctx.broker.sender.send({ topic, messages }),
    onTraceError: (err) => console.warn("nimbus: a subscription's trace records were dropped:", err),
    errorStore: ctx.broker.subscriptions,
  });
  const subscriptions = await ctx.broker.subscriptions.list(options.topic);
  const stop = setTimeout(() => void dispatcher.close(), options.runMs ?? DISPATCH_RUN_MS);
  try {
    const round = async () => sumReports(await Promise.all(subscriptions.map((s) => dispatcher.wake(s))));
    const reports = [await round()];
    if (options.until !== undefined && subscriptions.length > 0) {
      // Sends in the wake's window did not invoke: their messages are visible by its end, so look once more then.
      const wait = Math.min(MAX_WAKE_WAIT_MS, options.until + WAKE_CLOCK_MARGIN_MS - ctx.broker.now());
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      reports.push(await round());
    }
    return { subscriptions: subscriptions.length, ...sumReports(reports) };
  } finally {
    clearTimeout(stop);
    await dispatcher.close();
  }
}

/** The handler on `context` (this container's, or a test's); a send-time wake's event is `{"topic", "until"}`. */
export function dispatchHandler(
  context: () => Promise<HandlerContext>,
  lambdaClient?: () => LambdaClient,
): (event: unknown) => Promise<DispatchRun> {
  return async (event) => {
    const parsed = DispatchEvent.safeParse(event ?? {});
    return dispatchSubscriptions(await context(), {
      topic: parsed.success ? parsed.data.topic : undefined,
      until: parsed.success ? parsed.data.until : undefined,
      ...(lambdaClient ? { lambdaClient } : {}),
    });
  };
}

export const handler = dispatchHandler(awsContext);
