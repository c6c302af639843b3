/**
 * @module An orderly consumer's broker locks (RocketMQ's `lockBatchMQ`, `unlockBatchMQ` and
 * `ProcessQueue.isLockExpired`). The broker grants a lease of `leaseMillis` counted on its clock; this
 * consumer counts only half of it, from the moment it sent the request, on its own clock (RocketMQ's client
 * also trusts a lock for 30 s of the broker's 60 s). So its own view of a lease always ends well before
 * the broker lets another client take the queue: a listener call that starts just before the end has the
 * other half (plus the broker's skew margin) to finish before anyone else may start.
 *
 * @example
 * const leases = new QueueLeases({ api, group, clientId });
 * await leases.acquire(mq, signal, 1000); // waits until locked
 * leases.valid(mq); // before each batch and each commit
 * await leases.unlock([mq]);
 */
import { MessageQueue } from "../../core/message-queue.js";
import { sleep } from "../schedule.js";
import type { LockedQueue, NimbusApi } from "../transport/index.js";

export interface QueueLeasesConfig {
  api: NimbusApi;
  group: string;
  clientId: string;
  now?: () => number;
}

interface Lease {
  mq: MessageQueue;
  epoch: number;
  /** This consumer's own end of the lease (its clock). */
  until: number;
}

/** What a lock request did to one queue. */
export type LockOutcome =
  /** Locked, and nobody held it since this consumer's previous lease: what it cached is still its own. */
  | "continued"
  /** Locked anew (first lock, or after another holder or an unlock). */
  | "locked"
  /** Another client holds it. */
  | "refused";

const byTopic = (mqs: readonly MessageQueue[]) => {
  const topics = new Map<string, MessageQueue[]>();
  for (const mq of mqs) topics.set(mq.topic, [...(topics.get(mq.topic) ?? []), mq]);
  return topics;
};

export class QueueLeases {
  readonly #leases = new Map<string, Lease>();
  readonly #now: () => number;

  constructor(private readonly config: QueueLeasesConfig) {
    this.#now = config.now ?? Date.now;
  }

  /** Whether this consumer may still consume (and commit) `mq`: it holds an unexpired lease, by its own count. */
  valid(mq: MessageQueue): boolean {
    const lease = this.#leases.get(mq.key());
    return lease !== undefined && this.#now() < lease.until;
  }

  /** The queues this consumer holds a lease of (expired or not, until unlocked, refused or forgotten). */
  held(): MessageQueue[] {
    return [...this.#leases.values()].map((l) => l.mq).sort(MessageQueue.compare);
  }

  /** The epoch of this consumer's lease of `mq`, 0 when none. */
  epochOf(mq: MessageQueue): number {
    return this.#leases.get(mq.key())?.epoch ?? 0;
  }

  /** Locks or renews the queues (one request per topic); answers each queue's outcome by its key. */
  async lock(mqs: readonly MessageQueue[]): Promise<Map<string, LockOutcome>> {
    const outcomes = new Map<string, LockOutcome>();
    await Promise.all(
      [...byTopic(mqs)].map(async ([topic, queues]) => {
        const sentAt = this.#now();
        const answers = await this.config.api.lockQueues(
          this.config.group,
          topic,
          this.config.clientId,
          queues.map((q) => ({ brokerName: q.brokerName, queueId: q.queueId })),
        );
        for (const mq of queues) {
          const a = answers.find((x) => x.brokerName === mq.brokerName && x.queueId === mq.queueId);
          outcomes.set(mq.key(), this.#learn(mq, a, sentAt));
        }
      }),
    );
    return outcomes;
  }

  /** Locks `mq`, retrying every `retryMillis` while another client holds it; rejects when `signal` aborts. */
  async acquire(mq: MessageQueue, signal: AbortSignal, retryMillis: number): Promise<LockOutcome> {
    for (;;) {
      signal.throwIfAborted();
      const outcome = (await this.lock([mq])).get(mq.key()) ?? "refused";
      // A grant that arrived after its own end (a paused process) is asked for again.
      if (outcome !== "refused" && this.valid(mq)) return outcome;
      await sleep(retryMillis, signal);
    }
  }

  /** Ends this consumer's leases of the queues (locally at once, then at the broker: one request per topic). */
  async unlock(mqs: readonly MessageQueue[]): Promise<void> {
    for (const mq of mqs) this.#leases.delete(mq.key());
    await Promise.all(
      [...byTopic(mqs)].map(([topic, queues]) =>
        this.config.api.unlockQueues(
          this.config.group,
          topic,
          this.config.clientId,
          queues.map((q) => ({ brokerName: q.brokerName, queueId: q.queueId })),
        ),
      ),
    );
  }

  #learn(mq: MessageQueue, answer: LockedQueue | undefined, sentAt: number): LockOutcome {
    if (answer === undefined || !answer.locked) {
      this.#leases.delete(mq.key());
      return "refused";
    }
    this.#leases.set(mq.key(), { mq, epoch: answer.epoch, until: sentAt + Math.floor(answer.leaseMillis / 2) });
    return answer.continued ? "continued" : "locked";
  }
}
