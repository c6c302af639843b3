/**
 * @module RocketMQ's `AsyncTraceDispatcher`: trace records wait in a bounded queue and go to the trace topic
 * in small batches from the background, so tracing never blocks nor fails a user's send or consume (nor a
 * subscription's delivery). A full queue drops the record (counted in `dropped`); a failed trace send drops its
 * batch (counted in `failed`, reported to `onError`), never retried. `close()` flushes what waits, within a
 * bounded wait. How a batch is sent is a port: the SDK's `POST /send`, or the broker's own send service.
 *
 * @example
 * const dispatcher = new AsyncTraceDispatcher({ send, traceTopic: "RMQ_SYS_TRACE_TOPIC", onError });
 * dispatcher.append([record]);
 * await dispatcher.close();
 */
import { sleep } from "./sleep.js";
import { type TraceMessage, type TraceRecord, traceMessage } from "./trace-record.js";

/** Records waiting at most; more are dropped. RocketMQ's queueSize is 2048 records of up to 100 messages. */
export const TRACE_QUEUE_MAX = 1024;
/** Records per trace send (one message each, one request). */
export const TRACE_BATCH_MAX = 32;
/** A record waits at most this long for others to share its send. */
export const TRACE_FLUSH_MS = 100;
/** A trace send's timeout, and the longest `close()` waits for the last ones. */
export const TRACE_SEND_TIMEOUT_MS = 3000;

/** Stores one batch of trace messages in `topic` (one request), within `timeoutMs`. */
export type TraceSend = (topic: string, messages: TraceMessage[], timeoutMs: number) => Promise<unknown>;

export interface AsyncTraceDispatcherOptions {
  send: TraceSend;
  traceTopic: string;
  onError?: ((err: unknown) => void) | undefined;
  /** The longest `close()` waits for the last sends (default `TRACE_SEND_TIMEOUT_MS`). */
  closeTimeoutMs?: number | undefined;
}

export class AsyncTraceDispatcher {
  readonly traceTopic: string;
  readonly #send: TraceSend;
  readonly #onError: ((err: unknown) => void) | undefined;
  readonly #closeTimeoutMs: number;
  readonly #queue: TraceRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  #sending: Promise<void> | undefined;
  #closed = false;
  /** Records dropped because the queue was full or the dispatcher closed. */
  dropped = 0;
  /** Records whose trace send failed. */
  failed = 0;
  /** Records stored in the trace topic. */
  sent = 0;

  constructor(options: AsyncTraceDispatcherOptions) {
    this.#send = options.send;
    this.traceTopic = options.traceTopic;
    this.#onError = options.onError;
    this.#closeTimeoutMs = options.closeTimeoutMs ?? TRACE_SEND_TIMEOUT_MS;
  }

  /** Queues records for the trace topic; never throws, never waits. */
  append(records: readonly TraceRecord[]): void {
    for (const r of records) {
      if (this.#closed || this.#queue.length >= TRACE_QUEUE_MAX) this.dropped++;
      else this.#queue.push(r);
    }
    this.#schedule();
  }

  #schedule(): void {
    if (this.#sending !== undefined || this.#queue.length === 0) return;
    if (this.#queue.length >= TRACE_BATCH_MAX) {
      this.#flushNow();
      return;
    }
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#flushNow(), TRACE_FLUSH_MS);
      this.#timer.unref();
    }
  }

  #flushNow(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#sending !== undefined) return;
    const batch = this.#queue.splice(0, TRACE_BATCH_MAX);
    if (batch.length === 0) return;
    this.#sending = this.#sendBatch(batch).finally(() => {
      this.#sending = undefined;
      this.#schedule();
    });
  }

  async #sendBatch(batch: TraceRecord[]): Promise<void> {
    try {
      await this.#send(this.traceTopic, batch.map(traceMessage), TRACE_SEND_TIMEOUT_MS);
      this.sent += batch.length;
    } catch (err) {
      this.failed += batch.length;
      this.#onError?.(err);
    }
  }

  /** Sends what waits (one batch after another) for at most `closeTimeoutMs`, then drops the rest. */
  async close(): Promise<void> {
    this.#closed = true;
    const stop = new AbortController();
    let expired = false;
    const timeUp = sleep(this.#closeTimeoutMs, stop.signal).then(() => {
      expired = true;
    });
    while ((this.#queue.length > 0 || this.#sending !== undefined) && !expired) {
      this.#flushNow();
      // A send port without a timeout of its own (the broker's) cannot hold close() past the deadline.
      await Promise.race([this.#sending, timeUp]);
    }
    stop.abort();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.dropped += this.#queue.splice(0).length;
  }
}
