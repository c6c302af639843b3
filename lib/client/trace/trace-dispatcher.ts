/**
 * @module The SDK's trace dispatcher: lib/core's `AsyncTraceDispatcher` (bounded queue, batches, drops counted)
 * sending its batches with `POST /send` through the client's API.
 *
 * @example
 * const dispatcher = new TraceDispatcher({ api, traceTopic: "RMQ_SYS_TRACE_TOPIC", onError });
 * dispatcher.append([record]);
 * await dispatcher.close();
 */
import { AsyncTraceDispatcher } from "../../core/trace-dispatcher.js";
import type { NimbusApi } from "../transport/index.js";

export interface TraceDispatcherOptions {
  api: NimbusApi;
  traceTopic: string;
  onError?: (err: unknown) => void;
  /** The longest `close()` waits for the last sends (default `TRACE_SEND_TIMEOUT_MS`, 3 s). */
  closeTimeoutMs?: number;
}

export class TraceDispatcher extends AsyncTraceDispatcher {
  constructor(options: TraceDispatcherOptions) {
    super({
      send: (topic, messages, timeoutMs) => options.api.send({ topic, messages }, { timeoutMs }),
      traceTopic: options.traceTopic,
      onError: options.onError,
      closeTimeoutMs: options.closeTimeoutMs,
    });
  }
}
