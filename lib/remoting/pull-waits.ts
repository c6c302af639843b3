/**
 * @module Long polling of the door's pulls (RocketMQ's PullRequestHoldService): a pull that found no new message
 * waits on its queue until the write path's hint says the queue grew (`QueueLog.onAppended`, which the process bus
 * also feeds from the other workers), until its wait is over, or until its connection closes; never by polling
 * storage. Bounded: past `maxWaiters` a pull does not wait (it answers PULL_NOT_FOUND at once). A waiting pull holds
 * its topic in the queue log's `interest`, from the time before its read, so the other workers tell this one of
 * their appends to it.
 */
import type { AppendInterest, QueueRef } from "../broker/queue-log/index.js";

type Wake = (cause: "append" | "timeout" | "closed") => void;

const keyOf = (q: QueueRef) => `${q.topic}\n${q.brokerName}\n${q.queueId}`;

export class PullWaits {
  readonly #byQueue = new Map<string, Set<Wake>>();
  #count = 0;
  /** How waits ended, for tests. */
  readonly wakeCounts = { append: 0, timeout: 0, closed: 0 };

  constructor(
    private readonly maxWaiters: number,
    private readonly interest?: AppendInterest,
  ) {}

  get waiting(): number {
    return this.#count;
  }

  /** The hint of an append to `q`: its waiting pulls read again. */
  appended(q: QueueRef): void {
    const set = this.#byQueue.get(keyOf(q));
    if (!set) return;
    for (const wake of [...set]) wake("append");
  }

  /**
   * Waits for an append to `q` for at most `timeoutMs`: true when the pull reads again (an append, or the time
   * is up); false at once when too many wait already, and when the connection closes (nobody reads the answer).
   * `readFrom`: a time before the pull read the queue (`Date.now`).
   */
  wait(q: QueueRef, timeoutMs: number, signal: AbortSignal, readFrom = Date.now()): Promise<boolean> {
    if (this.#count >= this.maxWaiters || timeoutMs <= 0 || signal.aborted) return Promise.resolve(false);
    const key = keyOf(q);
    return new Promise((resolve) => {
      const set = this.#byQueue.get(key) ?? new Set<Wake>();
      this.#byQueue.set(key, set);
      this.#count++;
      const release = this.interest?.hold(q.topic, readFrom);
      const wake: Wake = (cause) => {
        if (!set.delete(wake)) return;
        this.#count--;
        release?.();
        if (set.size === 0) this.#byQueue.delete(key);
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.wakeCounts[cause]++;
        resolve(cause !== "closed");
      };
      const onAbort = () => wake("closed");
      const timer = setTimeout(() => wake("timeout"), timeoutMs);
      signal.addEventListener("abort", onAbort, { once: true });
      set.add(wake);
    });
  }
}
