/**
 * @module mqadmin's `queryMsgTraceById -i <msgId> [-t <traceTopic>]`: a message's trace records (docs/trace.md),
 * read from the trace topic by a key query, printed oldest first as mqadmin prints them: the sends (Pub), then
 * every consume attempt of every group (SubBefore / SubAfter) and the transaction's end.
 */
import type { Command } from "commander";
import { queryMessageTrace, type TraceRecord } from "../client/trace/index.js";
import { ErrorCode, isNimbusError } from "../core/errors.js";
import { RMQ_SYS_TRACE_TOPIC } from "../core/names.js";
import { type ApiOptions, apiCommand, connect } from "./common.js";
import { refuseOptions } from "./mqadmin-compat.js";
import { formatTable, formatTime, note, print, printJson } from "./output.js";
import { timeArg } from "./query-commands.js";

interface TraceOptions extends ApiOptions {
  msgId: string;
  traceTopic: string;
  beginTimestamp?: number;
  endTimestamp?: number;
}

export function addTraceCommands(program: Command): void {
  const cmd = apiCommand(program, "queryMsgTraceById", "show a message's trace: its sends and every group's consumes")
    .requiredOption("-i, --msgId <id>", "the traced message's id (UNIQ_KEY)")
    .option("-t, --traceTopic <topic>", "the trace topic (a client's customizedTraceTopic)", RMQ_SYS_TRACE_TOPIC)
    .option("-b, --beginTimestamp <time>", "trace records stored from this time, ms or a date", timeArg)
    .option("-e, --endTimestamp <time>", "trace records stored until this time, ms or a date", timeArg)
    .addHelpText(
      "after",
      [
        "",
        "Traces are written by clients with enableMsgTrace: true (docs/trace.md).",
        "",
        "Example:",
        "  nimbus queryMsgTraceById -i 7F00000100002A9F0000000000000000",
      ].join("\n"),
    );
  refuseOptions(cmd, [
    { flags: "-c, --maxNum <n>", hint: "every record of the message is printed (a trace is a handful of records)" },
  ]).action(async (opts: TraceOptions) => {
    const records = await queryMessageTrace(connect(opts), opts.msgId, {
      traceTopic: opts.traceTopic,
      ...(opts.beginTimestamp === undefined ? {} : { begin: opts.beginTimestamp }),
      ...(opts.endTimestamp === undefined ? {} : { end: opts.endTimestamp }),
    }).catch((err: unknown) => {
      // No trace topic yet: nothing was ever traced to it, so this message was not either (not an error).
      if (isNimbusError(err, ErrorCode.TOPIC_NOT_EXIST) && !opts.json) return undefined;
      throw err;
    });
    if (records === undefined) {
      note(
        `no trace of ${opts.msgId}: the trace topic ${opts.traceTopic} does not exist yet, so nothing was traced to it (send or consume with enableMsgTrace)`,
      );
      return;
    }
    if (opts.json) return printJson(records);
    if (records.length === 0) {
      note(`no trace of ${opts.msgId} in ${opts.traceTopic} (was it sent or consumed with enableMsgTrace?)`);
      return;
    }
    print(traceTable(records));
  });
}

/** mqadmin's `#Type #ProducerGroup/#ConsumerGroup #ClientHost #Time #CostTimes #Status`, one row per record. */
function traceTable(records: readonly TraceRecord[]): string {
  return formatTable(
    [
      { header: "Type" },
      { header: "Group" },
      { header: "ClientId" },
      { header: "Time" },
      { header: "CostTimes" },
      { header: "Status" },
      { header: "ReconsumeTimes" },
      { header: "Where" },
    ],
    records.map((r) => [
      r.traceType,
      r.groupName,
      r.clientId,
      formatTime(r.timeStamp),
      `${r.costTime}ms`,
      statusOf(r),
      r.reconsumeTimes ?? "",
      r.brokerName === undefined ? "" : `${r.brokerName}/${r.queueId ?? ""}/${r.queueOffset ?? ""}`,
    ]),
  );
}

function statusOf(r: TraceRecord): string {
  if (r.traceType === "EndTransaction") return r.transactionState ?? "";
  if (r.traceType === "SubAfter") return r.consumeStatus ?? (r.success ? "success" : "failed");
  if (r.traceType === "Pub") return r.success ? "success" : "failed";
  return "started";
}
