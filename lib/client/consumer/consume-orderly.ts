/**
 * @module RocketMQ's `ConsumeMessageOrderlyService`: each queue's messages go to the listener in offset
 * order, one batch (`consumeMessageBatchMaxSize`) at a time, one listener call per queue at once. The
 * consumer holds the queue's broker lock (queue-leases.ts) and checks its lease before each batch and
 * before committing: a consumer whose lease ran out (a paused process, a lost renewal) locks again, and
 * unless nobody held the queue meanwhile it drops the queue without committing (`onLeaseLost`), so the
 * next owner's work is never overwritten and nothing is consumed twice at the same time.
 *
 * SUSPEND_CURRENT_QUEUE_A_MOMENT (or a throw) holds the queue: the same messages are delivered again after
 * `suspendCurrentQueueTimeMillis`, `reconsumeTimes` one higher. A message that has been redelivered
 * `maxReconsumeTimes` times goes to the dead letter queue when there is one (`deadLetter`, CLUSTERING);
 * without one it keeps being retried, as a RocketMQ orderly consumer does when the send-back fails.
 *
 * @example
 * const service = new ConsumeMessageOrderlyService({ listener, store, leases, ...options });
 * service.submitConsumeRequest(msgs, pq, mq);
 * await service.shutdown(30_000);
 */
import type { MessageQueue } from "../../core/message-queue.js";
import type { MessageExt } from "../message.js";
import { sleep } from "../schedule.js";
import type { ConsumeContext, MessageListenerOf } from "./consumer-options.js";
import type { OffsetStore } from "./offset-store.js";
import type { ProcessQueue } from "./process-queue.js";
import type { QueueLeases } from "./queue-leases.js";

/** RocketMQ's ConsumeOrderlyStatus (the deprecated COMMIT/ROLLBACK of manual commit are not offered). */
export type ConsumeOrderlyStatus = "SUCCESS" | "SUSPEND_CURRENT_QUEUE_A_MOMENT";

/** What an orderly listener learns about its batch and may set (RocketMQ's ConsumeOrderlyContext). */
export interface ConsumeOrderlyContext extends ConsumeContext {
  /** How long this queue waits after SUSPEND_CURRENT_QUEUE_A_MOMENT; starts at the consumer's setting. */
  suspendCurrentQueueTimeMillis: number;
}

/** RocketMQ's MessageListenerOrderly. A throw or a rejected promise counts as SUSPEND_CURRENT_QUEUE_A_MOMENT. */
export type MessageListenerOrderly = MessageListenerOf<ConsumeOrderlyContext, ConsumeOrderlyStatus>;

/**
 * Sends messages that failed too often to the group's dead letter queue; resolves when stored. Absent while
 * the broker has no dead letter queue: such messages are retried for ever.
 */
export type DeadLetterSink = (mq: MessageQueue, msgs: readonly MessageExt[]) => Promise<void>;

export interface ConsumeOrderlyConfig {
  listener: MessageListenerOrderly;
  store: OffsetStore;
  leases: QueueLeases;
  consumeMessageBatchMaxSize: number;
  suspendCurrentQueueTimeMillis: number;
  /** Redeliveries before the dead letter queue (RocketMQ's orderly default: unbounded). */
  maxReconsumeTimes: number;
  deadLetter: DeadLetterSink | undefined;
  /** The queue's lease is gone and another client held it meanwhile: drop it without committing. */
  onLeaseLost(mq: MessageQueue): void;
  onDelivered?(mq: MessageQueue, msgs: readonly MessageExt[]): void;
  onError(err: unknown, what: string): void;
}

export class ConsumeMessageOrderlyService {
  /** The running worker of each process queue (a queue restarted here gets a new process queue). */
  readonly #workers = new Map<ProcessQueue, Promise<void>>();
  readonly #abort = new AbortController();

  constructor(private readonly config: ConsumeOrderlyConfig) {}

  /** Listener calls running now, one per queue at most. */
  get active(): number {
    return this.#workers.size;
  }

  /** New messages are in `pq`: starts the queue's worker unless it runs (it takes them in order). */
  submitConsumeRequest(_msgs: readonly MessageExt[], pq: ProcessQueue, mq: MessageQueue): void {
    if (this.#abort.signal.aborted || this.#workers.has(pq)) return;
    const worker = this.#run(pq, mq).catch((err: unknown) =>
      this.config.onError(err, `orderly consumption of ${mq.key()} stopped`),
    );
    this.#workers.set(pq, worker);
  }

