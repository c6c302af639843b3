/**
 * @module RocketMQ's `ConsumeMessageConcurrentlyService`: pulled messages go to the listener in batches of
 * `consumeMessageBatchMaxSize`, at most `consumeThreadMax` calls at once over all queues, started in pull
 * order (first in, first out). A batch's result removes its messages from the process queue and moves the
 * queue's offset to the lowest offset not yet consumed.
 *
 * RECONSUME_LATER (or a throw) in CLUSTERING: the message is sent back to the broker (RocketMQ's
 * consumerSendMsgBack, `sendBack`), which keeps it in the group's retry topic for delay level
 * 3 + reconsumeTimes, or in its dead-letter queue after `maxReconsumeTimes`; the queue's offset then moves
 * past it. If the send-back fails, the message stays in the process queue (holding the offset back) and is
 * redelivered here after `reconsumeDelay`, with `reconsumeTimes` one higher, and sent back again if it
 * fails again: it is never lost. In BROADCASTING a failed message is dropped (logged through `onError`),
 * as RocketMQ drops it.
 *
 * @example
 * const service = new ConsumeMessageConcurrentlyService({ listener, store, ...options });
 * service.submitConsumeRequest(msgs, pq, mq);
 * await service.shutdown(30_000);
 */
import type { MessageQueue } from "../../core/message-queue.js";
import type { MessageExt } from "../message.js";
import { sleep } from "../schedule.js";
import type {
  ConsumeConcurrentlyContext,
  ConsumeConcurrentlyStatus,
  MessageListenerConcurrently,
  MessageModel,
} from "./consumer-options.js";
import type { OffsetStore } from "./offset-store.js";
import type { ProcessQueue } from "./process-queue.js";

export interface ConsumeServiceConfig {
  listener: MessageListenerConcurrently;
  messageModel: MessageModel;
  store: OffsetStore;
  consumeMessageBatchMaxSize: number;
  consumeThreadMax: number;
  /** Delay before a local redelivery (after a failed send-back). */
  reconsumeDelay(reconsumeTimes: number): number;
  /** CLUSTERING: hands a failed message back to the broker (retry topic or DLQ); absent: redeliver locally. */
  sendBack?(msg: MessageExt, mq: MessageQueue): Promise<unknown>;
  /** Messages about to be handed to the listener (the handover counts duplicates from them). */
  onDelivered?(mq: MessageQueue, msgs: readonly MessageExt[]): void;
  onError(err: unknown, what: string): void;
}

interface Task {
  msgs: MessageExt[];
  pq: ProcessQueue;
  mq: MessageQueue;
}

export class ConsumeMessageConcurrentlyService {
  readonly #waiting: Task[] = [];
  readonly #retryTimers = new Set<NodeJS.Timeout>();
  #active = 0;
  #idleWaiters: (() => void)[] = [];
  #stopped = false;

  constructor(private readonly config: ConsumeServiceConfig) {}

  /** Listener calls running now. */
  get active(): number {
    return this.#active;
  }

  submitConsumeRequest(msgs: readonly MessageExt[], pq: ProcessQueue, mq: MessageQueue): void {
    const size = this.config.consumeMessageBatchMaxSize;
    for (let i = 0; i < msgs.length; i += size) this.#waiting.push({ msgs: msgs.slice(i, i + size), pq, mq });
    this.#pump();
  }

  /**
   * Starts nothing more, forgets waiting batches and pending redeliveries (their messages stay
   * unconsumed, so their offsets are not committed), and waits up to `awaitMillis` for running calls.
   */
  async shutdown(awaitMillis: number): Promise<void> {
    this.#stopped = true;
    this.#waiting.length = 0;
    for (const t of this.#retryTimers) clearTimeout(t);
    this.#retryTimers.clear();
    if (this.#active === 0) return;
    const timeout = new AbortController();
    const idle = new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    await Promise.race([idle, sleep(awaitMillis, timeout.signal)]);
    timeout.abort();
  }

  #pump(): void {
    while (!this.#stopped && this.#active < this.config.consumeThreadMax) {
      const task = this.#waiting.shift();
      if (task === undefined) return;
      // A dropped queue's batches are not consumed here; its next owner reads them again.
      if (task.pq.dropped) continue;
      this.#active++;
      task.pq.beginConsume();
      void this.#consume(task).finally(() => {
        task.pq.endConsume();
        this.#active--;
        if (this.#active === 0) for (const w of this.#idleWaiters.splice(0)) w();
        this.#pump();
      });
    }
  }

  async #consume({ msgs, pq, mq }: Task): Promise<void> {
    const context: ConsumeConcurrentlyContext = { messageQueue: mq, ackIndex: Number.MAX_SAFE_INTEGER };
    let status: ConsumeConcurrentlyStatus;
    this.config.onDelivered?.(mq, msgs);
    try {
      status = await this.config.listener(msgs, context);
    } catch (err) {
      this.config.onError(err, `the listener threw on ${msgs.length} message(s) of ${mq.key()}`);
      status = "RECONSUME_LATER";
    }
    if (status !== "CONSUME_SUCCESS" && status !== "RECONSUME_LATER") status = "RECONSUME_LATER";
    pq.lastConsumeTimestamp = Date.now();
    await this.#processConsumeResult(status, context, msgs, pq, mq);
  }

  async #processConsumeResult(
    status: ConsumeConcurrentlyStatus,
    context: ConsumeConcurrentlyContext,
    msgs: MessageExt[],
    pq: ProcessQueue,
    mq: MessageQueue,
  ): Promise<void> {
    const ackIndex = status === "CONSUME_SUCCESS" ? Math.max(-1, Math.min(context.ackIndex, msgs.length - 1)) : -1;
    const failed = msgs.slice(ackIndex + 1);
    const retry: MessageExt[] = [];
    for (const m of failed) {
      if (this.config.messageModel === "BROADCASTING") {
        this.config.onError(
          new Error(`consume failed: ${m.msgId}`),
          `BROADCASTING drops a failed message of ${mq.key()} at offset ${m.queueOffset}`,
        );
      } else if (!(await this.#sentBack(m, mq))) {
        retry.push(m);
      }
    }
    const done = retry.length === 0 ? msgs : msgs.filter((m) => !retry.includes(m));
    const offset = pq.removeMessages(done);
    if (offset >= 0 && !pq.released) this.config.store.updateOffset(mq, offset, true);
    if (retry.length > 0 && !pq.dropped && !this.#stopped) this.#redeliverLater(retry, pq, mq);
  }

  /** True when the broker took the message back (retry topic or DLQ); false: redeliver it here. */
  async #sentBack(m: MessageExt, mq: MessageQueue): Promise<boolean> {
    if (this.config.sendBack === undefined) return false;
    try {
      await this.config.sendBack(m, mq);
      return true;
    } catch (err) {
      this.config.onError(
        err,
        `sending ${m.msgId} back (offset ${m.queueOffset} of ${mq.key()}): redelivering it here`,
      );
      return false;
    }
  }

  #redeliverLater(msgs: MessageExt[], pq: ProcessQueue, mq: MessageQueue): void {
    for (const m of msgs) m.reconsumeTimes++;
    const delay = this.config.reconsumeDelay(Math.max(...msgs.map((m) => m.reconsumeTimes)));
    const timer = setTimeout(() => {
      this.#retryTimers.delete(timer);
      if (!pq.dropped && !this.#stopped) this.submitConsumeRequest(msgs, pq, mq);
    }, delay);
    this.#retryTimers.add(timer);
  }
}
