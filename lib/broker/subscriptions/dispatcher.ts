/**
 * @module The dispatcher: delivers each subscription's messages to its target over POP. Woken by hints (the
 * write path's `QueueLog.onAppended`, the AWS hint path, the once-a-minute backstop, a retry falling due); it
 * runs while receives answer messages and stops on the first empty one, so nothing polls while a topic is idle.
 *
 * - Unordered: up to `maxConcurrency` workers, each receiving a batch (filling it for `maxBatchingWindowMs`),
 *   delivering it and settling it (settle.ts): acked, retried by POP after the backoff, or dead-lettered.
 * - Ordered (`queue`, `messageGroup`): one receiver; its batch is split by ordering key and each key's messages
 *   go in order, at most `maxConcurrency` keys at once, a failure retried in place (the rest of the key waits:
 *   never skipped ahead of) until success or its dead letter; the next receive waits for every key.
 * - Traced (`enableMsgTrace`): every delivery attempt's SubBefore / SubAfter records (delivery-trace.ts).
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { sleep } from "../../core/sleep.js";
import type { TraceSend } from "../../core/trace-dispatcher.js";
import { type DeliveryOutcome, type DeliveryTarget, deliveryBody, failure } from "./delivery.js";
import { type DeliveryErrorStore, DeliveryErrors } from "./delivery-errors.js";
import { DeliveryTracer, type TraceCounts } from "./delivery-trace.js";
import type { PopPort, PoppedMessage } from "./pop-port.js";
import { ackCount, backoffMs, deadLetterProperties, exhausted, reasonOf, settle } from "./settle.js";
import type { Subscription } from "./subscription-store.js";

/** What a message group is, as RocketMQ 5's FIFO messages carry it. */
export const MESSAGE_GROUP_PROPERTY = "__SHARDINGKEY";
/** Extra invisibility beyond a delivery's timeout, so a slow settle never lets POP redeliver a batch in flight. */
const INVISIBLE_MARGIN_MS = 10_000;

export interface DispatcherOptions {
  pop: PopPort;
  /** The target of a subscription (an HTTPS or Lambda target; tests wrap one to count). */
  targetOf(subscription: Subscription): DeliveryTarget;
  now?: () => number;
  /** Called when a retry falls due: schedule `wake` then (a timer in-process; the backstop on AWS). */
  onRetryDue?: (subscription: Subscription, at: number) => void;
  /** Appends a batch of trace records to a trace topic (the broker's send): traced subscriptions' records. */
  traceSend?: TraceSend;
  /** A failed trace append (its records dropped, counted in `traceCounts`). */
  onTraceError?: (err: unknown) => void;
  /** Where each subscription's last delivery error is kept (delivery-errors.ts); absent: logged only. */
  errorStore?: DeliveryErrorStore;
}

export interface DispatchReport {
  delivered: number;
  acked: number;
  retried: number;
  deadLettered: number;
}

const emptyReport = (): DispatchReport => ({ delivered: 0, acked: 0, retried: 0, deadLettered: 0 });

