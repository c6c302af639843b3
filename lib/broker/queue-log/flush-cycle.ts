/**
 * @module The flush cycle of a process's object writes (docs/queue-log.md, "Shared objects"). With many senders
 * each holding one send in flight, the cheapest rhythm is one cycle: every queue's waiting sends in ONE object
 * PUT, then each queue's counter ADD and index put, then the answers, and the senders' next sends arrive together
 * for the next PUT. Left alone it staggers: a PUT starts with the groups ready while other queues are still in
 * their index write, and a queue takes its next group while the senders it just answered are still on their way
 * back, so each queue alternates two half-size groups and the PUTs alternate between two sets of queues.
 *
 * The cycle holds two things, both only after an object that held a merged group (more than one send waited
 * together: there is concurrency to wait for), and neither longer than one bound from when something first
 * waits for it:
 * - the next PUT waits for the queues of the last object's merged groups (in their index write) until each has
 *   handed its next write or said it has none;
 * - every queue takes its next group once as many sends have arrived (on any queue: a producer picks the next
 *   queue for each send) as the last object's merged groups answered; the queues let go together hand their
 *   writes before the next PUT is considered, so they share it.
 * A process with one send at a time never waits: its groups are never merged.
 */

/** The longest the cycle holds anything after an object is stored (an S3 PUT's p99 is about this). */
export const MAX_CYCLE_WAIT_MS = 100;

export class FlushCycle {
  /** Queues whose merged group was in the last object and that have not handed their next write yet. */
  readonly #expected = new Set<string>();
  /** Whether the senders of the last object's merged groups are awaited (from its storing to the turn). */
  #on = false;
  /** Sends the last object's merged groups held (their senders are expected back), and sends arrived since. */
  #answered = 0;
  #arrived = 0;
  /** Queues waiting for the turn to take their next group. */
  #turns: Array<() => void> = [];
  /** Queues just let go take their groups in the microtasks queued now: the next PUT is considered after them. */
  #releasing = false;
  /** The bound, and its timer: armed when something first waits for this cycle. */
  #waitMs = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Told when the next PUT may go (no queue expected any more). */
  readonly #onSettled: () => void;

  constructor(onSettled: () => void) {
    this.#onSettled = onSettled;
  }

  /** Whether the next PUT waits for a queue of the last object. */
  get holding(): boolean {
    return this.#expected.size > 0;
  }

  /** Whether queues just let go are handing their writes (the next PUT is considered once they have). */
  get releasing(): boolean {
    return this.#releasing;
  }

  /**
   * An object was stored holding the merged groups of `sources` (queue -> sends in its group): each is expected
   * to hand its next write, and nothing waits for them longer than `waitMs` from when it starts waiting.
   */
  stored(sources: ReadonlyMap<string, number>, waitMs: number): void {
    if (sources.size === 0) return;
    // Queues still waiting for the previous object's senders have waited a PUT long: they go now.
    this.#go();
    this.#clearTimer();
    this.#on = true;
    this.#waitMs = waitMs;
    this.#answered = 0;
    this.#arrived = 0;
    for (const [source, sends] of sources) {
      this.#expected.add(source);
      this.#answered += sends;
    }
  }

  /** A send arrived at a queue of this process. */
  arrived(): void {
    this.#arrived++;
    if (this.#on && this.#arrived >= this.#answered) {
      this.#on = false;
      if (this.#expected.size === 0) this.#clearTimer();
      this.#go();
    }
  }

  /**
   * When a queue may take its next group: now (undefined), unless the senders of the last object's merged groups
   * are awaited; then once as many sends arrived (on any queue) as those groups held, or the bound passed.
   */
  turn(): Promise<void> | undefined {
    if (!this.#on) return undefined;
    this.#arm();
    return new Promise<void>((resolve) => this.#turns.push(resolve));
  }

  /** A write waits for the next PUT while the cycle holds: it waits one bound at most. */
  hold(): void {
    if (this.holding) this.#arm();
  }

  /** Queue `source` handed its next write, or has none for the next object: the next PUT waits no more for it. */
  release(source: string): void {
    if (!this.#expected.delete(source) || this.#expected.size > 0) return;
    // The senders may still be on their way back (the timer then bounds the queues waiting for them).
    if (!this.#on) this.#clearTimer();
    if (!this.#releasing) this.#onSettled();
  }

  /** The bound passed: waiting queues take their groups, the next PUT goes with what is waiting. */
  #end(): void {
    this.#clearTimer();
    this.#expected.clear();
    this.#on = false;
    this.#go();
    if (!this.#releasing) this.#onSettled();
  }

  #arm(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => this.#end(), this.#waitMs);
  }

  /** Lets the waiting queues go; once their writes are handed (the microtasks queued here ran), the writer is told. */
  #go(): void {
    const turns = this.#turns;
    if (turns.length === 0) return;
    this.#turns = [];
    for (const resolve of turns) resolve();
    if (this.#releasing) return;
    this.#releasing = true;
    queueMicrotask(() => {
      this.#releasing = false;
      this.#onSettled();
    });
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
