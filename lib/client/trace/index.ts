/** @module Message traces (RocketMQ's `enableMsgTrace`): records, their dispatcher, and reading a trace back. */
export {
  TRACE_BATCH_MAX,
  TRACE_FLUSH_MS,
  TRACE_QUEUE_MAX,
  TRACE_SEND_TIMEOUT_MS,
} from "../../core/trace-dispatcher.js";
export {
  decodeTraceRecord,
  type TraceOptions,
  type TraceRecord,
  type TraceType,
  traceTopicOf,
} from "../../core/trace-record.js";
export { MessageTracer, type TracedMessage, type TracedSend } from "./message-tracer.js";
export { MAX_TRACE_PAGES, type QueryTraceOptions, queryMessageTrace } from "./query-trace.js";
export { TraceDispatcher, type TraceDispatcherOptions } from "./trace-dispatcher.js";
