/**
 * @module RocketMQ's `DefaultMQPushConsumer` with a concurrent listener: the consumer pulls the queues the
 * rebalance gives it and calls the listener; offsets are committed after consumption (every
 * `persistConsumerOffsetInterval`, and at once when a queue leaves: the release of the handover), so
 * delivery is at least once: a rebalance or a crash may redeliver, never lose. A CLUSTERING consumer also
 * subscribes to its group's retry topic `%RETRY%<group>`, where the broker keeps the messages it sent back
 * (RECONSUME_LATER: see `consume-concurrently.ts` and `retry.ts`).
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
import { ErrorCode, NimbusError } from "../core/errors.js";
import type { MessageQueue } from "../core/message-queue.js";
import { retryTopic } from "../core/names.js";
import { parseSubExpression, type TagSubscription } from "../core/subscription.js";
import { ConsumeMessageConcurrentlyService } from "./consume-concurrently.js";
import type { StartOffset } from "./consume-from-where.js";
import {
  checkRange,
  DEFAULT_LOCAL_RECONSUME_DELAY_MS,
  type MessageListenerConcurrently,
  type PushConsumerOptions,
  resolveBaseOptions,
} from "./consumer-options.js";
import { ConsumerRuntime } from "./consumer-runtime.js";
import type { Turn } from "./handover.js";
import { ProcessQueue } from "./process-queue.js";
import { PullLoop } from "./pull-loop.js";
import { restoreRetryTopic, sendBackTo } from "./retry.js";
import { sleep } from "./schedule.js";

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
  #service: ConsumeMessageConcurrentlyService | undefined;
  #state: ServiceState = "CREATE_JUST";

  constructor(options: PushConsumerOptions) {
    this.#options = options;
    const resolved = resolveBaseOptions(options, { pullBatchSize: 32, exceptionDelay: 3000 });
    const reconsume = options.reconsumeDelayMillis;
    const maxReconsumeTimes = options.maxReconsumeTimes ?? 16;
    this.#settings = {
      consumeMessageBatchMaxSize: checkRange(
        "consumeMessageBatchMaxSize",
        options.consumeMessageBatchMaxSize ?? 1,
        1,
        1024,
      ),
      pullInterval: checkRange("pullInterval", options.pullInterval ?? 0, 0, 65535),
      consumeThreadMax: checkRange("consumeThreadMax", options.consumeThreadMax ?? 20, 1, 1000),
      consumeConcurrentlyMaxSpan: checkRange(
        "consumeConcurrentlyMaxSpan",
        options.consumeConcurrentlyMaxSpan ?? 2000,
        1,
        65535,
      ),
      maxReconsumeTimes: maxReconsumeTimes === -1 ? 16 : checkRange("maxReconsumeTimes", maxReconsumeTimes, 0, 1000),
      reconsumeDelay: typeof reconsume === "function" ? reconsume : () => reconsume ?? DEFAULT_LOCAL_RECONSUME_DELAY_MS,
      awaitTermination: checkRange(
        "awaitTerminationMillisWhenShutdown",
        options.awaitTerminationMillisWhenShutdown ?? 30_000,
        0,
        2 ** 31 - 1,
      ),
    };
    this.#runtime = new ConsumerRuntime(options, resolved, {
      consumeType: "CONSUME_PASSIVELY",
      subscriptions: () => new Map([...this.#allSubscriptions()].map(([topic, sub]) => [topic, sub.subString])),
      startQueue: (mq, start, turn) => this.#startQueue(mq, start, turn),
      stopQueue: (mq) => this.#stopQueue(mq),
      // Queues taken without a release are not committed while their previous owner may still write them.
      persist: () =>
        this.#runtime.store.persistAll(this.#started().filter((mq) => !this.#runtime.handover?.watching(mq))),
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
  }

  /** Heartbeats, rebalances and starts pulling. Resolves after the first rebalance. */
  async start(): Promise<void> {
    if (this.#state !== "CREATE_JUST")
      throw new NimbusError(ErrorCode.SERVICE_NOT_AVAILABLE, `the consumer is ${this.#state}, it can start only once`);
    if (this.#listener === undefined)
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "registerMessageListener before start");
    const r = this.#runtime.resolved;
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
      onDelivered: (mq, msgs) =>
        this.#runtime.handover?.delivered(
          mq,
          msgs.map((m) => m.queueOffset),
        ),
      onError: r.onError,
    });
    this.#state = "RUNNING";
    await this.#runtime.start(true);
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
    await this.#service?.shutdown(this.#settings.awaitTermination);
    for (const q of queues) {
      q.pq.released = true;
      this.#runtime.handover?.unwatch(q.mq);
    }
    const rebalance = this.#runtime.rebalance;
    await this.#runtime.store
      .release(
        queues.map((q) => q.mq),
        (mq) => rebalance.successorOf(mq, true),
      )
      .catch((err: unknown) => r.onError(err, "releasing the queues at shutdown"));
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
        flowControl: () =>
          pq.msgCount > r.pullThresholdForQueue || pq.maxSpan > s.consumeConcurrentlyMaxSpan
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
      },
      start.offset,
    );
    this.#queues.set(mq.key(), { mq, pq, loop });
    loop.start();
  }

  /**
   * RocketMQ's removeUnnecessaryMessageQueue, plus the release: stop pulling, let running listeners finish
   * (at most DROP_AWAIT_MS), commit where the queue stopped and mark it released, forget.
   */
  async #stopQueue(mq: MessageQueue): Promise<void> {
    const q = this.#queues.get(mq.key());
    if (q === undefined) return;
    this.#queues.delete(mq.key());
    q.pq.dropped = true;
    await q.loop.stop();
    const timeout = new AbortController();
    await Promise.race([q.pq.whenIdle(), sleep(DROP_AWAIT_MS, timeout.signal)]);
    timeout.abort();
    q.pq.released = true;
    this.#runtime.handover?.unwatch(mq);
    await this.#runtime.store.release([mq], (m) => this.#runtime.rebalance.successorOf(m));
  }
}
