/**
 * @module The queues a PushConsumer pulls: for each queue the rebalance gives it, a pull loop that feeds the
 * listener's service through a process queue; stopping a queue lets running listeners finish, commits where
 * it stopped and releases it (the handover), or hands it over under the orderly lock; offset resets restart
 * the queues they move. Pulls are counted by cause for the push channel's statistics.
 */

import type { MessageFilter } from "../../core/filter/index.js";
import { MessageQueue } from "../../core/message-queue.js";
import type { QueueHintFrame } from "../../protocol/index.js";
import { sleep } from "../schedule.js";
import type { OffsetReset } from "../transport/index.js";
import type { ConsumeMessageConcurrentlyService } from "./consume-concurrently.js";
import type { StartOffset } from "./consume-from-where.js";
import type { ConsumerRuntime } from "./consumer-runtime.js";
import type { Turn } from "./handover.js";
import type { OrderlyMode } from "./orderly-mode.js";
import { ProcessQueue } from "./process-queue.js";
import { type PullCauses, PullLoop } from "./pull-loop.js";
import type { resolvePushSettings } from "./push-settings.js";
import { restoreRetryTopic } from "./retry.js";

/** RocketMQ's PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL. */
const FLOW_CONTROL_DELAY_MS = 50;
/**
 * How long a rebalance waits for running listeners of a queue it takes away before committing and releasing
 * it: what they finish is in the committed offset, so the next owner does not deliver it again. Half the
 * default handover grace (10 s), so the release comes before the next owner stops waiting for it; on a
 * loaded machine a 1 s bound let in-flight messages through twice.
 */
const DROP_AWAIT_MS = 5000;

export interface PulledQueue {
  mq: MessageQueue;
  pq: ProcessQueue;
  loop: PullLoop;
}

/** What the queues need of their consumer. */
export interface PushQueuesContext {
  runtime: ConsumerRuntime;
  settings: ReturnType<typeof resolvePushSettings>;
  /** The subscription of a topic (the user's, or the retry topic's). */
  subscription(topic: string): MessageFilter | undefined;
  running(): boolean;
  service(): Pick<ConsumeMessageConcurrentlyService, "submitConsumeRequest"> | undefined;
  orderly(): OrderlyMode | undefined;
  /** The queues of the user's subscriptions the rebalance assigns now. */
  assignedQueues(): MessageQueue[];
}

export class PushQueues {
  readonly #c: PushQueuesContext;
  readonly #queues = new Map<string, PulledQueue>();
  /** Hints for queues this consumer does not pull (any more). */
  ignoredHints = 0;
  /** Pulls of queues no longer held, by cause. */
  readonly #pastCauses: PullCauses = { afterFound: 0, byHint: 0, byTimer: 0 };
  readonly #pastFound: PullCauses = { afterFound: 0, byHint: 0, byTimer: 0 };

  constructor(context: PushQueuesContext) {
    this.#c = context;
  }

