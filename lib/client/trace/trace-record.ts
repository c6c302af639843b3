/**
 * @module One step of a message's life as a client saw it: RocketMQ's trace records (`TraceContext` with its
 * `TraceBean`, `TraceType` Pub / SubBefore / SubAfter / EndTransaction), one record per message, encoded as
 * JSON (RocketMQ joins the fields with its own separators; Nimbus speaks JSON everywhere).
 *
 * @example
 * const record: TraceRecord = { traceType: "Pub", msgId, topic: "Orders", groupName: "pg", ... };
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { RMQ_SYS_TRACE_TOPIC, validateSendTopic } from "../../core/names.js";

export type TraceType = "Pub" | "SubBefore" | "SubAfter" | "EndTransaction";

/** One record: which step, of which message, by which client and group, when, how long, with what result. */
export interface TraceRecord {
  traceType: TraceType;
  /** ms since the epoch: a send's or a consume's start, a SubAfter's end, a transaction's end. */
  timeStamp: number;
  /** The producer group (Pub, EndTransaction) or the consumer group (SubBefore, SubAfter). */
  groupName: string;
  /** The client (`ip@instance`) that did the step. */
  clientId: string;
  /** The traced message's id (its UNIQ_KEY): the trace message's key. */
  msgId: string;
  topic: string;
  tags: string;
  keys: string[];
  /** Pub: the send's time, retries included; SubAfter: the listener's time; others 0. */
  costTime: number;
  /** Pub: stored; SubAfter: the listener answered success; SubBefore, EndTransaction: true. */
  success: boolean;
  /** Pairs a SubBefore with its SubAfter (one per listener call). */
  requestId?: string;
  /** The broker that stored the message (RocketMQ's storeHost) and where. */
  brokerName?: string;
  queueId?: number;
  queueOffset?: number;
  /** Pub: the body's size in bytes. */
  bodyLength?: number;
  /** SubBefore / SubAfter: how many times the message was consumed before (RocketMQ's retryTimes). */
  reconsumeTimes?: number;
  /** SubAfter: the listener's answer (CONSUME_SUCCESS, RECONSUME_LATER, or THREW). */
  consumeStatus?: string;
  /** EndTransaction: COMMIT_MESSAGE or ROLLBACK_MESSAGE. */
  transactionState?: string;
  /** Pub: why the send failed. */
  error?: string;
}

/** The trace options every client takes (RocketMQ's `enableMsgTrace` and `customizedTraceTopic`). */
export interface TraceOptions {
  /** Records every send or consume as trace messages of the trace topic (docs/trace.md). Default false. */
  enableMsgTrace?: boolean;
  /** Default `RMQ_SYS_TRACE_TOPIC`; a user topic otherwise (created as any topic is). */
  customizedTraceTopic?: string;
}

/** The trace topic of these options, checked. */
export function traceTopicOf(options: TraceOptions): string {
  const topic = options.customizedTraceTopic ?? RMQ_SYS_TRACE_TOPIC;
  validateSendTopic(topic);
  return topic;
}

const TRACE_TYPES: readonly string[] = ["Pub", "SubBefore", "SubAfter", "EndTransaction"];

/** Reads a trace message's body; a body that is not a trace record is PARAMETER_ILLEGAL. */
export function decodeTraceRecord(body: Uint8Array): TraceRecord {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "a trace message's body is not JSON");
  }
  const r = value as Partial<TraceRecord> | null;
  if (
    r === null ||
    typeof r !== "object" ||
    !TRACE_TYPES.includes(String(r.traceType)) ||
    typeof r.msgId !== "string" ||
    typeof r.timeStamp !== "number"
  ) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "a trace message's body is not a trace record");
  }
  return r as TraceRecord;
}
