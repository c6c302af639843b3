/**
 * @module The options and listener types of the consumers (`PushConsumer`, `LitePullConsumer`) with
 * RocketMQ's names and defaults (`DefaultMQPushConsumer`, `DefaultLitePullConsumer`), and where Nimbus
 * differs: HTTP has no long polling and no broker push, so an idle queue is polled with a growing backoff
 * and group membership is polled too.
 */

import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { MessageQueue } from "../../core/message-queue.js";
import { CHANNEL_PING_INTERVAL_MS, MAX_PULL_MESSAGES } from "../../protocol/index.js";
import type { AllocateMessageQueueStrategy } from "../allocate/index.js";
import { AllocateMessageQueueAveragely } from "../allocate/index.js";
import type { MessageExt } from "../message.js";
import type { TraceOptions } from "../trace/index.js";
import type { TransportOptions } from "../transport/index.js";

export type MessageModel = "CLUSTERING" | "BROADCASTING";
export type ConsumeFromWhere = "CONSUME_FROM_LAST_OFFSET" | "CONSUME_FROM_FIRST_OFFSET" | "CONSUME_FROM_TIMESTAMP";
export type ConsumeConcurrentlyStatus = "CONSUME_SUCCESS" | "RECONSUME_LATER";

/** What every listener learns about its batch: the queue it comes from. */
export interface ConsumeContext {
  readonly messageQueue: MessageQueue;
}

/** A listener of either kind: called with a batch and its context, it answers a status (or a promise of one). */
export type MessageListenerOf<C extends ConsumeContext, S extends string> = (
  msgs: MessageExt[],
  context: C,
) => S | Promise<S>;

/** What a concurrent listener learns about its batch and may set (RocketMQ's ConsumeConcurrentlyContext). */
export interface ConsumeConcurrentlyContext extends ConsumeContext {
  /**
   * With CONSUME_SUCCESS, the messages after this index of the batch are retried as if they had failed
   * (RocketMQ's ackIndex). Starts past the end: the whole batch succeeded.
   */
  ackIndex: number;
}

/** RocketMQ's MessageListenerConcurrently. A throw or a rejected promise counts as RECONSUME_LATER. */
export type MessageListenerConcurrently = MessageListenerOf<ConsumeConcurrentlyContext, ConsumeConcurrentlyStatus>;

/** Options both consumers share. Every interval is in milliseconds. */
export interface ConsumerBaseOptions extends Omit<TransportOptions, "endpoints"> {
  consumerGroup: string;
  /** Name server / API base URLs. */
  endpoints: string | string[];
  /** Default CLUSTERING: the group shares the queues. BROADCASTING: every consumer reads every queue. */
  messageModel?: MessageModel;
  /** Where a queue starts when the group has no committed offset for it. Default CONSUME_FROM_LAST_OFFSET. */
  consumeFromWhere?: ConsumeFromWhere;
  /**
   * For CONSUME_FROM_TIMESTAMP: ms since the epoch, or RocketMQ's `yyyyMMddHHmmss` in local time.
   * Default half an hour ago (RocketMQ's default).
   */
  consumeTimestamp?: number | string;
  /** Default `AllocateMessageQueueAveragely`. */
  allocateMessageQueueStrategy?: AllocateMessageQueueStrategy;
  /** Messages per pull (RocketMQ's pullBatchSize): 32 for push, 10 for lite pull. */
  pullBatchSize?: number;
  /** Full rebalance period. Default 20000 (RocketMQ's rebalance service). */
  rebalanceInterval?: number;
  /**
   * How often a clustering consumer reads its group's consumer list and rebalances when it changed (a
   * RocketMQ broker pushes the change; HTTP cannot). Default 5000: a departing consumer unregisters, so the
   * others take its queues over within 5 s, for one cheap request per consumer every 5 s (docs/cost.md).
   */
  membershipPollInterval?: number;
  /** Offset commit period. Default 5000 (persistConsumerOffsetInterval). */
  persistConsumerOffsetInterval?: number;
  /**
   * CLUSTERING: how long a consumer newly assigned a queue waits for the previous owner, still in the group,
   * to release it (docs/client.md "Queue handover"). Default 10000: two membership polls, so a healthy
   * owner always releases first; a stuck one holds the queue back no longer than this.
   */
  handoverGraceMillis?: number;
  /** Default 30000 (heartbeatBrokerInterval). The broker forgets a client 120 s after its last heartbeat. */
  heartbeatInterval?: number;
  /** First wait after a pull found nothing new; doubles up to `pullIdleBackoffMaxMillis`. Default 1000. */
  pullIdleBackoffMillis?: number;
  /** Longest wait between pulls of an idle queue. Default 10000 (each idle pull is a billed request: docs/cost.md). */
  pullIdleBackoffMaxMillis?: number;
  /** Wait after a failed pull: 3000 for push, 1000 for lite pull (RocketMQ's pullTimeDelayMillsWhenException). */
  pullTimeDelayMillsWhenException?: number;
  /** Most messages cached per queue before pulling pauses. Default 1000 (pullThresholdForQueue). */
  pullThresholdForQueue?: number;
  /**
   * The push channel (docs/push-channel.md): `true` (default) opens the one the API announces, a string is
   * its URL, `false` polls only. With the channel up, hints wake idle queues and group changes rebalance at
   * once; heartbeats, membership reads and idle pulls fall back to `channelPollInterval`.
   */
  pushChannel?: boolean | string;
  /**
   * With the channel up: the longest wait between reads of an idle queue, and between rebalances, in case a
   * hint was lost. Default 600000 (docs/cost.md: an idle consumer of 4 queues then costs about $0.07 a month).
   */
  channelPollInterval?: number;
  /** The channel's ping (keeps it open and renews its lease). Default 480000, under API Gateway's 10 min idle limit. */
  channelPingInterval?: number;
  /** First pause before reconnecting a dropped channel (doubling up to 30 s). Default 1000. */
  channelReconnectMillis?: number;
  /** BROADCASTING offsets live in `<offsetStoreDir>/<clientId>/<group>/offsets.json`. Default `~/.nimbus_offsets`. */
  offsetStoreDir?: string;
  /** Default "DEFAULT", which a clustering consumer turns into `<pid>#<nanoTime>` (see client-id.ts). */
  instanceName?: string;
  unitName?: string;
  /** The IP in the client id. Default: this host's (RocketMQ's pick). */
  clientIP?: string;
  /** Where background failures go (pulls, commits, heartbeats). Default: `console.warn`. */
  onError?: (err: unknown, what: string) => void;
}