  /** The queues being pulled now. */
  started(): MessageQueue[] {
    return [...this.#queues.values()].map((q) => q.mq);
  }

  all(): PulledQueue[] {
    return [...this.#queues.values()];
  }

  /** Forgets every queue at once (shutdown) and answers them. */
  takeAll(): PulledQueue[] {
    const queues = this.all();
    this.#queues.clear();
    return queues;
  }

  /** The push channel's hint that a queue has new messages: its loop pulls now. */
  hint(hint: QueueHintFrame): void {
    const q = this.#queues.get(new MessageQueue(hint.topic, hint.brokerName, hint.queueId).key());
    if (q === undefined) this.ignoredHints++;
    else q.loop.wake(hint.maxOffset);
  }

  wakeAll(): void {
    for (const q of this.#queues.values()) q.loop.wake();
  }

  /** Every pull by cause, and those that found messages, held queues and past ones together. */
  causes(): { pulls: PullCauses; foundBy: PullCauses } {
    const pulls = { ...this.#pastCauses };
    const foundBy = { ...this.#pastFound };
    for (const q of this.#queues.values()) {
      addCauses(pulls, q.loop.causes);
      addCauses(foundBy, q.loop.foundBy);
    }
    return { pulls, foundBy };
  }

  start(mq: MessageQueue, start: StartOffset, turn: Turn): void {
    const r = this.#c.runtime.resolved;
    const store = this.#c.runtime.store;
    const sub = this.#c.subscription(mq.topic);
    if (sub === undefined || !this.#c.running()) return;
    this.#c.runtime.handover?.watch(mq, turn, start.offset);
    if (!start.fromStore) {
      // Commit a new group's starting point at once: a consumer taking the queue over later then resumes
      // here instead of choosing again (LAST would skip what arrived meanwhile).
      store.updateOffset(mq, start.offset, false);
      void store.persist(mq).catch((err: unknown) => r.onError(err, `committing the start of ${mq.key()}`));
    }
    const pq = new ProcessQueue();
    const s = this.#c.settings;
    const loop = new PullLoop(
      {
        api: this.#c.runtime.api,
        consumerGroup: r.consumerGroup,
        mq,
        subscription: () => this.#c.subscription(mq.topic) ?? sub,
        pullBatchSize: r.pullBatchSize,
        pullInterval: s.pullInterval,
        idleBackoffMillis: r.pullIdleBackoffMillis,
        idleBackoffMaxMillis: r.pullIdleBackoffMaxMillis,
        exceptionDelay: r.pullTimeDelayMillsWhenException,
        // The span limit is the concurrent listener's (an orderly one consumes from the lowest offset on).
        flowControl: () =>
          pq.msgCount > r.pullThresholdForQueue || (!this.#c.orderly() && pq.maxSpan > s.consumeConcurrentlyMaxSpan)
            ? FLOW_CONTROL_DELAY_MS
            : 0,
        onFound: (msgs) => {
          pq.lastPullTimestamp = Date.now();
          const restored = restoreRetryTopic(msgs, r.consumerGroup);
          pq.putMessages(restored);
          this.#c.service()?.submitConsumeRequest(restored, pq, mq);
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
        idleCapMillis: () => this.#c.runtime.idleCapMillis(),
      },
      start.offset,
    );
    this.#queues.set(mq.key(), { mq, pq, loop });
    loop.start();
    this.#c.runtime.queuesChanged();
  }

  /**
   * RocketMQ's removeUnnecessaryMessageQueue, plus the release: stop pulling, let running listeners finish
   * (at most DROP_AWAIT_MS), commit where the queue stopped and mark it released, forget.
   */
  async stop(mq: MessageQueue): Promise<void> {
    const q = this.#queues.get(mq.key());
    if (q === undefined) return;
    this.#queues.delete(mq.key());
    addCauses(this.#pastCauses, q.loop.causes);
    addCauses(this.#pastFound, q.loop.foundBy);
    this.#c.runtime.queuesChanged();
    q.pq.dropped = true;
    await q.loop.stop();
    const timeout = new AbortController();
    await Promise.race([q.pq.whenIdle(), sleep(DROP_AWAIT_MS, timeout.signal)]);
    timeout.abort();
    const release = async (mqs: MessageQueue[]) => {
      q.pq.released = true;
      this.#c.runtime.handover?.unwatch(mq);
      await this.#c.runtime.store.release(mqs, (m) => this.#c.runtime.rebalance.successorOf(m));
    };
    // Orderly: never hand over while the listener runs (the next owner would consume beside it).
    const orderly = this.#c.orderly();
    if (orderly === undefined) return release([mq]);
    const handOver = () => orderly.handOver([mq], release);
    if (q.pq.inflight === 0) return handOver();
    void q.pq
      .whenIdle()
      .then(handOver)
      .catch((err: unknown) => this.#c.runtime.resolved.onError(err, `releasing ${mq.key()}`));
  }

  /**
   * Stops a queue without releasing it: its lease is gone (`forget`: the rebalance starts it again once
   * locked), or an offset reset moves it (`forget` false: it restarts here at once at the new offset).
   */
  async drop(mq: MessageQueue, forget: boolean): Promise<void> {
    const q = this.#queues.get(mq.key());
    if (q === undefined) return;
    this.#queues.delete(mq.key());
    q.pq.dropped = true;
    q.pq.released = true;
    await q.loop.stop();
    this.#c.runtime.handover?.unwatch(mq);
    this.#c.runtime.store.removeOffset(mq);
    // A listener call still running must end before the queue can start here again.
    await q.pq.whenIdle();
    if (forget) this.#c.runtime.rebalance.forget(mq);
  }

  /** A reset of the group's offsets (resetOffsetByTime): every started queue of the topic moves there now. */
  async applyOffsetReset(reset: OffsetReset): Promise<void> {
    const store = this.#c.runtime.store;
    for (const e of reset.offsetTable) {
      const q = [...this.#queues.values()].find(
        (x) => x.mq.topic === reset.topic && x.mq.brokerName === e.brokerName && x.mq.queueId === e.queueId,
      );
      if (q === undefined) continue;
      // Waits for the running listener call too: its late offset update cannot undo the reset.
      await this.drop(q.mq, false);
      store.updateOffset(q.mq, e.offset, false);
      await store.persist(q.mq);
      // The rebalance may have taken the queue away meanwhile (its stop found nothing to stop).
      if (!this.#c.assignedQueues().some((mq) => mq.equals(q.mq))) continue;
      this.start(q.mq, { offset: e.offset, fromStore: true }, { kind: "clean" });
    }
  }
}

function addCauses(into: PullCauses, from: PullCauses): void {
  into.afterFound += from.afterFound;
  into.byHint += from.byHint;
  into.byTimer += from.byTimer;
}
