/**
 * @module RocketMQ's `queryMsgTraceById`: a message's trace records, read back from the trace topic by a
 * key query (every trace message has the traced msgId as its key), oldest first.
 *
 * @example
 * const records = await queryMessageTrace(api, sendResult.msgId);
 * for (const r of records) console.log(r.traceType, r.groupName, r.success);
 */
import { RMQ_SYS_TRACE_TOPIC } from "../../core/names.js";
import { decodeTraceRecord, type TraceRecord, type TraceType } from "../../core/trace-record.js";
import type { NimbusApi } from "../transport/index.js";

/** Key-query pages read at most (64 records each): a message's trace is a handful of records. */
export const MAX_TRACE_PAGES = 16;

const ORDER: Record<TraceType, number> = { Pub: 0, EndTransaction: 1, SubBefore: 2, SubAfter: 3 };

export interface QueryTraceOptions {
  /** Default `RMQ_SYS_TRACE_TOPIC` (a client's `customizedTraceTopic` otherwise). */
  traceTopic?: string;
  /** Store-time range of the trace messages, ms since the epoch. */
  begin?: number;
  end?: number;
}

/**
 * The trace records of `msgId`, sorted by time (a Pub before the SubBefore of the same millisecond, a SubBefore
 * before its SubAfter). Reads at most `MAX_TRACE_PAGES` pages; a trace message that is not a record is skipped.
 * A trace topic that does not exist yet answers TOPIC_NOT_EXIST, as the key query does.
 */
export async function queryMessageTrace(
  api: NimbusApi,
  msgId: string,
  options: QueryTraceOptions = {},
): Promise<TraceRecord[]> {
  const records: TraceRecord[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TRACE_PAGES; page++) {
    const answer = await api.queryMessagesByKey({
      topic: options.traceTopic ?? RMQ_SYS_TRACE_TOPIC,
      key: msgId,
      ...(options.begin === undefined ? {} : { begin: options.begin }),
      ...(options.end === undefined ? {} : { end: options.end }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const m of answer.messages) {
      try {
        const record = decodeTraceRecord(m.body);
        if (record.msgId === msgId) records.push(record);
      } catch {
        // Another message with this key in a customized trace topic: not a trace record.
      }
    }
    cursor = answer.nextCursor;
    if (cursor === undefined) break;
  }
  return records.sort((a, b) => a.timeStamp - b.timeStamp || ORDER[a.traceType] - ORDER[b.traceType]);
}
