/**
 * @module The send-time wake on AWS (docs/subscriptions.md): what is linked to `Dispatch` (`invokes` in
 * infra/manifest.ts: the Send and Transactions functions, and the gRPC proxy's task) invokes it with
 * `{"topic", "until"}` when an append lands on a subscribed topic, as an `Event` invocation (Lambda queues it
 * and answers 202: the send waits for no delivery). The function's name comes from `NIMBUS_DISPATCH_FUNCTION`
 * (functions/shared/aws-context.ts; `nimbus proxy --dispatch-function`). Wiring, as create-broker.ts: the
 * functions and the proxy (lib/dev/) both attach it.
 */
import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import type { Broker } from "../broker/index.js";
import { DispatchWake } from "../broker/subscriptions/index.js";

/** How long an answer may wait for the wakes its request caused (a claim and an invoke), as CHANNEL_SETTLE_MS. */
export const WAKE_SETTLE_MS = 150;
/** An invoke that takes longer is abandoned (the window's next send, or the backstop, wakes the topic). */
const INVOKE_TIMEOUT_MS = 1_000;

export type DispatchInvoke = (wake: { topic: string; until: number }) => Promise<void>;

/** Invokes `functionName` asynchronously with `{ topic, until }` (functions/dispatch.ts's event). */
export function dispatchInvoker(lambda: () => LambdaClient, functionName: string): DispatchInvoke {
  return async ({ topic, until }) => {
    const answer = await lambda().send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: "Event",
        Payload: new TextEncoder().encode(JSON.stringify({ topic, until })),
      }),
      { abortSignal: AbortSignal.timeout(INVOKE_TIMEOUT_MS) },
    );
    if (answer.FunctionError !== undefined) throw new Error(`Dispatch invoke: ${answer.FunctionError}`);
  };
}

/** `dispatchInvoker` with a Lambda client of its own (region and credentials from the environment), made on first use. */
export function ownLambdaDispatchInvoker(functionName: string): DispatchInvoke {
  let lambda: LambdaClient | undefined;
  return dispatchInvoker(() => {
    lambda ??= new LambdaClient({});
    return lambda;
  }, functionName);
}

/** The broker's appends wake Dispatch through `invoke`; errors are logged (and counted in `stats`). */
export function attachDispatchWake(
  broker: Broker,
  invoke: DispatchInvoke,
  options: { windowMs?: number } = {},
): DispatchWake {
  const wake = new DispatchWake({
    subscriptions: broker.subscriptions,
    invoke,
    ...options,
    now: () => broker.now(),
    onError: (err) => console.error("nimbus: waking Dispatch failed:", err instanceof Error ? err.message : err),
  });
  // Each worker's own appends wake it (a notice heard from another worker was that worker's append).
  broker.queueLog.onAppended((q, _end, elsewhere) => {
    if (!elsewhere) wake.topicAppended(q.topic);
  });
  return wake;
}
