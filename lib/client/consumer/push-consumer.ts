/**
 * @module RocketMQ's `DefaultMQPushConsumer` with a concurrent listener: the consumer pulls the queues the
 * rebalance gives it and calls the listener; offsets are committed after consumption (every
 * `persistConsumerOffsetInterval`, and at once when a queue leaves: the release of the handover), so
 * delivery is at least once: a rebalance or a crash may redeliver, never lose. A CLUSTERING consumer also
 * subscribes to its group's retry topic `%RETRY%<group>`, where the broker keeps the messages it sent back
 * (RECONSUME_LATER: see `consume-concurrently.ts` and `retry.ts`).
 * With `registerMessageListenerOrderly` instead, each queue is consumed in order by one consumer at a time,
 * under a broker lock (`orderly-mode.ts`, `consume-orderly.ts`).
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
import { MessageQueue } from "../../core/message-queue.js";
import { retryTopic } from "../../core/names.js";
import { parseSubExpression, type TagSubscription } from "../../core/subscription.js";
import type { MessageExt } from "../message.js";
import { sleep } from "../schedule.js";
import type { ConsumerRunningInfo, OffsetReset } from "../transport/index.js";
import { ConsumeMessageConcurrentlyService } from "./consume-concurrently.js";
import type { StartOffset } from "./consume-from-where.js";
import type { MessageListenerOrderly } from "./consume-orderly.js";
import { type MessageListenerConcurrently, type PushConsumerOptions, resolveBaseOptions } from "./consumer-options.js";
import { ConsumerRuntime } from "./consumer-runtime.js";
import { runningInfoOf } from "./consumer-status.js";
import type { Turn } from "./handover.js";
import { OrderlyMode } from "./orderly-mode.js";
import { ProcessQueue } from "./process-queue.js";
import { type PullCauses, PullLoop } from "./pull-loop.js";
import { resolvePushSettings } from "./push-settings.js";
import { restoreRetryTopic, sendBackTo } from "./retry.js";

/** RocketMQ's PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL. */
const FLOW_CONTROL_DELAY_MS = 50;
/**
 * How long a rebalance waits for running listeners of a queue it takes away before committing and releasing
 * it: what they finish is in the committed offset, so the next owner does not deliver it again. Half the
 * default handover grace (10 s), so the release comes before the next owner stops waiting for it; on a
 * loaded machine a 1 s bound let in-flight messages through twice.
 */
const DROP_AWAIT_MS = 5000;

type ServiceState = "CREATE_JUST" | "RUNNING" | "SHUTDOWN_ALREADY";

interface QueueState {
  mq: MessageQueue;
  pq: ProcessQueue;
  loop: PullLoop;
}

export class PushConsumer {
  readonly #options: PushConsumerOptions;
  readonly #runtime: ConsumerRuntime;
  readonly #subscriptions = new Map<string, TagSubscription>();
  readonly #queues = new Map<string, QueueState>();
  readonly #settings;
  #listener: MessageListenerConcurrently | undefined;
  #orderlyListener: MessageListenerOrderly | undefined;
  #service: Pick<ConsumeMessageConcurrentlyService, "submitConsumeRequest" | "shutdown"> | undefined;
  #orderly: OrderlyMode | undefined;
  #state: ServiceState = "CREATE_JUST";
  /** Hints for queues this consumer does not pull (any more). */
  #ignoredHints = 0;
  /** Pulls of queues no longer held, by cause. */
  readonly #pastCauses: PullCauses = { afterFound: 0, byHint: 0, byTimer: 0 };
  readonly #pastFound: PullCauses = { afterFound: 0, byHint: 0, byTimer: 0 };

