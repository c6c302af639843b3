/**
 * @module RocketMQ's `DefaultLitePullConsumer`: the application polls. `subscribe` lets the group's
 * rebalance pick the queues; `assign` names them (no rebalance, no heartbeat, so a manual consumer never
 * takes part in another consumer's allocation). Background pull loops fill a cache that `poll()` takes
 * from. With `autoCommit`, each `poll()` first commits (every `autoCommitIntervalMillis`) the offsets of
 * everything the earlier polls returned, as RocketMQ does, and `shutdown()` commits once more; so commit
 * means "returned by poll", and an application that polls again has handled what it got before. In
 * subscribe mode a queue changes hands as the push consumer's do (docs/client.md "Queue handover"): the
 * previous owner releases it with its offset, and a new owner reads it only after that (or after a grace).
 * With `enableMsgTrace`, a poll that returns messages traces them as RocketMQ's does (docs/trace.md).
 *
 * @example
 * const consumer = new LitePullConsumer({ consumerGroup: "audit", endpoints: "http://127.0.0.1:9876" });
 * consumer.subscribe("Orders", "*");
 * await consumer.start();
 * for (;;) {
 *   const msgs = await consumer.poll(1000);
 *   for (const m of msgs) console.log(m.queueOffset, m.bodyText);
 * }
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { MessageFilter } from "../../core/filter/index.js";
import { MessageQueue } from "../../core/message-queue.js";
import type { MessageExt } from "../message.js";
import { sleep } from "../schedule.js";
import type { ServiceState } from "../service-state.js";
import { MessageTracer } from "../trace/index.js";
import { QueueBounds, type StartOffset } from "./consume-from-where.js";
import { checkRange, type LitePullConsumerOptions, resolveBaseOptions } from "./consumer-options.js";
import { ConsumerRuntime } from "./consumer-runtime.js";
import type { Turn } from "./handover.js";
import { LitePullQueues } from "./lite-pull-queues.js";
import { compileSubscription, EVERY_MESSAGE, type Subscription } from "./message-selector.js";
import { readableQueues } from "./rebalance.js";

export class LitePullConsumer {
  readonly #runtime: ConsumerRuntime;
  readonly #queues: LitePullQueues;
  readonly #subscriptions = new Map<string, MessageFilter>();
  readonly #autoCommit: boolean;
  readonly #autoCommitInterval: number;
  readonly #pollTimeout: number;
  readonly #stopping = new AbortController();
  readonly #tracer: MessageTracer | undefined;
  #mode: "NONE" | "SUBSCRIBE" | "ASSIGN" = "NONE";
  #assignment: MessageQueue[] = [];
  #state: ServiceState = "CREATE_JUST";
  #nextAutoCommit = 0;

  constructor(options: LitePullConsumerOptions) {
    const resolved = resolveBaseOptions(options, { pullBatchSize: 10, exceptionDelay: 1000 });
    this.#autoCommit = options.autoCommit ?? true;
    this.#autoCommitInterval = checkRange(
      "autoCommitIntervalMillis",
      options.autoCommitIntervalMillis ?? 5000,
      1000,
      2 ** 31 - 1,
    );
    this.#pollTimeout = checkRange("pollTimeoutMillis", options.pollTimeoutMillis ?? 5000, 0, 2 ** 31 - 1);
    this.#runtime = new ConsumerRuntime(options, resolved, {
      consumeType: "CONSUME_ACTIVELY",
      subscriptions: () => this.#subscriptions,
      startQueue: (mq, start, turn) => this.#startQueue(mq, start, turn),
      stopQueue: (mq) => this.#stopQueue(mq),
      persist: () => this.#runtime.store.persistAll(this.#committable()),
      // resetOffsetByTime while running: each assigned queue of the topic goes on from the reset offset.
      applyOffsetReset: async (reset) => {
        for (const e of reset.offsetTable) {
          const mq = new MessageQueue(reset.topic, e.brokerName, e.queueId);
          if (!this.#queues.has(mq)) continue;
          await this.#queues.restart(mq, e.offset);
          this.#runtime.store.updateOffset(mq, e.offset, false);
          await this.#runtime.store.persist(mq);
        }
      },
    });
    this.#tracer = MessageTracer.of(options, {
      api: this.#runtime.api,
      group: options.consumerGroup,
      clientId: () => this.clientId,
      onError: (err) => resolved.onError(err, "sending trace records"),
    });
    this.#queues = new LitePullQueues({
      api: this.#runtime.api,
      resolved,
      pullThresholdForAll: checkRange("pullThresholdForAll", options.pullThresholdForAll ?? 10_000, 1, 2 ** 31 - 1),
      consumeMaxSpan: checkRange("consumeMaxSpan", options.consumeMaxSpan ?? 2000, 1, 65535),
      subscription: (topic) => this.#subscriptions.get(topic) ?? EVERY_MESSAGE,
    });
  }

  get clientId(): string {
    return this.#runtime.clientId;
  }

  /** Messages `poll()` returned that another member of the group had already committed (see PushConsumer). */
  get duplicatesDelivered(): number {
    return this.#runtime.handover?.duplicates ?? 0;
  }

  /** The queues this consumer pulls now, sorted. */
  assignedQueues(): MessageQueue[] {
    return this.#mode === "ASSIGN" ? [...this.#assignment] : this.#runtime.rebalance.assignedQueues();
  }

  /**
   * Group-managed consumption of a topic's messages matching `subscription`: a tag expression ("*", or tags
   * joined by "||") or a `MessageSelector` (`MessageSelector.bySql(...)`), compiled here (PARAMETER_ILLEGAL
   * when bad). Not with `assign`.
   */
  subscribe(topic: string, subscription: Subscription = "*"): void {
    if (this.#mode === "ASSIGN") throw illegal("subscribe and assign are exclusive");
    if (typeof topic !== "string" || topic.length === 0) throw illegal("topic is empty");
    const filter = compileSubscription(subscription);
    this.#mode = "SUBSCRIBE";
    this.#subscriptions.set(topic, filter);
    if (this.#state === "RUNNING") this.#runtime.subscriptionChanged(topic);
  }

  /** Reads exactly these queues (every message: "*"). Not with `subscribe`. */
  assign(mqs: readonly MessageQueue[]): void {
    if (this.#mode === "SUBSCRIBE") throw illegal("subscribe and assign are exclusive");
    if (mqs.length === 0) throw illegal("message queues can not be empty");
    this.#mode = "ASSIGN";
    this.#assignment = [...mqs];
    if (this.#state === "RUNNING") {
      void this.#syncAssignment().catch((err: unknown) => this.#runtime.resolved.onError(err, "assigning queues"));
    }
  }

  async start(): Promise<void> {
    if (this.#state !== "CREATE_JUST")
      throw new NimbusError(ErrorCode.SERVICE_NOT_AVAILABLE, `the consumer is ${this.#state}, it can start only once`);
    this.#state = "RUNNING";
    this.#nextAutoCommit = Date.now() + this.#autoCommitInterval;
    await this.#runtime.start(this.#mode === "SUBSCRIBE");
    if (this.#mode === "ASSIGN") await this.#syncAssignment();
  }

  /** The next pulled messages, waiting up to `timeoutMs` (default `pollTimeoutMillis`); [] when none came. */
  async poll(timeoutMs = this.#pollTimeout): Promise<MessageExt[]> {
    this.#checkRunning();
    if (!Number.isFinite(timeoutMs) || timeoutMs < 0) throw illegal("timeout must not be negative");
    if (this.#autoCommit && Date.now() >= this.#nextAutoCommit) {
      this.#nextAutoCommit = Date.now() + this.#autoCommitInterval;
      await this.#commitAll().catch((err: unknown) => this.#runtime.resolved.onError(err, "auto commit"));
    }
    const msgs = await this.#queues.take(timeoutMs);
    this.#tracer?.polled(msgs);
    const first = msgs[0];
    // One batch comes from one queue.
    if (first !== undefined && this.#mode === "SUBSCRIBE") {
      this.#runtime.handover?.delivered(
        new MessageQueue(first.topic, first.brokerName, first.queueId),
        msgs.map((m) => m.queueOffset),
      );
    }
    return msgs;
  }

  /** Restarts `mq` (assigned to this consumer) at `offset`, between its min and max offsets. */
  async seek(mq: MessageQueue, offset: number): Promise<void> {
    this.#checkRunning();
    if (!this.#queues.has(mq)) throw illegal(`the message queue is not assigned here (rebalancing?): ${mq.key()}`);
    const { minOffset, maxOffset } = await new QueueBounds(this.#runtime.api).of(mq);
    if (!Number.isInteger(offset) || offset < minOffset || offset > maxOffset) {
      throw illegal(
        `Seek offset illegal, seek offset = ${offset}, min offset = ${minOffset}, max offset = ${maxOffset}`,
      );
    }
    await this.#queues.restart(mq, offset);
  }

  /** Commits the consume offset of every assigned queue (what `poll()` returned) now. */
  async commitSync(): Promise<void> {
    this.#checkRunning();
    await this.#commitAll();
  }

  /** The group's committed offset of `mq` (-1 when there is none). */
  async committed(mq: MessageQueue): Promise<number> {
    this.#checkRunning();
    return this.#runtime.store.readOffset(mq, "MEMORY_FIRST_THEN_STORE");
  }

  /** The readable queues of a topic, sorted: what `assign` can take. */
  async fetchMessageQueues(topic: string): Promise<MessageQueue[]> {
    return readableQueues(topic, await this.#runtime.api.topicRoute(topic));
  }

  /** Stops pulling, commits (with autoCommit), releases the queues (subscribe mode) and leaves the group. */
  async shutdown(): Promise<void> {
    if (this.#state !== "RUNNING") {
      this.#state = "SHUTDOWN_ALREADY";
      return;
    }
    this.#state = "SHUTDOWN_ALREADY";
    const onError = this.#runtime.resolved.onError;
    this.#stopping.abort();
    await this.#runtime.stopBackground();
    this.#runtime.rebalance.releaseAll();
    const store = this.#runtime.store;
    const queues = this.#queues.queues();
    if (this.#autoCommit)
      for (const { mq, offset } of this.#queues.consumeOffsets()) store.updateOffset(mq, offset, false);
    await this.#queues.close();
    for (const mq of queues) this.#runtime.handover?.unwatch(mq);
    const rebalance = this.#runtime.rebalance;
    const write =
      this.#mode === "SUBSCRIBE"
        ? store.release(queues, (mq) => rebalance.successorOf(mq, true))
        : this.#autoCommit
          ? store.persistAll(queues)
          : undefined;
    await write?.catch((err: unknown) => onError(err, "committing at shutdown"));
    await this.#runtime.unregister().catch((err: unknown) => onError(err, "unregistering"));
    await this.#tracer?.close();
  }

  async #commitAll(): Promise<void> {
    const store = this.#runtime.store;
    for (const { mq, offset } of this.#queues.consumeOffsets()) store.updateOffset(mq, offset, false);
    await store.persistAll(this.#committable());
  }

  /** The queues to commit: not those taken without a release while their previous owner may still write them. */
  #committable(): MessageQueue[] {
    return this.#queues.queues().filter((mq) => !this.#runtime.handover?.watching(mq));
  }

  #startQueue(mq: MessageQueue, start: StartOffset, turn: Turn = { kind: "clean" }): void {
    if (this.#state !== "RUNNING") return;
    const store = this.#runtime.store;
    if (this.#mode === "SUBSCRIBE") this.#runtime.handover?.watch(mq, turn, start.offset);
    if (!start.fromStore && this.#autoCommit) {
      // As the push consumer: a new group's starting point is committed at once (see push-consumer.ts).
      store.updateOffset(mq, start.offset, false);
      void store.persist(mq).catch((err: unknown) => this.#runtime.resolved.onError(err, `committing ${mq.key()}`));
    }
    this.#queues.start(mq, start.offset, this.#autoCommit ? start.offset : -1);
  }

  /** Stops a queue, then commits its offset and (subscribe mode) releases it, in one request. */
  async #stopQueue(mq: MessageQueue): Promise<void> {
    const consumed = await this.#queues.stop(mq);
    const store = this.#runtime.store;
    if (this.#autoCommit && consumed >= 0) store.updateOffset(mq, consumed, false);
    this.#runtime.handover?.unwatch(mq);
    if (this.#mode === "SUBSCRIBE") return store.release([mq], (m) => this.#runtime.rebalance.successorOf(m));
    try {
      await store.persist(mq);
    } finally {
      store.removeOffset(mq);
    }
  }

  /** Assign mode: stops queues no longer named, starts new ones (retrying the start offset until it is known). */
  async #syncAssignment(): Promise<void> {
    const wanted = new Set(this.#assignment.map((mq) => mq.key()));
    await Promise.all(
      this.#queues
        .queues()
        .filter((mq) => !wanted.has(mq.key()))
        .map((mq) => this.#stopQueue(mq)),
    );
    const r = this.#runtime.resolved;
    const bounds = new QueueBounds(this.#runtime.api);
    const coming = this.#assignment.filter((mq) => !this.#queues.has(mq));
    await Promise.all(
      coming.map(async (mq) => {
        while (this.#state === "RUNNING" && this.#assignment.includes(mq)) {
          try {
            return this.#startQueue(mq, await this.#runtime.computePullFromWhere(mq, bounds));
          } catch (err) {
            r.onError(err, `cannot compute where to start ${mq.key()}`);
            await sleep(r.pullTimeDelayMillsWhenException, this.#stopping.signal);
          }
        }
      }),
    );
  }

  #checkRunning(): void {
    if (this.#state !== "RUNNING")
      throw new NimbusError(ErrorCode.SERVICE_NOT_AVAILABLE, `the consumer is ${this.#state}, not RUNNING`);
  }
}

function illegal(message: string): NimbusError {
  return new NimbusError(ErrorCode.PARAMETER_ILLEGAL, message);
}
