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

import type { MessageFilter } from "../../core/filter/index.js";
import type { MessageQueue } from "../../core/message-queue.js";
import { type MessageExt, toMessageExt } from "../message.js";
import { sleep } from "../schedule.js";
import type { NimbusApi, PullResponse } from "../transport/index.js";
import { pullFilterFields } from "./message-selector.js";

export interface PullLoopConfig {
  api: NimbusApi;
  consumerGroup: string;
  mq: MessageQueue;
  /** Read at each pull, so a new subscribe of the topic applies at once. */
  subscription(): MessageFilter;
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
  /** The idle cap now, when it depends on state (a consumer with an open push channel waits longer). */
  idleCapMillis?: () => number;
}

/** Why each pull was made: after messages, woken by a push hint, or when an idle wait ran out. */
export interface PullCauses {
  afterFound: number;
  byHint: number;
  byTimer: number;
}

type Cause = keyof PullCauses;

/** A pull sent, and why. */
interface SentPull {
  answer: Promise<PullResponse>;
  cause: Cause;
}

export class PullLoop {
  readonly mq: MessageQueue;
  #nextOffset: number;
  #idleDelay = 0;
  readonly #abort = new AbortController();
  #done: Promise<void> | undefined;
  /** The pull sent ahead (prefetch), awaited by the next turn of the loop. */
  #prefetched: SentPull | undefined;
  /** Ends the current idle wait early (a hint). */
  #wake = new AbortController();
  /** A hint came during a pull: the next wait is skipped. */
  #wakePending = false;
  #next: Cause = "afterFound";
  readonly causes: PullCauses = { afterFound: 0, byHint: 0, byTimer: 0 };
  /** Pulls that found messages, by the cause of the pull. */
  readonly foundBy: PullCauses = { afterFound: 0, byHint: 0, byTimer: 0 };
  /** Hints for offsets this loop had already passed. */
  staleHints = 0;

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
    await this.#prefetched?.answer.catch(() => undefined);
  }

  /**
   * A push hint: the queue holds messages below `maxOffset`. Pulls now unless the loop already reads past it;
   * an idle wait ends, a pull in flight is followed by another at once.
   */
  wake(maxOffset?: number): void {
    if (maxOffset !== undefined && maxOffset <= this.#nextOffset) {
      this.staleHints++;
      return;
    }
    this.#wakePending = true;
    this.#wake.abort();
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
        pending = this.#pull(this.#next);
      }
      let res: PullResponse;
      try {
        res = await pending.answer;
      } catch (err) {
        if (signal.aborted) break;
        this.config.onError(err, `pull of ${this.mq.key()} at ${this.#nextOffset} failed`);
        await sleep(this.config.exceptionDelay, signal);
        continue;
      }
      if (signal.aborted) break;
      if (res.pullStatus === "FOUND") this.foundBy[pending.cause]++;
      this.#prefetch(res);
      await this.#wait(await this.#handle(res));
    }
  }

  /** Waits before the next pull; a hint (now or during the pull just made) ends an idle wait. */
  async #wait(ms: number): Promise<void> {
    if (ms === 0 || (this.#idleDelay > 0 && this.#wakePending)) {
      this.#next = ms === 0 || this.#idleDelay === 0 ? "afterFound" : "byHint";
      return;
    }
    if (this.#idleDelay === 0) {
      this.#next = "afterFound";
      await sleep(ms, this.#abort.signal);
      return;
    }
    this.#wake = new AbortController();
    const slept = await sleep(ms, AbortSignal.any([this.#abort.signal, this.#wake.signal]));
    this.#wakePending = false;
    this.#next = slept ? "byTimer" : "byHint";
  }

  /** Sends the next pull now when more messages wait and nothing holds it back (see the module's note). */
  #prefetch(res: PullResponse): void {
    if (res.pullStatus !== "FOUND" || res.nextBeginOffset >= res.maxOffset) return;
    if (this.config.pullInterval !== 0 || this.config.flowControl() > 0) return;
    this.#nextOffset = res.nextBeginOffset;
    const ahead = this.#pull("afterFound");
    ahead.answer.catch(() => undefined); // its failure is handled where the loop awaits it
    this.#prefetched = ahead;
  }

  #pull(cause: Cause): SentPull {
    this.causes[cause]++;
    // A hint from now on may name what this pull does not see: it makes the next wait end at once.
    this.#wakePending = false;
    return { answer: this.#send(), cause };
  }

  #send(): Promise<PullResponse> {
    const { api, consumerGroup, mq, pullBatchSize } = this.config;
    const subscription = this.config.subscription();
    return api.pull({
      consumerGroup,
      topic: mq.topic,
      brokerName: mq.brokerName,
      queueId: mq.queueId,
      queueOffset: this.#nextOffset,
      maxMsgNums: pullBatchSize,
      // `expressionType` only when not TAG: TAG is the default, and an older broker refuses a field it does not know.
      ...pullFilterFields(subscription),
    });
  }

  /** Handles one answer and returns how long to wait before the next pull. */
  async #handle(res: PullResponse): Promise<number> {
    switch (res.pullStatus) {
      case "FOUND": {
        this.#nextOffset = res.nextBeginOffset;
        this.#idleDelay = 0;
        // The broker filters already; compare again as RocketMQ's client does for tags (processPullResult),
        // and for SQL92 too: a subscribe that changed the filter since this pull was sent applies at once.
        const sub = this.config.subscription();
        const msgs = res.messages.filter((m) => sub.matches(m)).map(toMessageExt);
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
    const { idleBackoffMillis } = this.config;
    const idleBackoffMaxMillis = this.config.idleCapMillis?.() ?? this.config.idleBackoffMaxMillis;
    this.#idleDelay = this.#idleDelay === 0 ? idleBackoffMillis : Math.min(this.#idleDelay * 2, idleBackoffMaxMillis);
    return Math.min(this.#idleDelay, idleBackoffMaxMillis);
  }
}
