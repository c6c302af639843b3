/**
 * @module RocketMQ's `ProcessQueue`: the messages of one queue that were pulled and are not consumed yet,
 * by offset. The offset a consumer may commit is the lowest offset still in it (or one past the highest
 * pulled offset once it is empty): a message that is slow, or waiting to be retried, holds the commit back,
 * so a crash or a rebalance redelivers it instead of losing it.
 *
 * @example
 * const pq = new ProcessQueue();
 * pq.putMessages(msgs); // offsets 10, 11, 12
 * pq.removeMessages([msgs[1]]); // 10: offset 10 is still being consumed
 */
import type { MessageExt } from "../message.js";

export class ProcessQueue {
  /** Offset to message. Offsets are inserted in increasing order, so the first key is the lowest. */
  #msgs = new Map<number, MessageExt>();
  #msgSize = 0;
  /** The highest offset ever put, -1 before the first. */
  #queueOffsetMax = -1;
  #inflight = 0;
  #idleWaiters: (() => void)[] = [];
  /** Set when the queue is no longer pulled or consumed here (rebalanced away, shut down). */
  dropped = false;
  /** Set when the queue's offset is no longer ours to update (committed and handed over). */
  released = false;
  lastPullTimestamp = 0;
  lastConsumeTimestamp = 0;

  get msgCount(): number {
    return this.#msgs.size;
  }

  /** Bytes of the cached bodies. */
  get msgSize(): number {
    return this.#msgSize;
  }

  get queueOffsetMax(): number {
    return this.#queueOffsetMax;
  }

  /** Highest minus lowest cached offset (RocketMQ's getMaxSpan); 0 when empty. */
  get maxSpan(): number {
    const first = this.#firstKey();
    return first === undefined ? 0 : this.#lastKey() - first;
  }

  /** Adds pulled messages; ones already cached are ignored. Returns how many were added. */
  putMessages(msgs: readonly MessageExt[]): number {
    let added = 0;
    let ordered = true;
    for (const m of msgs) {
      if (this.#msgs.has(m.queueOffset)) continue;
      if (m.queueOffset < this.#queueOffsetMax) ordered = false;
      this.#msgs.set(m.queueOffset, m);
      this.#msgSize += m.body.byteLength;
      added++;
      if (m.queueOffset > this.#queueOffsetMax) this.#queueOffsetMax = m.queueOffset;
    }
    // Pulls of one queue come in offset order; a seek back could break it, so restore the order then.
    if (!ordered) this.#msgs = new Map([...this.#msgs].sort((a, b) => a[0] - b[0]));
    return added;
  }

  /**
   * Removes consumed messages and answers the offset to commit, as RocketMQ's removeMessage: -1 when the
   * queue held nothing, one past the highest pulled offset when it is now empty, else its lowest offset.
   */
  removeMessages(msgs: readonly MessageExt[]): number {
    if (this.#msgs.size === 0) return -1;
    for (const m of msgs) {
      const cached = this.#msgs.get(m.queueOffset);
      if (cached === undefined) continue;
      this.#msgs.delete(m.queueOffset);
      this.#msgSize -= cached.body.byteLength;
    }
    return this.#firstKey() ?? this.#queueOffsetMax + 1;
  }

  /** The offset to commit if nothing more is consumed: the lowest cached offset, or -1 when empty. */
  firstOffset(): number {
    return this.#firstKey() ?? -1;
  }

  /** The first `n` cached messages in offset order, left in place (an orderly consumer's next batch). */
  peekMessages(n: number): MessageExt[] {
    const batch: MessageExt[] = [];
    for (const m of this.#msgs.values()) {
      if (batch.length >= n) break;
      batch.push(m);
    }
    return batch;
  }

  has(offset: number): boolean {
    return this.#msgs.has(offset);
  }

  /** Forgets every cached message (a seek). */
  clear(): void {
    this.#msgs.clear();
    this.#msgSize = 0;
    this.#queueOffsetMax = -1;
  }

  /** Counts a listener call on this queue's messages; pair with `endConsume`. */
  beginConsume(): void {
    this.#inflight++;
  }

  endConsume(): void {
    this.#inflight--;
    if (this.#inflight > 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }

  get inflight(): number {
    return this.#inflight;
  }

  /** Resolves when no listener call on this queue is running. */
  whenIdle(): Promise<void> {
    if (this.#inflight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #firstKey(): number | undefined {
    for (const k of this.#msgs.keys()) return k;
    return undefined;
  }

  #lastKey(): number {
    let last = -1;
    // Maps keep insertion order and offsets go in increasing: the last key is the highest.
    for (const k of this.#msgs.keys()) last = k;
    return last;
  }
}