export class SubscriptionDispatcher {
  readonly #options: DispatcherOptions;
  readonly #now: () => number;
  /** Running workers per group, and groups woken while running (they look once more before stopping). */
  readonly #active = new Map<string, number>();
  readonly #rewoken = new Set<string>();
  readonly #running = new Set<Promise<unknown>>();
  readonly #stop = new AbortController();
  /** Everything this dispatcher delivered and settled since it started (what `nimbus dev` reports). */
  readonly #totals = emptyReport();
  readonly #tracer: DeliveryTracer | undefined;
  readonly #errors: DeliveryErrors;

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#errors = new DeliveryErrors(options.errorStore, this.#now);
    this.#tracer =
      options.traceSend === undefined
        ? undefined
        : new DeliveryTracer(options.traceSend, {
            now: this.#now,
            ...(options.onTraceError ? { onError: options.onTraceError } : {}),
          });
  }

  /** Wakes a subscription's workers (up to its concurrency); returns when they have stopped. */
  wake(subscription: Subscription): Promise<DispatchReport> {
    const key = subscription.group;
    const slots = subscription.ordering === "none" ? subscription.maxConcurrency : 1;
    const active = this.#active.get(key) ?? 0;
    if (active >= slots) {
      this.#rewoken.add(key);
      return Promise.resolve(emptyReport());
    }
    const runs: Promise<DispatchReport>[] = [];
    for (let i = active; i < slots; i++) runs.push(this.#track(this.#worker(subscription)));
    return Promise.all(runs).then(sumReports);
  }

  get totals(): Readonly<DispatchReport> {
    return { ...this.#totals };
  }

  /** Trace records of traced subscriptions: stored, dropped, failed (all zero without `traceSend`). */
  get traceCounts(): TraceCounts {
    return this.#tracer?.counts ?? { sent: 0, dropped: 0, failed: 0 };
  }

  /**
   * Stops receiving; deliveries in flight are abandoned (POP redelivers them after their invisibility). Then
   * flushes the trace records (a bounded wait).
   */
  async close(): Promise<void> {
    this.#stop.abort();
    await Promise.allSettled([...this.#running]);
    await this.#tracer?.close();
    await this.#errors.settled();
  }

  #track<T>(run: Promise<T>): Promise<T> {
    this.#running.add(run);
    return run.finally(() => this.#running.delete(run));
  }

  async #worker(subscription: Subscription): Promise<DispatchReport> {
    const key = subscription.group;
    this.#active.set(key, (this.#active.get(key) ?? 0) + 1);
    const report = emptyReport();
    try {
      while (!this.#stop.signal.aborted) {
        this.#rewoken.delete(key);
        const batch = await this.#receiveBatch(subscription);
        if (batch.length === 0) {
          if (this.#rewoken.has(key)) continue;
          await this.#scheduleNextDeadline(subscription);
          break;
        }
        const part =
          subscription.ordering === "none"
            ? await this.#deliverAndSettle(subscription, batch)
            : await this.#deliverOrdered(subscription, batch);
        addInto(report, part);
        addInto(this.#totals, part);
      }
    } finally {
      this.#active.set(key, (this.#active.get(key) ?? 1) - 1);
    }
    return report;
  }

  /**
   * Nothing receivable now: if a message in flight becomes receivable later (another process's, dead or slow),
   * a wake then, as for a retry. A deadline already passed is left to the backstop (no loop on it).
   */
  async #scheduleNextDeadline(s: Subscription): Promise<void> {
    const { pop, onRetryDue } = this.#options;
    if (pop.nextDeadline === undefined || onRetryDue === undefined) return;
    const at = await pop.nextDeadline(s.group, s.topic).catch(() => undefined);
    if (at !== undefined && at > this.#now()) onRetryDue(s, at);
  }

  /** One receive, then more until the batch is full or the batching window has passed. */
  async #receiveBatch(s: Subscription): Promise<PoppedMessage[]> {
    const invisibleMs = s.maxBatchingWindowMs + s.timeoutMs + INVISIBLE_MARGIN_MS;
    // Saving the subscription fixed the group's start on the topic: every queue delivers what was stored since,
    // a queue added later included. A topic that does not exist (yet) has nothing to deliver.
    const request = { group: s.group, topic: s.topic, filter: s.filterExpression, invisibleMs, longPollMs: 0 };
    const receive = async (max: number): Promise<PoppedMessage[]> =>
      this.#options.pop.receive({ ...request, maxMessages: max }, this.#stop.signal).then(
        (answer) => answer.messages,
        (err: unknown): PoppedMessage[] => {
          if (err instanceof NimbusError && err.code === ErrorCode.TOPIC_NOT_EXIST) return [];
          throw err;
        },
      );
    const batch = await receive(s.batchSize);
    if (batch.length === 0 || s.maxBatchingWindowMs === 0) return batch;
    const until = this.#now() + s.maxBatchingWindowMs;
    while (batch.length < s.batchSize && this.#now() < until && !this.#stop.signal.aborted) {
      await sleep(Math.min(50, Math.max(0, until - this.#now())));
      batch.push(...(await receive(s.batchSize - batch.length)));
    }
    return batch;
  }

  /** One delivery attempt of `batch`, between its SubBefore and SubAfter records when the subscription traces. */
  async #deliver(s: Subscription, batch: readonly PoppedMessage[]): Promise<DeliveryOutcome> {
    const traced = this.#tracer?.before(s, batch);
    try {
      const outcome = await this.#options.targetOf(s).deliver(deliveryBody(batch), this.#stop.signal);
      this.#tracer?.after(traced, outcome);
      if (outcome.kind === "failure") this.#errors.failed(s, outcome.reason, batch.length);
      else if (outcome.failedIds.length > 0) this.#errors.failed(s, reasonOf(outcome), outcome.failedIds.length);
      return outcome;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.#tracer?.after(traced, failure(reason));
      this.#errors.failed(s, reason, batch.length);
      throw err;
    }
  }

  async #deliverAndSettle(s: Subscription, batch: PoppedMessage[]): Promise<DispatchReport> {
    const outcome = await this.#deliver(s, batch);
    const settled = await settle(this.#options.pop, s, batch, outcome, this.#now);
    if (settled.retryAt !== undefined) this.#options.onRetryDue?.(s, settled.retryAt);
    return {
      delivered: batch.length,
      acked: settled.acked,
      retried: settled.retried,
      deadLettered: settled.deadLettered,
    };
  }

  async #deliverOrdered(s: Subscription, batch: PoppedMessage[]): Promise<DispatchReport> {
    const byKey = new Map<string, PoppedMessage[]>();
    for (const m of batch) {
      const k = orderingKey(s, m);
      byKey.set(k, [...(byKey.get(k) ?? []), m]);
    }
    const reports: DispatchReport[] = [];
    const keys = [...byKey.values()];
    // At most maxConcurrency keys at once; each key's messages strictly in order.
    const lanes = Array.from({ length: Math.min(s.maxConcurrency, keys.length) }, async () => {
      for (let next = keys.shift(); next !== undefined; next = keys.shift())
        reports.push(await this.#orderedKey(s, next));
    });
    await Promise.all(lanes);
    return sumReports(reports);
  }

  /**
   * One key's messages, in order: a failed message and everything after it are retried in place. Moving a
   * message's invisibility gives it a new receipt handle (POP's old one dies), so the pending list carries the new.
   */
  async #orderedKey(s: Subscription, messages: PoppedMessage[]): Promise<DispatchReport> {
    const report = emptyReport();
    let pending = messages;
    while (pending.length > 0 && !this.#stop.signal.aborted) {
      const outcome = await this.#deliver(s, pending);
      report.delivered += pending.length;
      const failedIds = outcome.kind === "failure" ? new Set(pending.map((m) => m.msgId)) : new Set(outcome.failedIds);
      const firstFailed = pending.findIndex((m) => failedIds.has(m.msgId));
      const done = firstFailed < 0 ? pending : pending.slice(0, firstFailed);
      if (done.length > 0) report.acked += await ackCount(this.#options.pop, s, done);
      if (firstFailed < 0) break;
      pending = pending.slice(firstFailed);
      const head = pending[0] as PoppedMessage;
      if (exhausted(s, head)) {
        await this.#options.pop.forwardToDeadLetter(
          s.group,
          s.topic,
          head.receiptHandle,
          deadLetterProperties(outcome),
        );
        report.deadLettered++;
        pending = pending.slice(1);
        continue;
      }
      // Keep the key's messages invisible over the backoff and the next delivery, then try again from the failed one.
      const waitMs = backoffMs(s, head.deliveryAttempt);
      const moved: PoppedMessage[] = [];
      for (const m of pending) {
        const changed = await this.#options.pop.changeInvisibleDuration(
          s.group,
          s.topic,
          m.receiptHandle,
          waitMs + s.timeoutMs + INVISIBLE_MARGIN_MS,
        );
        moved.push({
          ...m,
          ...changed,
          deliveryAttempt: m.deliveryAttempt + 1,
          reconsumeTimes: m.deliveryAttempt,
        });
      }
      pending = moved;
      report.retried += pending.length;
      await sleep(waitMs, this.#stop.signal);
    }
    return report;
  }
}

/** The key ordered deliveries serialize on: the queue, or the message group (its queue when it has none). */
export function orderingKey(s: Subscription, m: PoppedMessage): string {
  const queue = `${m.brokerName}:${m.queueId}`;
  if (s.ordering === "messageGroup") {
    const group = m.properties[MESSAGE_GROUP_PROPERTY];
    return group === undefined ? `q:${queue}` : `g:${group}`;
  }
  return `q:${queue}`;
}

function addInto(into: DispatchReport, part: DispatchReport): void {
  into.delivered += part.delivered;
  into.acked += part.acked;
  into.retried += part.retried;
  into.deadLettered += part.deadLettered;
}

export function sumReports(reports: readonly DispatchReport[]): DispatchReport {
  const total = emptyReport();
  for (const r of reports) addInto(total, r);
  return total;
}
