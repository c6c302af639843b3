/**
 * @module A message's trace as a timeline (docs/trace.md): the records clients with `enableMsgTrace` wrote to
 * `RMQ_SYS_TRACE_TOPIC` under the message's id, read by the key query (one page of 64), oldest first.
 */
import { ErrorCode } from "../../core/errors.js";
import { type Answer, call, nullOn } from "../api.js";
import { useConnection } from "../connection.js";
import { formatTime, fromBase64 } from "../format.js";
import { useApi } from "../use-api.js";
import { ErrorBox, Loading, TableBox } from "../widgets.js";

/** The fields of a trace record the timeline shows (lib/client/trace/trace-record.ts has them all). */
interface TraceRow {
  traceType: string;
  timeStamp: number;
  groupName: string;
  clientId: string;
  msgId: string;
  costTime: number;
  success: boolean;
  reconsumeTimes?: number;
  consumeStatus?: string;
  transactionState?: string;
}

const ORDER: Record<string, number> = { Pub: 0, EndTransaction: 1, SubBefore: 2, SubAfter: 3 };

function rowsOf(answer: Answer<"queryMessagesByKey">, msgId: string): TraceRow[] {
  const rows: TraceRow[] = [];
  for (const m of answer.messages) {
    try {
      const r = JSON.parse(new TextDecoder().decode(fromBase64(m.body))) as TraceRow;
      if (r.msgId === msgId && typeof r.timeStamp === "number") rows.push(r);
    } catch {
      // Not a trace record.
    }
  }
  return rows.sort((a, b) => a.timeStamp - b.timeStamp || (ORDER[a.traceType] ?? 9) - (ORDER[b.traceType] ?? 9));
}

function result(r: TraceRow): string {
  if (r.traceType === "EndTransaction") return r.transactionState ?? "";
  if (r.traceType === "SubBefore") return "started";
  return r.consumeStatus ?? (r.success ? "success" : "failed");
}

export function MessageTrace({ msgId }: { msgId: string }) {
  const conn = useConnection();
  const trace = useApi(async () => {
    const found = await nullOn(
      ErrorCode.TOPIC_NOT_EXIST,
      call(conn, "queryMessagesByKey", { body: { topic: "RMQ_SYS_TRACE_TOPIC", key: msgId } }),
    );
    // No trace topic yet: no client has traced anything.
    return found === null ? [] : rowsOf(found, msgId);
  }, [conn, msgId]);
  const rows = trace.data;
  return (
    <>
      <h2>Trace</h2>
      <ErrorBox error={trace.error} />
      <Loading when={trace.loading && rows === undefined} />
      {rows?.length === 0 && <p class="muted">No trace: sent and consumed without enableMsgTrace (docs/trace.md).</p>}
      {rows !== undefined && rows.length > 0 && (
        <TableBox label="Trace">
          <thead>
            <tr>
              <th>Time (UTC)</th>
              <th>Step</th>
              <th>Group</th>
              <th>Client</th>
              <th>Cost</th>
              <th>Result</th>
              <th>Reconsume times</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={`${r.traceType}-${r.timeStamp}-${i}`} data-testid="trace-row" class={r.success ? "" : "error"}>
                <td class="mono">{formatTime(r.timeStamp)}</td>
                <td>{r.traceType}</td>
                <td class="mono">{r.groupName}</td>
                <td class="mono">{r.clientId}</td>
                <td>{r.costTime} ms</td>
                <td>{result(r)}</td>
                <td>{r.reconsumeTimes ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      )}
    </>
  );
}