/** With `enableMsgTrace`, every listener call records SubBefore and SubAfter traces (docs/trace.md). */
export interface PushConsumerOptions extends ConsumerBaseOptions, TraceOptions {
  /** Most messages handed to one listener call. Default 1. */
  consumeMessageBatchMaxSize?: number;
  /** Wait between two pulls of a queue that found messages. Default 0. */
  pullInterval?: number;
  /** Listener calls running at once across all queues (RocketMQ's consumeThreadMax). Default 20. */
  consumeThreadMax?: number;
  /** Pulling pauses while the cached offsets of a queue span more than this. Default 2000. */
  consumeConcurrentlyMaxSpan?: number;
  /**
   * CLUSTERING: how many times a failed message is retried (through the group's retry topic, after delay
   * level 3 + reconsumeTimes) before the broker moves it to the group's dead-letter queue. Default 16 (-1: 16).
   * An orderly listener redelivers in place without limit by default (RocketMQ's orderly -1); with a bound, a
   * message that exceeds it goes to the dead-letter queue (CLUSTERING) and the queue moves on.
   */
  maxReconsumeTimes?: number;
  /**
   * Wait before consuming a failed message again in this consumer, when sending it back to the broker
   * failed (or in a test harness without a broker). Default 5000 (RocketMQ's). The retry topic's delays are
   * the deployment's delay levels.
   */
  reconsumeDelayMillis?: number | ((reconsumeTimes: number) => number);
  /**
   * Orderly listener: how long a queue waits after SUSPEND_CURRENT_QUEUE_A_MOMENT before the same messages
   * are delivered again (RocketMQ's suspendCurrentQueueTimeMillis). Default 1000.
   */
  suspendCurrentQueueTimeMillis?: number;
  /**
   * Orderly listener: how often the queue locks are renewed (RocketMQ's lock interval, 20 s). Keep it well
   * under half the broker's lease (`queueLockLeaseMs`, 60 s), which is how long the consumer trusts a lock.
   */
  lockRenewIntervalMillis?: number;
  /** How long `shutdown()` waits for running listeners. Default 30000. */
  awaitTerminationMillisWhenShutdown?: number;
}

/** With `enableMsgTrace`, every `poll()` that returns messages records SubBefore and SubAfter (docs/trace.md). */
export interface LitePullConsumerOptions extends ConsumerBaseOptions, TraceOptions {
  /** Commit the offsets of polled messages periodically and at shutdown. Default true. */
  autoCommit?: boolean;
  /** Default 5000, at least 1000 (RocketMQ's minimum). */
  autoCommitIntervalMillis?: number;
  /** Default wait of `poll()`. Default 5000. */
  pollTimeoutMillis?: number;
  /** Most messages pulled but not yet polled, over all queues. Default 10000 (pullThresholdForAll). */
  pullThresholdForAll?: number;
  /** Pulling pauses while the unpolled offsets of a queue span more than this. Default 2000 (consumeMaxSpan). */
  consumeMaxSpan?: number;
}

