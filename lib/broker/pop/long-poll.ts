/**
 * @module Long polling of POP receives: a receive that found nothing waits on its topic's queues until the
 * write path's hint says one of them grew (`QueueLog.onAppended`, the hook the push channel uses), until a
 * known invisible time ends (a redelivery falls due), or until its wait is over; never by polling storage.
 * The hint is in-process: a send served by another process (another Lambda container) does not wake it
 * (docs/pop.md). Waiters are bounded: past `maxWaiters` a receive does not wait (it answers empty at once).
 */

import type { QueueRef } from "../queue-log/index.js";

export type WakeCause = "hint" | "deadline" | "timeout" | "abort";

/** The queues one wait keeps from the hints that reach it (one hint wakes it; more may come before it looks). */
const MAX_HINTED_QUEUES = 16;

interface Waiter {
  topic: string;
  /** The queues the hints named, for the woken receive to look at first. */
  hinted: QueueRef[];
  wake(cause: WakeCause): void;
}

/**
 * `queues` in the order a receive takes from them: the ones `hinted` names first, then the others from
 * `rotation` on (so receives share out the queues). `first` is how many hinted queues lead the order.
 */
export function hintedFirst(
  queues: readonly QueueRef[],
  hinted: readonly QueueRef[],
  rotation: number,
): { order: QueueRef[]; first: number } {
  const isHinted = (q: QueueRef) =>
    hinted.some((h) => h.brokerName === q.brokerName && h.queueId === q.queueId && h.topic === q.topic);
  const rotated = queues.map((_, i) => queues[(rotation + i) % queues.length] as QueueRef);
  const lead = rotated.filter(isHinted);
  return { order: [...lead, ...rotated.filter((q) => !isHinted(q))], first: lead.length };
}

export class LongPolls {
  readonly #waiters = new Set<Waiter>();
  /** How each wait ended, for tests and metrics. */
  readonly wakeCounts: Record<WakeCause, number> = { hint: 0, deadline: 0, timeout: 0, abort: 0 };

  constructor(private readonly maxWaiters: number) {}

  get waiting(): number {
    return this.#waiters.size;
  }

  /** Tells the waiters of the queue's topic that the queue grew. */
  appended(queue: QueueRef): void {
    for (const w of this.#waiters) {
      if (w.topic !== queue.topic) continue;
      if (w.hinted.length < MAX_HINTED_QUEUES) w.hinted.push(queue);
      w.wake("hint");
    }
  }

  /**
   * Waits for a hint of `topic`, for `deadlineMs` (a redelivery falling due; undefined for none), for
   * `timeoutMs`, or for `signal`. Resolves with what woke it; undefined when too many wait already. The queues
   * the hints named are added to `hinted`.
   */
  wait(
    topic: string,
    timeoutMs: number,
    deadlineMs: number | undefined,
    signal?: AbortSignal,
    hinted: QueueRef[] = [],
  ): Promise<WakeCause | undefined> {
    if (this.#waiters.size >= this.maxWaiters || timeoutMs <= 0) return Promise.resolve(undefined);
    if (signal?.aborted) return Promise.resolve("abort");
    return new Promise((resolve) => {
      const timers: NodeJS.Timeout[] = [];
      const waiter: Waiter = {
        topic,
        hinted,
        wake: (cause) => {
          if (!this.#waiters.delete(waiter)) return;
          for (const t of timers) clearTimeout(t);
          signal?.removeEventListener("abort", onAbort);
          this.wakeCounts[cause]++;
          resolve(cause);
        },
      };
      const onAbort = () => waiter.wake("abort");
      this.#waiters.add(waiter);
      timers.push(setTimeout(() => waiter.wake("timeout"), timeoutMs));
      if (deadlineMs !== undefined && deadlineMs < timeoutMs) {
        timers.push(setTimeout(() => waiter.wake("deadline"), Math.max(0, deadlineMs)));
      }
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}
