/**
 * @module The lite pull consumer's queues (RocketMQ's `AssignedMessageQueue` + `PullTaskImpl` +
 * `consumeRequestCache`): a pull loop per assigned queue fills a shared cache of pulled batches that
 * `poll()` takes from, in arrival order. Each queue tracks its consume offset: the lowest offset not yet
 * returned by `poll()`, which is what a commit writes.
 *
 * @example
 * const queues = new LitePullQueues(settings);
 * queues.start(mq, 0);
 * const batch = await queues.take(5000);
 */

import type { MessageFilter } from "../../core/filter/index.js";
import type { MessageQueue } from "../../core/message-queue.js";
import type { MessageExt } from "../message.js";
import { sleep } from "../schedule.js";
import type { NimbusApi } from "../transport/index.js";
import type { ResolvedBaseOptions } from "./consumer-options.js";
import { ProcessQueue } from "./process-queue.js";
import { PullLoop } from "./pull-loop.js";

/** RocketMQ's PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL. */
const FLOW_CONTROL_DELAY_MS = 50;

export interface LiteQueueSettings {
  api: NimbusApi;
  resolved: ResolvedBaseOptions;
  pullThresholdForAll: number;
  consumeMaxSpan: number;
  subscription(topic: string): MessageFilter;
}

interface LiteQueue {
  mq: MessageQueue;
  pq: ProcessQueue;
  loop: PullLoop;
  /** The lowest offset not yet returned by poll, -1 while unknown. */
  consumeOffset: number;
}

interface ConsumeRequest {
  mq: MessageQueue;
  pq: ProcessQueue;
  msgs: MessageExt[];
}

export class LitePullQueues {
  readonly #queues = new Map<string, LiteQueue>();
  #cache: ConsumeRequest[] = [];
  #cachedMessages = 0;
  #wake = new AbortController();
  #closed = false;

  constructor(private readonly settings: LiteQueueSettings) {}

  has(mq: MessageQueue): boolean {
    return this.#queues.has(mq.key());
  }

  queues(): MessageQueue[] {
    return [...this.#queues.values()].map((q) => q.mq);
  }

  /** The consume offsets worth committing: known ones of queues still here. */
  consumeOffsets(): { mq: MessageQueue; offset: number }[] {
    return [...this.#queues.values()]
      .filter((q) => q.consumeOffset >= 0)
      .map((q) => ({ mq: q.mq, offset: q.consumeOffset }));
  }

  consumeOffset(mq: MessageQueue): number {
    return this.#queues.get(mq.key())?.consumeOffset ?? -1;
  }

  /** Starts pulling `mq` at `offset`; `consumeOffset` is what a commit writes before anything is polled. */
  start(mq: MessageQueue, offset: number, consumeOffset = -1): void {
    if (this.#closed || this.#queues.has(mq.key())) return;
    const pq = new ProcessQueue();
    const q: LiteQueue = { mq, pq, loop: this.#loop(mq, pq, offset, () => q), consumeOffset };
    this.#queues.set(mq.key(), q);
    q.loop.start();
  }

  /** Stops pulling `mq`, drops its unpolled messages and answers its consume offset (-1 if unknown). */
  async stop(mq: MessageQueue): Promise<number> {
    const q = this.#queues.get(mq.key());
    if (q === undefined) return -1;
    this.#queues.delete(mq.key());
    q.pq.dropped = true;
    this.#uncache(mq);
    await q.loop.stop();
    return q.consumeOffset;
  }

  /** Restarts `mq` at `offset` with nothing cached (a seek); the offset counts as consumed up to there. */
  async restart(mq: MessageQueue, offset: number): Promise<void> {
    const q = this.#queues.get(mq.key());
    if (q === undefined) return;
    q.pq.dropped = true;
    this.#uncache(mq);
    await q.loop.stop();
    if (this.#queues.get(mq.key()) !== q || this.#closed) return;
    q.pq = new ProcessQueue();
    q.consumeOffset = offset;
    q.loop = this.#loop(mq, q.pq, offset, () => q);
    q.loop.start();
  }

  /** The next pulled batch, waiting up to `timeoutMs`; [] on timeout or close. */
  async take(timeoutMs: number): Promise<MessageExt[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const req = this.#cache.shift();
      if (req !== undefined) {
        this.#cachedMessages -= req.msgs.length;
        const q = this.#queues.get(req.mq.key());
        if (req.pq.dropped || q === undefined || q.pq !== req.pq) continue;
        const offset = req.pq.removeMessages(req.msgs);
        if (offset >= 0) q.consumeOffset = offset;
        return req.msgs;
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0 || this.#closed) return [];
      await sleep(remaining, this.#wake.signal);
    }
  }

  /** Stops every queue and wakes waiting polls. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#notify();
    await Promise.all(this.queues().map((mq) => this.stop(mq)));
  }

  #loop(mq: MessageQueue, pq: ProcessQueue, offset: number, current: () => LiteQueue): PullLoop {
    const { api, resolved: r } = this.settings;
    return new PullLoop(
      {
        api,
        consumerGroup: r.consumerGroup,
        mq,
        subscription: () => this.settings.subscription(mq.topic),
        pullBatchSize: r.pullBatchSize,
        pullInterval: 0,
        idleBackoffMillis: r.pullIdleBackoffMillis,
        idleBackoffMaxMillis: r.pullIdleBackoffMaxMillis,
        exceptionDelay: r.pullTimeDelayMillsWhenException,
        flowControl: () =>
          this.#cachedMessages > this.settings.pullThresholdForAll ||
          pq.msgCount > r.pullThresholdForQueue ||
          pq.maxSpan > this.settings.consumeMaxSpan
            ? FLOW_CONTROL_DELAY_MS
            : 0,
        onFound: (msgs) => {
          pq.lastPullTimestamp = Date.now();
          pq.putMessages(msgs);
          this.#cache.push({ mq, pq, msgs });
          this.#cachedMessages += msgs.length;
          this.#notify();
        },
        // Everything pulled was polled: what the broker skipped (filtered, or nothing) counts as consumed.
        onNothing: (next) => {
          const q = current();
          if (pq.msgCount === 0 && q.pq === pq && !pq.dropped) q.consumeOffset = next;
        },
        onOffsetIllegal: async (next) => {
          const q = current();
          if (q.pq === pq && pq.msgCount === 0) q.consumeOffset = next;
        },
        onError: r.onError,
      },
      offset,
    );
  }

  #uncache(mq: MessageQueue): void {
    const kept = this.#cache.filter((r) => !r.mq.equals(mq));
    for (const r of this.#cache) if (r.mq.equals(mq)) this.#cachedMessages -= r.msgs.length;
    this.#cache = kept;
  }

  #notify(): void {
    this.#wake.abort();
    this.#wake = new AbortController();
  }
}
