/**
 * @module What a `PushConsumer` with an orderly listener adds to the concurrent one: the broker locks of its
 * queues (taken before a queue starts, renewed every `lockRenewIntervalMillis`, given up when the queue
 * leaves), the orderly consume service, and the rule for handing a queue over: release (commit where it
 * stopped) only while the lease holds, then unlock. See docs/client.md "Orderly consumption".
 *
 * @example
 * const orderly = new OrderlyMode({ api, group, clientId, store, ...settings, started, assigned, onLeaseLost });
 * orderly.start();
 * await orderly.lock(mq, signal); // before the queue starts
 * await orderly.handOver([mq], () => store.release([mq])); // when it leaves
 */
import type { MessageQueue } from "../../core/message-queue.js";
import type { MessageExt } from "../message.js";
import { Repeaters } from "../schedule.js";
import type { NimbusApi } from "../transport/index.js";
import { ConsumeMessageOrderlyService, type DeadLetterSink, type MessageListenerOrderly } from "./consume-orderly.js";
import type { OffsetStore } from "./offset-store.js";
import { QueueLeases } from "./queue-leases.js";

export interface OrderlyModeConfig {
  api: NimbusApi;
  group: string;
  clientId: string;
  listener: MessageListenerOrderly;
  store: OffsetStore;
  consumeMessageBatchMaxSize: number;
  suspendCurrentQueueTimeMillis: number;
  maxReconsumeTimes: number;
  deadLetter: DeadLetterSink | undefined;
  lockRenewIntervalMillis: number;
  /** How often a queue waiting for another client's lock asks again. */
  lockRetryMillis: number;
  /** The queues started here (pulling and consuming). */
  started(): MessageQueue[];
  /** The queues the rebalance assigns here (started or waiting). */
  assigned(): MessageQueue[];
  /** Drops a started queue without committing (its lease is gone) so that the rebalance starts it anew. */
  onLeaseLost(mq: MessageQueue): void;
  onDelivered(mq: MessageQueue, msgs: readonly MessageExt[]): void;
  onError(err: unknown, what: string): void;
}

export class OrderlyMode {
  readonly leases: QueueLeases;
  readonly service: ConsumeMessageOrderlyService;
  readonly #repeaters = new Repeaters();

  constructor(private readonly config: OrderlyModeConfig) {
    this.leases = new QueueLeases({ api: config.api, group: config.group, clientId: config.clientId });
    this.service = new ConsumeMessageOrderlyService({
      listener: config.listener,
      store: config.store,
      leases: this.leases,
      consumeMessageBatchMaxSize: config.consumeMessageBatchMaxSize,
      suspendCurrentQueueTimeMillis: config.suspendCurrentQueueTimeMillis,
      maxReconsumeTimes: config.maxReconsumeTimes,
      deadLetter: config.deadLetter,
      onLeaseLost: (mq) => this.#lost(mq),
      onDelivered: config.onDelivered,
      onError: config.onError,
    });
  }

  /** Starts the renewal (RocketMQ's lockAll every 20 s). */
  start(): void {
    this.#repeaters.every(
      this.config.lockRenewIntervalMillis,
      () => this.renew(),
      (err) => this.config.onError(err, "renewing the queue locks"),
    );
  }

  /**
   * Renews the locks of the started queues and gives up those of queues no longer assigned here (a start
   * that was called off). A started queue whose lock another client took meanwhile is dropped.
   */
  async renew(): Promise<void> {
    const assigned = new Set(this.config.assigned().map((mq) => mq.key()));
    const stale = this.leases.held().filter((mq) => !assigned.has(mq.key()));
    if (stale.length > 0) await this.leases.unlock(stale);
    const started = this.config.started();
    if (started.length === 0) return;
    const outcomes = await this.leases.lock(started);
    for (const mq of started) {
      // A renewal that came back late is left to the worker's own check before its next batch.
      if (outcomes.get(mq.key()) !== "continued") this.#lost(mq);
    }
  }

  /** Before a queue starts: waits for its lock. A start called off afterwards gives the lock up. */
  async lock(mq: MessageQueue, signal: AbortSignal): Promise<void> {
    await this.leases.acquire(mq, signal, this.config.lockRetryMillis);
    // The start offset is read next: from a request sent after the lock, so it holds the previous owner's release.
    this.config.store.freshReads?.(mq.topic);
    const giveUp = () => {
      if (this.config.started().some((q) => q.equals(mq))) return;
      this.leases.unlock([mq]).catch((err: unknown) => this.config.onError(err, `unlocking ${mq.key()}`));
    };
    if (signal.aborted) giveUp();
    else signal.addEventListener("abort", giveUp, { once: true });
  }

  /**
   * Hands queues over after their listener calls ended: `release` (the commit of where they stopped) only
   * for queues whose lease still holds (another owner may have started the others), then the unlock. The
   * others' offsets are forgotten, not written.
   */
  async handOver(mqs: readonly MessageQueue[], release: (mqs: MessageQueue[]) => Promise<void>): Promise<void> {
    // A lease that ran out with nobody taking the queue since (a slow renewal) is renewed first: the release
    // then still hands over the exact position.
    const lapsed = mqs.filter((mq) => !this.leases.valid(mq) && this.leases.epochOf(mq) > 0);
    const renewed =
      lapsed.length > 0 ? await this.leases.lock(lapsed).catch(() => new Map<string, string>()) : new Map();
    const held = mqs.filter(
      (mq) => this.leases.valid(mq) && (!lapsed.includes(mq) || renewed.get(mq.key()) === "continued"),
    );
    for (const mq of mqs) if (!held.includes(mq)) this.config.store.removeOffset(mq);
    try {
      if (held.length > 0) await release(held);
    } finally {
      await this.leases.unlock([...mqs]);
    }
  }

  /** Stops the renewal and the service (waiting up to `awaitMillis` for running listener calls). */
  async shutdown(awaitMillis: number): Promise<void> {
    await this.#repeaters.stop();
    await this.service.shutdown(awaitMillis);
  }

  #lost(mq: MessageQueue): void {
    if (!this.config.started().some((q) => q.equals(mq))) return;
    this.config.onError(
      new Error(`the lock of ${mq.key()} ran out or was taken`),
      `dropping ${mq.key()} without a commit; it starts again once locked`,
    );
    this.config.onLeaseLost(mq);
  }
}
