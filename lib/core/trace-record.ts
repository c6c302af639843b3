/**
 * @module One step of a message's life as a client (or the subscription dispatcher) saw it: RocketMQ's trace
 * records (`TraceContext` with its `TraceBean`, `TraceType` Pub / SubBefore / SubAfter / EndTransaction), one
 * record per message, encoded as JSON (RocketMQ joins the fields with its own separators; Nimbus speaks JSON
 * everywhere). The one codec of trace messages: the SDK's clients and the broker's dispatcher both write with
 * `traceMessage`, `queryMessageTrace` reads with `decodeTraceRecord`.
 *
 * @example
 * const record = consumeTraceRecord(message, "SubBefore", { groupName: "g", clientId }, { requestId, begin });
 * const wire = traceMessage(record); // { body, tags: "SubBefore", keys: [msgId], properties: { UNIQ_KEY } }
 */
import { ErrorCode, NimbusError } from "./errors.js";
import { MessageConst } from "./message.js";
import { newMessageId } from "./message-id-node.js";
import { RMQ_SYS_TRACE_TOPIC, validateSendTopic } from "./names.js";

export type TraceType = "Pub" | "SubBefore" | "SubAfter" | "EndTransaction";

/** One record: which step, of which message, by which client and group, when, how long, with what result. */
export interface TraceRecord {
  traceType: TraceType;
  /** ms since the epoch: a send's or a consume's start, a SubAfter's end, a transaction's end. */
  timeStamp: number;
  /** The producer group (Pub, EndTransaction) or the consumer group (SubBefore, SubAfter). */
  groupName: string;
  /** The client (`ip@instance`) that did the step; a subscription's dispatcher: `dispatcher@<target>`. */
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
  /** EndTransaction: the transaction's id, and whether the end answered a broker's check-back. */
  transactionId?: string;
  fromTransactionCheck?: boolean;
  /** Pub: why the send failed; SubAfter of a subscription: why the target's delivery failed. */
  error?: string;
}

/** The trace options every client takes (RocketMQ's `enableMsgTrace` and `customizedTraceTopic`). */
export interface TraceOptions {
  /** Records every send or consume as trace messages of the trace topic (docs/trace.md). Default false. */
  enableMsgTrace?: boolean | undefined;
  /** Default `RMQ_SYS_TRACE_TOPIC`; a user topic otherwise (created as any topic is). */
  customizedTraceTopic?: string | undefined;
}

/** The trace topic of these options, checked. */
export function traceTopicOf(options: TraceOptions): string {
  const topic = options.customizedTraceTopic ?? RMQ_SYS_TRACE_TOPIC;
  validateSendTopic(topic);
  return topic;
}

/** Longest `error` a record carries. */
export const MAX_TRACE_ERROR_LENGTH = 512;

/** A record as the message that stores it: the JSON body, the record's type as tag, the traced msgId as key. */
export interface TraceMessage {
  body: Uint8Array;
  tags: string;
  keys: string[];
  properties: Record<string, string>;
}

export function traceMessage(record: TraceRecord): TraceMessage {
  return {
    body: new TextEncoder().encode(JSON.stringify(record)),
    tags: record.traceType,
    keys: [record.msgId],
    properties: { [MessageConst.UNIQ_KEY]: newMessageId() },
  };
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

/** What a consume record says of its message (a MessageExt's fields; a POP view or a delivery maps to them). */
export interface TraceConsumedMessage {
  msgId: string;
  topic: string;
  tags: string;
  keys: readonly string[];
  properties: Readonly<Record<string, string>>;
  brokerName: string;
  queueId: number;
  queueOffset: number;
  reconsumeTimes: number;
}

/** The answers a SubAfter counts as success (a concurrent listener's, an orderly one's). */
const SUCCESS_STATUSES = new Set(["CONSUME_SUCCESS", "SUCCESS"]);

/** One consume call: its pairing id and start; a SubAfter's answer, end, and (a failed delivery) why. */
export interface TraceConsumeCall {
  requestId: string;
  begin: number;
  status?: string;
  end?: number;
  error?: string;
}

/** A SubBefore (`call.status` absent) or SubAfter record of one consumed message, as RocketMQ's consume hook. */
export function consumeTraceRecord(
  m: TraceConsumedMessage,
  traceType: "SubBefore" | "SubAfter",
  by: { groupName: string; clientId: string },
  call: TraceConsumeCall,
): TraceRecord {
  const after = traceType === "SubAfter";
  const end = call.end ?? Date.now();
  return {
    traceType,
    timeStamp: after ? end : call.begin,
    groupName: by.groupName,
    clientId: by.clientId,
    msgId: m.msgId,
    // A redelivered message is traced under its own topic, not its retry topic.
    topic: m.properties[MessageConst.RETRY_TOPIC] ?? m.topic,
    tags: m.tags,
    keys: [...m.keys],
    costTime: after ? end - call.begin : 0,
    success: !after || SUCCESS_STATUSES.has(call.status ?? ""),
    requestId: call.requestId,
    brokerName: m.brokerName,
    queueId: m.queueId,
    queueOffset: m.queueOffset,
    reconsumeTimes: m.reconsumeTimes,
    ...(after ? { consumeStatus: call.status ?? "" } : {}),
    ...(after && call.error !== undefined ? { error: call.error.slice(0, MAX_TRACE_ERROR_LENGTH) } : {}),
  };
}
