/**
 * @module `nimbus dev`'s subscription delivery, in-process (docs/subscriptions.md): the dispatcher on the
 * broker's POP, woken by the write path's append hint, a saved subscription, a retry falling due and a
 * once-a-minute backstop. A Lambda target is invoked through `lambdaEndpoint` (an Invoke-API server) when
 * given, else the AWS SDK's default endpoint and credentials. HTTPS targets are verified against Node's trust, plus
 * `targetCaPem` when given (`nimbus dev --target-ca`).
 */
import { LambdaClient } from "@aws-sdk/client-lambda";
import type { Broker } from "../broker/index.js";
import {
  InProcessDispatch,
  SubscriptionDispatcher,
  subscriptionTargets,
  targetAgent,
} from "../broker/subscriptions/index.js";

export interface LocalDispatchOptions {
  /** The Invoke API's endpoint for Lambda targets (e.g. a local Invoke-API server). */
  lambdaEndpoint?: string | undefined;
  backstopMs?: number | undefined;
  /** Extra CA certificates (PEM) HTTPS targets may chain to, beside Node's own roots. */
  targetCaPem?: string | Buffer | undefined;
}

export function startLocalDispatch(broker: Broker, options: LocalDispatchOptions = {}): InProcessDispatch {
  let lambda: LambdaClient | undefined;
  const lambdaClient = () => {
    lambda ??= new LambdaClient(
      options.lambdaEndpoint === undefined
        ? {}
        : {
            endpoint: options.lambdaEndpoint,
            region: process.env.AWS_REGION ?? "us-east-1",
            credentials: {
              accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? "local",
              secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? "local",
            },
          },
    );
    return lambda;
  };
  const networks = broker.subscriptions.targetNetworks;
  const httpAgent = targetAgent(networks, options.targetCaPem);
  let dispatch: InProcessDispatch | undefined;
  const dispatcher = new SubscriptionDispatcher({
    pop: broker.pop,
    targetOf: subscriptionTargets(lambdaClient, httpAgent, networks),
    onRetryDue: (s, at) => dispatch?.retryDue(s, at),
    // Traced subscriptions' records: appended by this broker's own send path (docs/trace.md "Subscriptions").
    traceSend: (topic, messages) => broker.sender.send({ topic, messages }),
    errorStore: broker.subscriptions,
  });
  const started = new InProcessDispatch({
    store: broker.subscriptions,
    dispatcher,
    redeliveryGraceMs: broker.pop.redeliveryGraceMs,
    ...(options.backstopMs === undefined ? {} : { backstopMs: options.backstopMs }),
    onError: (err) => console.error("nimbus: subscription delivery failed:", err),
  });
  dispatch = started;
  const stopHint = broker.queueLog.onAppended((q) => started.topicAppended(q.topic));
  broker.subscriptions.onSaved = (s) => started.saved(s);
  // A process starting looks once: what a process before it left in flight is delivered when it is due.
  void started.wakeAll();
  const close = started.close.bind(started);
  started.close = async () => {
    stopHint();
    broker.subscriptions.onSaved = undefined;
    await close();
    lambda?.destroy();
    await httpAgent.close();
  };
  return started;
}