  constructor(options: PushConsumerOptions) {
    this.#options = options;
    const resolved = resolveBaseOptions(options, { pullBatchSize: 32, exceptionDelay: 3000 });
    this.#settings = resolvePushSettings(options);
    this.#runtime = new ConsumerRuntime(options, resolved, {
      consumeType: "CONSUME_PASSIVELY",
      subscriptions: () => new Map([...this.#allSubscriptions()].map(([topic, sub]) => [topic, sub.subString])),
      startQueue: (mq, start, turn) => this.#startQueue(mq, start, turn),
      stopQueue: (mq) => this.#stopQueue(mq),
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
      applyOffsetReset: (reset) => this.#applyOffsetReset(reset),
      heldQueues: () => this.#started(),
      queueHint: (hint) => {
        const q = this.#queues.get(new MessageQueue(hint.topic, hint.brokerName, hint.queueId).key());
        if (q === undefined) this.#ignoredHints++;
        else q.loop.wake(hint.maxOffset);
      },
      wakeAll: () => {
        for (const q of this.#queues.values()) q.loop.wake();
      },
    });
  }

  /** The user's subscriptions, and for CLUSTERING the group's retry topic (every tag), as RocketMQ adds it. */
  #allSubscriptions(): Map<string, TagSubscription> {
    const all = new Map(this.#subscriptions);
    if (this.#runtime?.resolved.messageModel !== "BROADCASTING") {
      all.set(retryTopic(this.#options.consumerGroup), parseSubExpression("*"));
    }
    return all;
  }

  #started(): MessageQueue[] {
    return [...this.#queues.values()].map((q) => q.mq);
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
    const pulls = { ...this.#pastCauses };
    const foundBy = { ...this.#pastFound };
    for (const q of this.#queues.values()) {
      addCauses(pulls, q.loop.causes);
      addCauses(foundBy, q.loop.foundBy);
    }
    const channel = this.#runtime.channel;
    return {
      up: channel?.up === true,
      connects: channel?.stats.connects ?? 0,
      hints: channel?.stats.hints ?? 0,
      ignoredHints: this.#ignoredHints,
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
   * Subscribes to a topic's messages whose tag matches `subExpression` ("*", or tags joined by "||").
   * Subscribing again replaces the expression. Allowed after `start()`: the group rebalances at once.
   */
  subscribe(topic: string, subExpression = "*"): void {
    if (typeof topic !== "string" || topic.length === 0)
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "topic is empty");
    this.#subscriptions.set(topic, parseSubExpression(subExpression));
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
        ? { sendBack: sendBackTo(this.#runtime.api, r.consumerGroup, this.#settings.maxReconsumeTimes) }
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
      onLeaseLost: (mq) => void this.#dropQueue(mq, true),
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
    const queues = [...this.#queues.values()];
    this.#queues.clear();
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

  #startQueue(mq: MessageQueue, start: StartOffset, turn: Turn): void {
    const r = this.#runtime.resolved;
    const store = this.#runtime.store;
    const sub = this.#allSubscriptions().get(mq.topic);
    if (sub === undefined || this.#state !== "RUNNING") return;
    this.#runtime.handover?.watch(mq, turn, start.offset);
    if (!start.fromStore) {
      // Commit a new group's starting point at once: a consumer taking the queue over later then resumes
      // here instead of choosing again (LAST would skip what arrived meanwhile).
      store.updateOffset(mq, start.offset, false);
      void store.persist(mq).catch((err: unknown) => r.onError(err, `committing the start of ${mq.key()}`));
    }
    const pq = new ProcessQueue();
    const s = this.#settings;
    const loop = new PullLoop(
      {
        api: this.#runtime.api,
        consumerGroup: r.consumerGroup,
        mq,
        subscription: () => this.#allSubscriptions().get(mq.topic) ?? sub,
        pullBatchSize: r.pullBatchSize,
        pullInterval: s.pullInterval,
        idleBackoffMillis: r.pullIdleBackoffMillis,
        idleBackoffMaxMillis: r.pullIdleBackoffMaxMillis,
        exceptionDelay: r.pullTimeDelayMillsWhenException,
        // The span limit is the concurrent listener's (an orderly one consumes from the lowest offset on).
        flowControl: () =>
          pq.msgCount > r.pullThresholdForQueue || (!this.#orderly && pq.maxSpan > s.consumeConcurrentlyMaxSpan)
            ? FLOW_CONTROL_DELAY_MS
            : 0,
        onFound: (msgs) => {
          pq.lastPullTimestamp = Date.now();
          const restored = restoreRetryTopic(msgs, r.consumerGroup);
          pq.putMessages(restored);
          this.#service?.submitConsumeRequest(restored, pq, mq);
        },
        // RocketMQ's correctTagsOffset: with nothing cached, what was skipped counts as consumed.
        onNothing: (next) => {
          if (pq.msgCount === 0 && !pq.released) store.updateOffset(mq, next, true);
        },
        onOffsetIllegal: async (next) => {
          store.updateOffset(mq, next, false);
          await store
            .persist(mq)
            .catch((err: unknown) => r.onError(err, `committing ${mq.key()} after OFFSET_ILLEGAL`));
        },
        onError: r.onError,
        idleCapMillis: () => this.#runtime.idleCapMillis(),
      },
      start.offset,
    );
    this.#queues.set(mq.key(), { mq, pq, loop });
    loop.start();
    this.#runtime.queuesChanged();
  }

  /**
   * RocketMQ's removeUnnecessaryMessageQueue, plus the release: stop pulling, let running listeners finish
   * (at most DROP_AWAIT_MS), commit where the queue stopped and mark it released, forget.
   */
  async #stopQueue(mq: MessageQueue): Promise<void> {
    const q = this.#queues.get(mq.key());
    if (q === undefined) return;
    this.#queues.delete(mq.key());
    addCauses(this.#pastCauses, q.loop.causes);
    addCauses(this.#pastFound, q.loop.foundBy);
    this.#runtime.queuesChanged();
    q.pq.dropped = true;
    await q.loop.stop();
    const timeout = new AbortController();
    await Promise.race([q.pq.whenIdle(), sleep(DROP_AWAIT_MS, timeout.signal)]);
    timeout.abort();
    const release = async (mqs: MessageQueue[]) => {
      q.pq.released = true;
      this.#runtime.handover?.unwatch(mq);
      await this.#runtime.store.release(mqs, (m) => this.#runtime.rebalance.successorOf(m));
    };
    if (this.#orderly === undefined) return release([mq]);
    // Orderly: never hand over while the listener runs (the next owner would consume beside it).
    const orderly = this.#orderly;
    const handOver = () => orderly.handOver([mq], release);
    if (q.pq.inflight === 0) return handOver();
    void q.pq
      .whenIdle()
      .then(handOver)
      .catch((err: unknown) => this.#runtime.resolved.onError(err, `releasing ${mq.key()}`));
  }

  /**
   * Stops a queue without releasing it: its lease is gone (`forget`: the rebalance starts it again once
   * locked), or an offset reset moves it (`forget` false: it restarts here at once at the new offset).
   */
  async #dropQueue(mq: MessageQueue, forget: boolean): Promise<void> {
    const q = this.#queues.get(mq.key());
    if (q === undefined) return;
    this.#queues.delete(mq.key());
    q.pq.dropped = true;
    q.pq.released = true;
    await q.loop.stop();
    this.#runtime.handover?.unwatch(mq);
    this.#runtime.store.removeOffset(mq);
    // A listener call still running must end before the queue can start here again.
    await q.pq.whenIdle();
    if (forget) this.#runtime.rebalance.forget(mq);
  }

  /** A reset of the group's offsets (resetOffsetByTime): every started queue of the topic moves there now. */
  async #applyOffsetReset(reset: OffsetReset): Promise<void> {
    const store = this.#runtime.store;
    for (const e of reset.offsetTable) {
      const q = [...this.#queues.values()].find(
        (x) => x.mq.topic === reset.topic && x.mq.brokerName === e.brokerName && x.mq.queueId === e.queueId,
      );
      if (q === undefined) continue;
      // Waits for the running listener call too: its late offset update cannot undo the reset.
      await this.#dropQueue(q.mq, false);
      store.updateOffset(q.mq, e.offset, false);
      await store.persist(q.mq);
      // The rebalance may have taken the queue away meanwhile (its stop found nothing to stop).
      if (!this.assignedQueues().some((mq) => mq.equals(q.mq))) continue;
      this.#startQueue(q.mq, { offset: e.offset, fromStore: true }, { kind: "clean" });
    }
  }

  /** What the heartbeat reports (consumerStatus). */
  #runningInfo(): Promise<ConsumerRunningInfo> {
    return runningInfoOf({
      consumeOrderly: this.consumeOrderly,
      assigned: this.assignedQueues(),
      queues: [...this.#queues.values()],
      locked: (mq) => this.#orderly?.leases.valid(mq) ?? false,
      store: this.#runtime.store,
    });
  }
}

function addCauses(into: PullCauses, from: PullCauses): void {
  into.afterFound += from.afterFound;
  into.byHint += from.byHint;
  into.byTimer += from.byTimer;
}
