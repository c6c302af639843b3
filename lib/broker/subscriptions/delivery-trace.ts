/**
 * @module Traces of a subscription's deliveries (docs/trace.md "Subscriptions"): with `enableMsgTrace` on the
 * subscription, each delivery attempt of a batch writes a SubBefore record per message before the target is
 * called and a SubAfter per message with the target's answer (CONSUME_SUCCESS, or RECONSUME_LATER with the
 * failure's reason), in the one record format of lib/core/trace-record.ts, as messages of the trace topic keyed
 * by the traced msgId. The records go through lib/core's bounded `AsyncTraceDispatcher` (one per trace topic):
 * never awaited by a delivery, dropped and counted when the queue is full, a failed trace append dropped and
 * counted, never retried. `close()` flushes within the dispatcher's bounded wait.
 *
 * @example
 * const tracer = new DeliveryTracer((topic, messages) => broker.sender.send({ topic, messages }));
 * const call = tracer.before(subscription, batch);
 * const outcome = await target.deliver(body, signal);
 * tracer.after(call, outcome);
 */
import { BoundedMap } from "../../core/bounded-map.js";
import { newMessageId } from "../../core/message-id-node.js";
import { RMQ_SYS_TRACE_TOPIC } from "../../core/names.js";
import { AsyncTraceDispatcher, type TraceSend } from "../../core/trace-dispatcher.js";
import { consumeTraceRecord, type TraceConsumeCall, type TraceConsumedMessage } from "../../core/trace-record.js";
import type { DeliverableMessage, DeliveryOutcome } from "./delivery.js";
import type { Subscription } from "./subscription-store.js";

/** Trace topics with a dispatcher at once; one more closes (flushes) the oldest. */
export const MAX_TRACE_TOPICS = 16;

/** One traced delivery attempt, from its SubBefore records to its SubAfter records. */
export interface TracedDelivery {
  readonly dispatcher: AsyncTraceDispatcher;
  readonly by: { groupName: string; clientId: string };
  readonly call: TraceConsumeCall;
  readonly batch: readonly DeliverableMessage[];
}

export interface TraceCounts {
  sent: number;
  dropped: number;
  failed: number;
}

export class DeliveryTracer {
  readonly #send: TraceSend;
  readonly #now: () => number;
  readonly #onError: ((err: unknown) => void) | undefined;
  /** Past `MAX_TRACE_TOPICS`, the oldest dispatcher is closed to make room. */
  readonly #dispatchers = new BoundedMap<string, AsyncTraceDispatcher>(MAX_TRACE_TOPICS, {
    onForget: (_topic, retiring) => this.#retire(retiring),
  });
  /** Counts of the dispatchers closed to make room (their flush included once it ended). */
  readonly #retired: TraceCounts = { sent: 0, dropped: 0, failed: 0 };
  readonly #closing = new Set<Promise<void>>();

  constructor(send: TraceSend, options: { now?: () => number; onError?: (err: unknown) => void } = {}) {
    this.#send = send;
    this.#now = options.now ?? Date.now;
    this.#onError = options.onError;
  }

  /** The SubBefore records of a delivery attempt, or undefined when the subscription does not trace. */
  before(s: Subscription, batch: readonly DeliverableMessage[]): TracedDelivery | undefined {
    if (!s.enableMsgTrace) return undefined;
    const traceTopic = s.customizedTraceTopic ?? RMQ_SYS_TRACE_TOPIC;
    if (traceTopic === s.topic) return undefined; // refused at PUT; never a delivery tracing itself
    const traced: TracedDelivery = {
      dispatcher: this.#dispatcherOf(traceTopic),
      by: { groupName: s.group, clientId: dispatcherClientId(s) },
      call: { requestId: newMessageId(), begin: this.#now() },
      batch,
    };
    traced.dispatcher.append(
      batch.map((m) => consumeTraceRecord(tracedMessage(m), "SubBefore", traced.by, traced.call)),
    );
    return traced;
  }

  /** The SubAfter records: the target's answer for each message of the attempt. */
  after(traced: TracedDelivery | undefined, outcome: DeliveryOutcome): void {
    if (traced === undefined) return;
    const end = this.#now();
    const failedIds = outcome.kind === "failure" ? undefined : new Set(outcome.failedIds);
    const error = outcome.kind === "failure" ? { error: outcome.reason } : {};
    traced.dispatcher.append(
      traced.batch.map((m) => {
        const ok = failedIds !== undefined && !failedIds.has(m.msgId);
        const status = ok ? "CONSUME_SUCCESS" : "RECONSUME_LATER";
        return consumeTraceRecord(tracedMessage(m), "SubAfter", traced.by, { ...traced.call, end, status, ...error });
      }),
    );
  }

  /** Records stored, dropped (queue full, or written after close) and failed (their append failed), since start. */
  get counts(): TraceCounts {
    const total = { ...this.#retired };
    for (const d of this.#dispatchers.values()) addCounts(total, d);
    return total;
  }

  /** Flushes every trace topic's records (bounded: the dispatchers' close). */
  async close(): Promise<void> {
    const open = [...this.#dispatchers.values()];
    await Promise.all([...open.map((d) => d.close()), ...this.#closing]);
  }

  #dispatcherOf(traceTopic: string): AsyncTraceDispatcher {
    const known = this.#dispatchers.get(traceTopic);
    if (known !== undefined) return known;
    const created = new AsyncTraceDispatcher({ send: this.#send, traceTopic, onError: this.#onError });
    this.#dispatchers.set(traceTopic, created);
    return created;
  }

  #retire(retiring: AsyncTraceDispatcher): void {
    const closing = retiring.close().finally(() => {
      addCounts(this.#retired, retiring);
      this.#closing.delete(closing);
    });
    this.#closing.add(closing);
  }
}

/** The dispatcher as a trace record's client: `dispatcher@` and its target (an URL without its query, or an ARN). */
export function dispatcherClientId(s: Subscription): string {
  if (s.target.type === "lambda") return `dispatcher@${s.target.functionArn}`;
  const url = new URL(s.target.url);
  return `dispatcher@${url.origin}${url.pathname}`;
}

function tracedMessage(m: DeliverableMessage): TraceConsumedMessage {
  const keys = Array.isArray(m.keys) ? m.keys : typeof m.keys === "string" && m.keys !== "" ? m.keys.split(" ") : [];
  return { ...m, tags: m.tags ?? "", keys };
}

function addCounts(into: TraceCounts, d: TraceCounts): void {
  into.sent += d.sent;
  into.dropped += d.dropped;
  into.failed += d.failed;
}
