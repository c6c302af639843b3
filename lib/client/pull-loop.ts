/**
 * @module The pull loop of one queue (RocketMQ's `PullMessageService` + `pullMessage` callback, and the
 * lite pull consumer's `PullTaskImpl`): pull from `nextOffset`, hand FOUND messages on, move on to
 * `nextBeginOffset`. The broker answers an empty queue at once (HTTP has no long polling), so a pull that
 * finds nothing new waits before the next one, twice as long each time up to a cap, and the wait resets
 * when messages come. Flow control pauses pulling while too much is cached.
 *
 * Prefetch: when an answer says more messages wait past it (`nextBeginOffset < maxOffset`), the pull
 * interval is 0 and flow control lets pulls go, the next pull is sent before this answer is handed on, so
 * the broker's round trip overlaps the client's handling. One pull is in flight at a time, never more
 * (offsets stay in order), and flow control may be overshot by one batch at most.
 *
 * @example
 * const loop = new PullLoop({ api, consumerGroup, mq, subscription, ...timing, onFound, onNothing, onOffsetIllegal,
 *   flowControl: () => 0, onError }, 0);
 * loop.start();
 * await loop.stop();
 */
import type { MessageQueue } from "../core/message-queue.js";
import { matchesTag, type TagSubscription } from "../core/subscription.js";
import type { NimbusApi, PullResponse } from "./api-client.js";
import { type MessageExt, toMessageExt } from "./message.js";
import { sleep } from "./schedule.js";

export interface PullLoopConfig {
  api: NimbusApi;
  consumerGroup: string;
  mq: MessageQueue;
  /** Read at each pull, so a new subscribe of the topic applies at once. */
  subscription(): TagSubscription;
  pullBatchSize: number;
  /** Wait after a pull that found messages. */
  pullInterval: number;
  idleBackoffMillis: number;
  idleBackoffMaxMillis: number;
  /** Wait after a failed pull. */
  exceptionDelay: number;
  /** How long to wait before pulling (flow control), 0 to pull now. */
  flowControl(): number;
  /** Messages that matched, in offset order. */
  onFound(msgs: MessageExt[], nextBeginOffset: number): void;
  /** Nothing to hand on: the queue is at its end, or everything read was filtered out. */
  onNothing(nextBeginOffset: number): void;
  /** The offset was out of range; the loop goes on from `nextBeginOffset`. */
  onOffsetIllegal(nextBeginOffset: number): Promise<void>;
  onError(err: unknown, what: string): void;
}

export class PullLoop {
  readonly mq: MessageQueue;
  #nextOffset: number;
  #idleDelay = 0;
  readonly #abort = new AbortController();
  #done: Promise<void> | undefined;
  /** The pull sent ahead (prefetch), awaited by the next turn of the loop. */
  #prefetched: Promise<PullResponse> | undefined;

  constructor(
    private readonly config: PullLoopConfig,
    startOffset: number,
  ) {
    this.mq = config.mq;
    this.#nextOffset = startOffset;
  }

  /** The offset the next pull asks for. */
  get nextOffset(): number {
    return this.#nextOffset;
  }

  get stopped(): boolean {
    return this.#abort.signal.aborted;
  }

  start(): void {
    this.#done ??= this.#run().catch((err: unknown) => this.config.onError(err, `pull loop of ${this.mq.key()} ended`));
  }

  /** Ends the loop: a wait ends at once, a pull in flight is awaited and its answer dropped. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done;
    await this.#prefetched?.catch(() => undefined);
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      let pending = this.#prefetched;
      this.#prefetched = undefined;
      if (pending === undefined) {
        const hold = this.config.flowControl();
        if (hold > 0) {
          await sleep(hold, signal);
          continue;
        }
        pending = this.#pull();
      }
      let res: PullResponse;
      try {
        res = await pending;
      } catch (err) {
        if (signal.aborted) break;
        this.config.onError(err, `pull of ${this.mq.key()} at ${this.#nextOffset} failed`);
        await sleep(this.config.exceptionDelay, signal);
        continue;
      }
      if (signal.aborted) break;
      this.#prefetch(res);
      await sleep(await this.#handle(res), signal);
    }
  }

  /** Sends the next pull now when more messages wait and nothing holds it back (see the module's note). */
  #prefetch(res: PullResponse): void {
    if (res.pullStatus !== "FOUND" || res.nextBeginOffset >= res.maxOffset) return;
    if (this.config.pullInterval !== 0 || this.config.flowControl() > 0) return;
    this.#nextOffset = res.nextBeginOffset;
    const ahead = this.#pull();
    ahead.catch(() => undefined); // its failure is handled where the loop awaits it
    this.#prefetched = ahead;
  }

  #pull(): Promise<PullResponse> {
    const { api, consumerGroup, mq, pullBatchSize } = this.config;
    const subscription = this.config.subscription();
    return api.pull({
      consumerGroup,
      topic: mq.topic,
      brokerName: mq.brokerName,
      queueId: mq.queueId,
      queueOffset: this.#nextOffset,
      maxMsgNums: pullBatchSize,
      subExpression: subscription.all ? "*" : subscription.subString,
    });
  }

  /** Handles one answer and returns how long to wait before the next pull. */
  async #handle(res: PullResponse): Promise<number> {
    switch (res.pullStatus) {
      case "FOUND": {
        this.#nextOffset = res.nextBeginOffset;
        this.#idleDelay = 0;
        // The broker filters by tag already; compare again as RocketMQ's client does (processPullResult).
        const sub = this.config.subscription();
        const msgs = res.messages.filter((m) => matchesTag(sub, m.tags)).map(toMessageExt);
        if (msgs.length > 0) this.config.onFound(msgs, res.nextBeginOffset);
        else this.config.onNothing(res.nextBeginOffset);
        return this.config.pullInterval;
      }
      case "NO_MATCHED_MSG":
        this.#nextOffset = res.nextBeginOffset;
        this.config.onNothing(res.nextBeginOffset);
        // Filtered out a full scan: there may be more to read right away.
        if (res.nextBeginOffset < res.maxOffset) return 0;
        return this.#idle();
      case "NO_NEW_MSG":
        this.#nextOffset = res.nextBeginOffset;
        this.config.onNothing(res.nextBeginOffset);
        return this.#idle();
      case "OFFSET_ILLEGAL":
        this.config.onError(
          new Error(`offset ${this.#nextOffset} is out of [${res.minOffset}, ${res.maxOffset}]`),
          `pull of ${this.mq.key()}: OFFSET_ILLEGAL, going on from ${res.nextBeginOffset}`,
        );
        this.#nextOffset = res.nextBeginOffset;
        await this.config.onOffsetIllegal(res.nextBeginOffset);
        return 0;
    }
  }

  #idle(): number {
    const { idleBackoffMillis, idleBackoffMaxMillis } = this.config;
    this.#idleDelay = this.#idleDelay === 0 ? idleBackoffMillis : Math.min(this.#idleDelay * 2, idleBackoffMaxMillis);
    return Math.min(this.#idleDelay, idleBackoffMaxMillis);
  }
}
