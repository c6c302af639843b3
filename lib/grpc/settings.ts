/**
 * @module The server's answer to a client's Settings (the first command on its Telemetry stream, which a
 * client's startup waits for): the client's own settings with the server's filled in: the retry backoff
 * (an exponential policy: RocketMQ's Node.js client cannot start without one), the publishing limits (the
 * body size limit; without one that client refuses every send itself), and the subscription's receive batch
 * size and long polling timeout. For a consumer, as RocketMQ's proxy merges its group's subscription config
 * (GrpcClientSettingsManager.mergeSubscriptionData): `fifo` is the group's orderly flag (here: a POP FIFO group,
 * `popFifoGroups`), the backoff's `max_attempts` its deliveries before the dead letter queue
 * (`popMaxDeliveryAttempts`), and the long polling at most what a receive is held (`popMaxLongPollMs`). What
 * the client registers as (producer of its topics, consumer of its group) is the heartbeat `registration`.
 */
import { DEFAULT_MAX_RECONSUME_TIMES, type HeartbeatData, MAX_BODY_BYTES } from "../protocol/index.js";
import { type ClientSettings, fromMs } from "./wire.js";

/** Messages a PushConsumer asks for per ReceiveMessage. */
export const RECEIVE_BATCH_SIZE = 32;
/** The long polling a consumer is told to use (POP holds a receive at most 20 s). */
export const LONG_POLLING_MS = 20_000;
/** A producer's attempts per send (RocketMQ's default). */
export const PRODUCER_MAX_ATTEMPTS = 3;

/** What a consumer of a group is told, from the broker's POP settings for the group. */
export interface ConsumerPolicy {
  fifo: boolean;
  maxDeliveryAttempts: number;
  maxLongPollMs: number;
}

/** Without a POP service: RocketMQ's defaults (not FIFO, 1 + 16 deliveries, 20 s). */
export const DEFAULT_CONSUMER_POLICY: ConsumerPolicy = {
  fifo: false,
  maxDeliveryAttempts: DEFAULT_MAX_RECONSUME_TIMES + 1,
  maxLongPollMs: LONG_POLLING_MS,
};

const CONSUMER_TYPES = new Set(["PUSH_CONSUMER", "SIMPLE_CONSUMER"]);

export const isConsumer = (s: ClientSettings) => s.clientType !== undefined && CONSUMER_TYPES.has(s.clientType);

/**
 * The Settings command answering `given` (the client's settings as decoded, echoed with the server's);
 * `policyOf` says how a consumer's group is served.
 */
export function answerSettings(
  parsed: ClientSettings,
  given: Record<string, unknown>,
  policyOf: (group: string) => ConsumerPolicy = () => DEFAULT_CONSUMER_POLICY,
) {
  const consumer = isConsumer(parsed);
  const group = parsed.subscription?.group?.name;
  const policy = consumer && group !== undefined ? policyOf(group) : DEFAULT_CONSUMER_POLICY;
  const backoffPolicy = {
    // A consumer: its group's deliveries before the DLQ; a producer: its attempts per send.
    maxAttempts: consumer ? policy.maxDeliveryAttempts : PRODUCER_MAX_ATTEMPTS,
    exponentialBackoff: consumer
      ? { initial: fromMs(1_000), max: fromMs(60_000), multiplier: 2 }
      : { initial: fromMs(10), max: fromMs(1_000), multiplier: 2 },
  };
  const echoed = given;
  if (consumer) {
    const sub = parsed.subscription;
    return {
      ...echoed,
      backoffPolicy,
      subscription: {
        ...(sub?.group === undefined ? {} : { group: sub.group }),
        subscriptions: sub?.subscriptions ?? [],
        fifo: policy.fifo,
        receiveBatchSize: RECEIVE_BATCH_SIZE,
        longPollingTimeout: fromMs(Math.min(LONG_POLLING_MS, policy.maxLongPollMs)),
      },
    };
  }
  return {
    ...echoed,
    backoffPolicy,
    publishing: { topics: parsed.publishing?.topics ?? [], maxBodySize: MAX_BODY_BYTES, validateMessageType: true },
  };
}

/** What the client is, as a heartbeat records it: a producer of its topics (its groups), or a POP consumer. */
export function registration(clientId: string, s: ClientSettings): HeartbeatData {
  const agent = {
    ...(s.userAgent?.language ? { language: s.userAgent.language.slice(0, 32) } : {}),
    ...(s.userAgent?.version ? { version: s.userAgent.version } : {}),
  };
  if (isConsumer(s)) {
    const group = s.subscription?.group?.name;
    if (group === undefined) return { clientId, ...agent };
    return {
      clientId,
      ...agent,
      consumerDataSet: [
        {
          groupName: group,
          consumeType: "CONSUME_POP",
          messageModel: "CLUSTERING",
          subscriptionDataSet: (s.subscription?.subscriptions ?? []).map((e) => ({
            topic: e.topic.name,
            subString: e.expression?.expression || "*",
          })),
        },
      ],
    };
  }
  const topics = (s.publishing?.topics ?? []).map((t) => t.name);
  // Every RocketMQ 5 producer can be asked about its transactions (its client decides whether it answers).
  return { clientId, ...agent, producerDataSet: topics.map((groupName) => ({ groupName, transactional: true })) };
}
