/**
 * @module RocketMQ's `DefaultMQPushConsumer` with a concurrent listener: the consumer pulls the queues the
 * rebalance gives it and calls the listener; offsets are committed after consumption (every
 * `persistConsumerOffsetInterval`, and at once when a queue leaves: the release of the handover), so
 * delivery is at least once: a rebalance or a crash may redeliver, never lose. A CLUSTERING consumer also
 * subscribes to its group's retry topic `%RETRY%<group>`, where the broker keeps the messages it sent back
 * (RECONSUME_LATER: see `consume-concurrently.ts` and `retry.ts`).
 * With `registerMessageListenerOrderly` instead, each queue is consumed in order by one consumer at a time,
 * under a broker lock (`orderly-mode.ts`, `consume-orderly.ts`). The queues it pulls, and their stop and
 * handover, are `push-queues.ts`.
 *
 * @example
 * const consumer = new PushConsumer({ consumerGroup: "orders-group", endpoints: "http://127.0.0.1:9876" });
 * consumer.subscribe("Orders", "TagA || TagB");
 * consumer.registerMessageListener(async (msgs) => {
 *   for (const m of msgs) console.log(m.msgId, m.bodyText);
 *   return "CONSUME_SUCCESS";
 * });
 * await consumer.start();
 * // ...
 * await consumer.shutdown();
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { MessageFilter } from "../../core/filter/index.js";
import type { MessageQueue } from "../../core/message-queue.js";
import { retryTopic } from "../../core/names.js";
import type { MessageExt } from "../message.js";
import type { ServiceState } from "../service-state.js";
import type { ConsumerRunningInfo } from "../transport/index.js";
import { ConsumeMessageConcurrentlyService } from "./consume-concurrently.js";
import type { MessageListenerOrderly } from "./consume-orderly.js";
import { type MessageListenerConcurrently, type PushConsumerOptions, resolveBaseOptions } from "./consumer-options.js";
import { ConsumerRuntime } from "./consumer-runtime.js";
import { runningInfoOf } from "./consumer-status.js";
import { compileSubscription, EVERY_MESSAGE, type Subscription } from "./message-selector.js";
import { OrderlyMode } from "./orderly-mode.js";
import type { PullCauses } from "./pull-loop.js";
import { PushQueues } from "./push-queues.js";
import { resolvePushSettings } from "./push-settings.js";
import { sendBackTo } from "./retry.js";

export class PushConsumer {
  readonly #options: PushConsumerOptions;
  readonly #runtime: ConsumerRuntime;
  readonly #subscriptions = new Map<string, MessageFilter>();
  readonly #queues: PushQueues;
  readonly #settings;
  #listener: MessageListenerConcurrently | undefined;
  #orderlyListener: MessageListenerOrderly | undefined;
  #service: Pick<ConsumeMessageConcurrentlyService, "submitConsumeRequest" | "shutdown"> | undefined;
  #orderly: OrderlyMode | undefined;
  #state: ServiceState = "CREATE_JUST";

  constructor(options: PushConsumerOptions) {
    this.#options = options;
    const resolved = resolveBaseOptions(options, { pullBatchSize: 32, exceptionDelay: 3000 });
    this.#settings = resolvePushSettings(options);
    this.#runtime = new ConsumerRuntime(options, resolved, {
      consumeType: "CONSUME_PASSIVELY",
      subscriptions: () => this.#allSubscriptions(),
      startQueue: (mq, start, turn) => this.#queues.start(mq, start, turn),
      stopQueue: (mq) => this.#queues.stop(mq),
      // Queues taken without a release are not committed while their previous owner may still write them,
      // nor an orderly queue whose lease ran out (another owner may have started it).
      persist: () =>
        this.#runtime.store.persistAll(
          this.#started().filter(
            (mq) => !this.#runtime.handover?.watching(mq) && (this.#orderly?.leases.valid(mq) ?? true),
          ),
        ),
      lock: async (mq, signal) => this.#orderly?.lock(mq, signal),
      runningInfo: async () => this.#runningInfo(),
      applyOffsetReset: (reset) => this.#queues.applyOffsetReset(reset),
      heldQueues: () => this.#started(),
      queueHint: (hint) => this.#queues.hint(hint),
      wakeAll: () => this.#queues.wakeAll(),
    });
    this.#queues = new PushQueues({
      runtime: this.#runtime,
      settings: this.#settings,
      subscription: (topic) => this.#allSubscriptions().get(topic),
      running: () => this.#state === "RUNNING",
      service: () => this.#service,
      orderly: () => this.#orderly,
      assignedQueues: () => this.assignedQueues(),
    });
  }

  /** The user's subscriptions, and for CLUSTERING the group's retry topic (every tag), as RocketMQ adds it. */
  #allSubscriptions(): Map<string, MessageFilter> {
    const all = new Map(this.#subscriptions);
    if (this.#runtime?.resolved.messageModel !== "BROADCASTING") {
      all.set(retryTopic(this.#options.consumerGroup), EVERY_MESSAGE);
    }
    return all;
  }

  #started(): MessageQueue[] {
    return this.#queues.started();
  }

  /** This consumer's id in its group (`ip@instanceName`). */
  get clientId(): string {
    return this.#runtime.clientId;
  }

  get consumerGroup(): string {
    return this.#options.consumerGroup;
  }

  /** The queues of this consumer's subscriptions that it pulls now, sorted (its retry queues: `retryQueues()`). */
  assignedQueues(): MessageQueue[] {
    const retry = retryTopic(this.#options.consumerGroup);
    return this.#runtime.rebalance.assignedQueues().filter((mq) => mq.topic !== retry);
  }

  /** The queues of the group's retry topic `%RETRY%<group>` that this consumer pulls now (CLUSTERING). */
  retryQueues(): MessageQueue[] {
    const retry = retryTopic(this.#options.consumerGroup);
    return this.#runtime.rebalance.assignedQueues().filter((mq) => mq.topic === retry);
  }

  /**
   * Messages this consumer delivered that another member of the group had already consumed and committed
   * (a queue taken over without its previous owner's release). RocketMQ has no such number.
   */
  get duplicatesDelivered(): number {
    return this.#runtime.handover?.duplicates ?? 0;
  }

  /**
   * The push channel's part (docs/push-channel.md): whether it is up, its counters, hints ignored (a queue
   * not held), rebalances it started, and every pull by cause (after messages, woken by a hint, by the timer),
   * all of them and those that found messages.
   */
  get pushChannelStats(): {
    up: boolean;
    connects: number;
    hints: number;
    ignoredHints: number;
    roundsByChannel: number;
    pulls: PullCauses;
    foundBy: PullCauses;
  } {
    const { pulls, foundBy } = this.#queues.causes();
    const channel = this.#runtime.channel;
    return {
      up: channel?.up === true,
      connects: channel?.stats.connects ?? 0,
      hints: channel?.stats.hints ?? 0,
      ignoredHints: this.#queues.ignoredHints,
      roundsByChannel: this.#runtime.roundsByChannel,
      pulls,
      foundBy,
    };
  }

  /** Drops the push channel's connection as a network failure would (it reconnects): for tests and chaos. */
  killPushChannel(): void {
    this.#runtime.channel?.kill();
  }

  /** Rebalance rounds completed so far (periodic, membership-triggered and at start). */
  get rebalanceRounds(): number {
    return this.#runtime.rebalance.rounds;
  }

  /**
   * Subscribes to a topic's messages that match `subscription`: a tag expression ("*", or tags joined by "||")
   * or a `MessageSelector` (`MessageSelector.bySql("a > 5")`, `MessageSelector.byTag("TagA")`), compiled here:
   * a bad one throws PARAMETER_ILLEGAL. Subscribing again replaces it. Allowed after `start()`: the group
   * rebalances at once.
   */
  subscribe(topic: string, subscription: Subscription = "*"): void {
    if (typeof topic !== "string" || topic.length === 0)
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "topic is empty");
    this.#subscriptions.set(topic, compileSubscription(subscription));
    if (this.#state === "RUNNING") this.#runtime.subscriptionChanged(topic);
  }

  registerMessageListener(listener: MessageListenerConcurrently): void {
    this.#listener = listener;
    this.#orderlyListener = undefined;
  }

  /**
   * RocketMQ's MessageListenerOrderly: each queue is consumed by one consumer of the group at a time, in
   * offset order, one batch (`consumeMessageBatchMaxSize`) at a time; answer SUCCESS or
   * SUSPEND_CURRENT_QUEUE_A_MOMENT (redeliver the batch after `suspendCurrentQueueTimeMillis`).
   */
  registerMessageListenerOrderly(listener: MessageListenerOrderly): void {
    this.#orderlyListener = listener;
    this.#listener = undefined;
  }

  /** True when the listener is orderly. */
  get consumeOrderly(): boolean {
    return this.#orderlyListener !== undefined;
  }

  /** Heartbeats, rebalances and starts pulling. Resolves after the first rebalance. */
  async start(): Promise<void> {
    if (this.#state !== "CREATE_JUST")
      throw new NimbusError(ErrorCode.SERVICE_NOT_AVAILABLE, `the consumer is ${this.#state}, it can start only once`);
    if (this.#listener === undefined && this.#orderlyListener === undefined)
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "registerMessageListener before start");
    const r = this.#runtime.resolved;
    const onDelivered = (mq: MessageQueue, msgs: readonly MessageExt[]) =>
      this.#runtime.handover?.delivered(
        mq,
        msgs.map((m) => m.queueOffset),
      );
    if (this.#orderlyListener !== undefined) {
      if (r.messageModel !== "CLUSTERING")
        throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "an orderly listener needs the CLUSTERING model");
      this.#orderly = this.#orderlyMode(this.#orderlyListener, onDelivered);
      this.#service = this.#orderly.service;
      this.#state = "RUNNING";
      this.#orderly.start();
      await this.#runtime.start(true);
      return;
    }
    if (this.#listener === undefined) return;
    this.#service = new ConsumeMessageConcurrentlyService({
      listener: this.#listener,
      messageModel: r.messageModel,
      store: this.#runtime.store,
      consumeMessageBatchMaxSize: this.#settings.consumeMessageBatchMaxSize,
      consumeThreadMax: this.#settings.consumeThreadMax,
      reconsumeDelay: this.#settings.reconsumeDelay,
      ...(r.messageModel === "CLUSTERING"
        ? { sendBack: sendBackTo(this.#runtime.api, r.consumerGroup, this.#settings.sendBackMaxReconsumeTimes) }
        : {}),
      onDelivered,
      onError: r.onError,
    });
    this.#state = "RUNNING";
    await this.#runtime.start(true);
  }

  #orderlyMode(
    listener: MessageListenerOrderly,
    onDelivered: (mq: MessageQueue, msgs: readonly MessageExt[]) => void,
  ): OrderlyMode {
    const r = this.#runtime.resolved;
    const s = this.#settings;
    return new OrderlyMode({
      api: this.#runtime.api,
      group: r.consumerGroup,
      clientId: this.clientId,
      listener,
      store: this.#runtime.store,
      consumeMessageBatchMaxSize: s.consumeMessageBatchMaxSize,
      suspendCurrentQueueTimeMillis: s.suspendCurrentQueueTimeMillis,
      maxReconsumeTimes: s.orderlyMaxReconsumeTimes,
      // CLUSTERING: past maxReconsumeTimes a message goes to %DLQ%<group> (send-back with level -1);
      // BROADCASTING has no dead-letter queue, so it is retried for ever.
      deadLetter:
        r.messageModel === "CLUSTERING"
          ? async (mq, msgs) => {
              const toDlq = sendBackTo(this.#runtime.api, r.consumerGroup, s.maxReconsumeTimes);
              for (const m of msgs) await toDlq(m, mq, -1);
            }
          : undefined,
      lockRenewIntervalMillis: s.lockRenewIntervalMillis,
      lockRetryMillis: Math.min(r.membershipPollInterval, 1000),
      started: () => this.#started(),
      assigned: () => this.#runtime.rebalance.assignedQueues(),
      onLeaseLost: (mq) => void this.#queues.drop(mq, true),
      onDelivered,
      onError: r.onError,
    });
  }

  /**
   * Stops pulling, waits for running listeners (up to `awaitTerminationMillisWhenShutdown`), commits and
   * releases the queues and leaves the group. Messages pulled but not consumed are not committed; the
   * queue's next owner gets them.
   */
  async shutdown(): Promise<void> {
    if (this.#state !== "RUNNING") {
      this.#state = "SHUTDOWN_ALREADY";
      return;
    }
    this.#state = "SHUTDOWN_ALREADY";
    const r = this.#runtime.resolved;
    await this.#runtime.stopBackground();
    this.#runtime.rebalance.releaseAll();
    const queues = this.#queues.takeAll();
    for (const q of queues) q.pq.dropped = true;
    await Promise.all(queues.map((q) => q.loop.stop()));
    await (this.#orderly ?? this.#service)?.shutdown(this.#settings.awaitTermination);
    for (const q of queues) {
      q.pq.released = true;
      this.#runtime.handover?.unwatch(q.mq);
    }
    const rebalance = this.#runtime.rebalance;
    const release = (mqs: MessageQueue[]) => this.#runtime.store.release(mqs, (mq) => rebalance.successorOf(mq, true));
    const mqs = queues.map((q) => q.mq);
    await (this.#orderly ? this.#orderly.handOver(mqs, release) : release(mqs)).catch((err: unknown) =>
      r.onError(err, "releasing the queues at shutdown"),
    );
    await this.#runtime.unregister().catch((err: unknown) => r.onError(err, "unregistering"));
  }

  /** What the heartbeat reports (consumerStatus). */
  #runningInfo(): Promise<ConsumerRunningInfo> {
    return runningInfoOf({
      consumeOrderly: this.consumeOrderly,
      assigned: this.assignedQueues(),
      queues: this.#queues.all(),
      locked: (mq) => this.#orderly?.leases.valid(mq) ?? false,
      store: this.#runtime.store,
    });
  }
}