  /** Starts no more batches, ends suspensions, and waits up to `awaitMillis` for the running listener calls. */
  async shutdown(awaitMillis: number): Promise<void> {
    this.#abort.abort();
    const timeout = new AbortController();
    await Promise.race([Promise.all(this.#workers.values()), sleep(awaitMillis, timeout.signal)]);
    timeout.abort();
  }

  async #run(pq: ProcessQueue, mq: MessageQueue): Promise<void> {
    const { listener, consumeMessageBatchMaxSize } = this.config;
    const signal = this.#abort.signal;
    try {
      for (;;) {
        // The check and the removal of the worker happen in one turn: a submit after it starts a new worker.
        const msgs = signal.aborted || pq.dropped ? [] : pq.peekMessages(consumeMessageBatchMaxSize);
        if (msgs.length === 0) return;
        if (!(await this.#leaseHolds(mq)) || pq.dropped || signal.aborted) return;
        const context: ConsumeOrderlyContext = {
          messageQueue: mq,
          suspendCurrentQueueTimeMillis: this.config.suspendCurrentQueueTimeMillis,
        };
        pq.beginConsume();
        let status: ConsumeOrderlyStatus;
        try {
          this.config.onDelivered?.(mq, msgs);
          try {
            status = await listener(msgs, context);
          } catch (err) {
            this.config.onError(err, `the orderly listener threw on ${msgs.length} message(s) of ${mq.key()}`);
            status = "SUSPEND_CURRENT_QUEUE_A_MOMENT";
          }
          if (status !== "SUCCESS") status = "SUSPEND_CURRENT_QUEUE_A_MOMENT";
          pq.lastConsumeTimestamp = Date.now();
          const done = status === "SUCCESS" ? msgs : await this.#overTheLimit(mq, msgs);
          // Before committing: a lease that ran out while the listener ran may have let another owner start.
          if (done.length > 0 && !(await this.#leaseHolds(mq))) return;
          const offset = done.length > 0 ? pq.removeMessages(done) : -1;
          if (offset >= 0 && !pq.released) this.config.store.updateOffset(mq, offset, false);
          if (done.length === msgs.length) continue;
        } finally {
          pq.endConsume();
        }
        for (const m of msgs) if (pq.has(m.queueOffset)) m.reconsumeTimes++;
        await sleep(context.suspendCurrentQueueTimeMillis, signal);
      }
    } finally {
      this.#workers.delete(pq);
    }
  }

  /**
   * Whether this consumer still holds `mq`: its lease is valid, or it locked again with nobody holding the
   * queue in between. Otherwise the queue is dropped (`onLeaseLost`).
   */
  async #leaseHolds(mq: MessageQueue): Promise<boolean> {
    const { leases } = this.config;
    if (leases.valid(mq)) return true;
    let outcome: string;
    try {
      outcome = (await leases.lock([mq])).get(mq.key()) ?? "refused";
    } catch (err) {
      this.config.onError(err, `renewing the lock of ${mq.key()}`);
      outcome = "failed";
    }
    // An answer that arrives after the lease it grants has ended (the process was paused while it was in
    // flight) proves nothing: the queue may have moved meanwhile.
    if (outcome === "continued" && leases.valid(mq)) return true;
    this.config.onLeaseLost(mq);
    return false;
  }

  /**
   * After SUSPEND: the messages redelivered `maxReconsumeTimes` times already go to the dead letter queue
   * when there is one; answers those stored there (consumed as far as this queue is concerned).
   */
  async #overTheLimit(mq: MessageQueue, msgs: MessageExt[]): Promise<MessageExt[]> {
    const { deadLetter, maxReconsumeTimes } = this.config;
    const spent = msgs.filter((m) => m.reconsumeTimes >= maxReconsumeTimes);
    if (spent.length === 0 || deadLetter === undefined) return [];
    try {
      await deadLetter(mq, spent);
      return spent;
    } catch (err) {
      this.config.onError(err, `sending ${spent.length} message(s) of ${mq.key()} to the dead letter queue`);
      return [];
    }
  }
}
