/**
 * @module RocketMQ's `ConsumeMessageConcurrentlyService`: pulled messages go to the listener in batches of
 * `consumeMessageBatchMaxSize`, at most `consumeThreadMax` calls at once over all queues, started in pull
 * order (first in, first out). A batch's result removes its messages from the process queue and moves the
 * queue's offset to the lowest offset not yet consumed.
 *
 * RECONSUME_LATER (or a throw) in CLUSTERING: RocketMQ sends the message back to the broker's retry topic.
 * Nimbus has no retry topic yet, so the message stays in the process queue (holding the offset back) and
 * is redelivered here after `reconsumeDelayMillis`, with `reconsumeTimes` one higher, until it has failed
 * `maxReconsumeTimes` redeliveries; then it is given up (reported to `onError`) as RocketMQ would move it
 * to the dead letter queue. If the queue moves to another consumer meanwhile, that consumer redelivers it
 * from the committed offset. In BROADCASTING a failed message is dropped, as RocketMQ drops it.
 *
 * @example
 * const service = new ConsumeMessageConcurrentlyService({ listener, store, ...options });
 * service.submitConsumeRequest(msgs, pq, mq);
 * await service.shutdown(30_000);
 */
import type { MessageQueue } from "../core/message-queue.js";
import type {
  ConsumeConcurrentlyContext,
  ConsumeConcurrentlyStatus,
  MessageListenerConcurrently,
  MessageModel,
} from "./consumer-options.js";
import type { MessageExt } from "./message.js";
import type { OffsetStore } from "./offset-store.js";
import type { ProcessQueue } from "./process-queue.js";
import { sleep } from "./schedule.js";

export interface ConsumeServiceConfig {
  listener: MessageListenerConcurrently;
  messageModel: MessageModel;
  store: OffsetStore;
  consumeMessageBatchMaxSize: number;
  consumeThreadMax: number;
  maxReconsumeTimes: number;
  reconsumeDelay(reconsumeTimes: number): number;
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
    this.#processConsumeResult(status, context, msgs, pq, mq);
  }

  #processConsumeResult(
    status: ConsumeConcurrentlyStatus,
    context: ConsumeConcurrentlyContext,
    msgs: MessageExt[],
    pq: ProcessQueue,
    mq: MessageQueue,
  ): void {
    const ackIndex = status === "CONSUME_SUCCESS" ? Math.max(-1, Math.min(context.ackIndex, msgs.length - 1)) : -1;
    const failed = msgs.slice(ackIndex + 1);
    const retry: MessageExt[] = [];
    for (const m of failed) {
      if (this.config.messageModel === "BROADCASTING") {
        this.config.onError(new Error(`consume failed: ${m.msgId}`), `BROADCASTING drops a failed message`);
      } else if (m.reconsumeTimes >= this.config.maxReconsumeTimes) {
        this.config.onError(
          new Error(`${m.msgId} failed ${m.reconsumeTimes + 1} times`),
          `giving up a message of ${mq.key()} at offset ${m.queueOffset} (no dead letter queue yet)`,
        );
      } else {
        retry.push(m);
      }
    }
    const done = retry.length === 0 ? msgs : msgs.filter((m) => !retry.includes(m));
    const offset = pq.removeMessages(done);
    if (offset >= 0 && !pq.released) this.config.store.updateOffset(mq, offset, true);
    if (retry.length > 0 && !pq.dropped && !this.#stopped) this.#redeliverLater(retry, pq, mq);
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