/** RocketMQ's wait before consuming a message again here when sending it back failed: 5 s. */
export const DEFAULT_LOCAL_RECONSUME_DELAY_MS = 5000;

/** The shared options with defaults applied. */
export interface ResolvedBaseOptions {
  consumerGroup: string;
  messageModel: MessageModel;
  consumeFromWhere: ConsumeFromWhere;
  consumeTimestamp: number;
  strategy: AllocateMessageQueueStrategy;
  pullBatchSize: number;
  rebalanceInterval: number;
  membershipPollInterval: number;
  persistConsumerOffsetInterval: number;
  handoverGraceMillis: number;
  heartbeatInterval: number;
  pullIdleBackoffMillis: number;
  pullIdleBackoffMaxMillis: number;
  pullTimeDelayMillsWhenException: number;
  pullThresholdForQueue: number;
  pushChannel: boolean | string;
  channelPollInterval: number;
  channelPingInterval: number;
  channelReconnectMillis: number;
  onError: (err: unknown, what: string) => void;
}

function illegal(message: string): NimbusError {
  return new NimbusError(ErrorCode.PARAMETER_ILLEGAL, message);
}

/** Checks that `value` is an integer in [min, max] and returns it. */
export function checkRange(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw illegal(`${name} must be an integer in [${min}, ${max}]`);
  return value;
}

/** RocketMQ's `yyyyMMddHHmmss` (local time) or ms since the epoch. */
export function parseConsumeTimestamp(value: number | string | undefined, now = Date.now()): number {
  if (value === undefined) return now - 30 * 60_000;
  if (typeof value === "number") return value;
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(value);
  if (!m) throw illegal(`consumeTimestamp must be ms since the epoch or yyyyMMddHHmmss, got ${value}`);
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  return new Date(y, mo - 1, d, h, mi, s).getTime();
}

const defaultOnError = (err: unknown, what: string) => console.warn(`nimbus consumer: ${what}:`, err);

export function resolveBaseOptions(
  o: ConsumerBaseOptions,
  defaults: { pullBatchSize: number; exceptionDelay: number },
) {
  if (typeof o.consumerGroup !== "string" || o.consumerGroup.length === 0) throw illegal("consumerGroup is empty");
  const ms = (name: string, value: number | undefined, fallback: number, min = 0) =>
    checkRange(name, value ?? fallback, min, 2 ** 31 - 1);
  const resolved: ResolvedBaseOptions = {
    consumerGroup: o.consumerGroup,
    messageModel: o.messageModel ?? "CLUSTERING",
    consumeFromWhere: o.consumeFromWhere ?? "CONSUME_FROM_LAST_OFFSET",
    consumeTimestamp: parseConsumeTimestamp(o.consumeTimestamp),
    strategy: o.allocateMessageQueueStrategy ?? new AllocateMessageQueueAveragely(),
    pullBatchSize: checkRange("pullBatchSize", o.pullBatchSize ?? defaults.pullBatchSize, 1, MAX_PULL_MESSAGES),
    rebalanceInterval: ms("rebalanceInterval", o.rebalanceInterval, 20_000, 1),
    membershipPollInterval: ms("membershipPollInterval", o.membershipPollInterval, 5000, 1),
    persistConsumerOffsetInterval: ms("persistConsumerOffsetInterval", o.persistConsumerOffsetInterval, 5000, 1),
    handoverGraceMillis: ms("handoverGraceMillis", o.handoverGraceMillis, 10_000, 0),
    heartbeatInterval: ms("heartbeatInterval", o.heartbeatInterval, 30_000, 1),
    pullIdleBackoffMillis: ms("pullIdleBackoffMillis", o.pullIdleBackoffMillis, 1000, 1),
    pullIdleBackoffMaxMillis: ms("pullIdleBackoffMaxMillis", o.pullIdleBackoffMaxMillis, 10_000, 1),
    pullTimeDelayMillsWhenException: ms(
      "pullTimeDelayMillsWhenException",
      o.pullTimeDelayMillsWhenException,
      defaults.exceptionDelay,
    ),
    pullThresholdForQueue: checkRange("pullThresholdForQueue", o.pullThresholdForQueue ?? 1000, 1, 65535),
    pushChannel: o.pushChannel ?? true,
    channelPollInterval: ms("channelPollInterval", o.channelPollInterval, 600_000, 1),
    channelPingInterval: ms("channelPingInterval", o.channelPingInterval, CHANNEL_PING_INTERVAL_MS, 1),
    channelReconnectMillis: ms("channelReconnectMillis", o.channelReconnectMillis, 1000, 1),
    onError: o.onError ?? defaultOnError,
  };
  if (resolved.messageModel !== "CLUSTERING" && resolved.messageModel !== "BROADCASTING")
    throw illegal(`messageModel must be CLUSTERING or BROADCASTING, got ${String(resolved.messageModel)}`);
  return resolved;
}
