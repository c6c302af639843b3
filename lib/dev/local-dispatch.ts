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
  const topics = holdSubscribedTopics(broker);
  const saved = started.saved.bind(started);
  // A subscription saved here or in another worker: its topic held before its first wake reads.
  started.saved = (s) => {
    topics.hold(s.topic);
    saved(s);
  };
  broker.subscriptions.onSaved = (s) => started.saved(s);
  // A process starting looks once, its topics held first: what a process before it left in flight is delivered
  // when it is due.
  void topics
    .refresh()
    .catch((err: unknown) => console.error("nimbus: the subscribed topics could not be read:", err))
    .then(() => started.wakeAll());
  const close = started.close.bind(started);
  started.close = async () => {
    topics.close();
    stopHint();
    broker.subscriptions.onSaved = undefined;
    await close();
    lambda?.destroy();
    await httpAgent.close();
  };
  return started;
}

/** How often the subscribed topics are read again (a deleted subscription's topic is let go). */
const SUBSCRIBED_TOPICS_REFRESH_MS = 30_000;

/**
 * The topics of the subscriptions delivered here, held in the queue log's interest, so that the other workers of
 * `nimbus dev --workers N` tell this one of their appends to them (lib/dev/append-notices.ts).
 */
function holdSubscribedTopics(broker: Broker) {
  const held = new Map<string, { release: () => void; since: number }>();
  const hold = (topic: string, since = Date.now()) => {
    if (!held.has(topic)) held.set(topic, { release: broker.queueLog.interest.hold(topic, since), since });
  };
  const refresh = async () => {
    const since = Date.now();
    const topics = new Set((await broker.subscriptions.list()).map((s) => s.topic));
    for (const topic of topics) hold(topic, since);
    // A topic held after the list was read (a subscription saved meanwhile) stays.
    for (const [topic, h] of held) {
      if (topics.has(topic) || h.since >= since) continue;
      h.release();
      held.delete(topic);
    }
  };
  const timer = setInterval(() => {
    refresh().catch((err: unknown) => console.error("nimbus: the subscribed topics could not be read:", err));
  }, SUBSCRIBED_TOPICS_REFRESH_MS);
  timer.unref();
  return {
    hold,
    refresh,
    close() {
      clearInterval(timer);
      for (const h of held.values()) h.release();
      held.clear();
    },
  };
}
