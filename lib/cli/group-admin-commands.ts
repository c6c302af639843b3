/**
 * @module mqadmin's group operations of orderly consumption: `resetOffsetByTime` (every queue of a
 * topic to the first message stored at or after a time; live consumers move there within their membership
 * poll, no restart) and `consumerStatus` (per live member: its queues, locks, process-queue sizes and last
 * pull/consume times, as its heartbeats report them).
 */
import { type Command, InvalidArgumentError, Option } from "commander";
import { type ApiOptions, apiCommand, connect } from "./common.js";
import { clusterOption, refuseOptions, STAGE_WIDE_BROKER } from "./mqadmin-compat.js";
import { formatTable, formatTime, note, print, printJson } from "./output.js";

interface ResetOptions extends ApiOptions {
  groupName: string;
  topic: string;
  timestamp: number | "now" | "first";
}

interface StatusOptions extends ApiOptions {
  groupName: string;
  /** mqadmin's `-i`: only this client. */
  clientId?: string;
}

/** mqadmin's `-f <force>`: Nimbus always resets, as mqadmin's default `true`. */
const force = () => new Option("-f, --force <bool>", "mqadmin's force: Nimbus always resets (true)").choices(["true"]);

/**
 * mqadmin's `-s`: ms since the epoch, `yyyy-MM-dd#HH:mm:ss:SSS` (local time), `now` or `first`.
 *
 * @example
 * parseResetTime("2026-11-30#12:00:00:000"); // local noon, in ms
 */
export function parseResetTime(value: string): number | "now" | "first" {
  if (value === "now" || value === "first") return value;
  if (/^\d{1,16}$/.test(value)) return Number(value);
  const m = /^(\d{4})-(\d{2})-(\d{2})#(\d{2}):(\d{2}):(\d{2}):(\d{3})$/.exec(value);
  if (m) {
    const [y, mo, d, h, mi, s, ms] = m.slice(1).map(Number) as [number, number, number, number, number, number, number];
    const date = new Date(y, mo - 1, d, h, mi, s, ms);
    if (date.getMonth() === mo - 1 && date.getDate() === d && h < 24 && mi < 60 && s < 60) return date.getTime();
  }
  throw new InvalidArgumentError("expected ms since the epoch, yyyy-MM-dd#HH:mm:ss:SSS, now or first");
}

const ONE_QUEUE = "Nimbus resets every queue of the topic by time (-s); one message: queryMsgByOffset -t -b -i -o";

export function addGroupAdminCommands(program: Command): void {
  const reset = apiCommand(
    program,
    "resetOffsetByTime",
    "move a group's offsets of a topic to the first message stored at or after a time (live consumers follow)",
  )
    .requiredOption("-g, --groupName <group>", "consumer group")
    .requiredOption("-t, --topic <topic>", "topic")
    .requiredOption(
      "-s, --timestamp <time>",
      "ms since the epoch, yyyy-MM-dd#HH:mm:ss:SSS (local time), now or first",
      parseResetTime,
    )
    .addOption(force());
  refuseOptions(reset, [
    { flags: "-b, --broker <name>", hint: ONE_QUEUE },
    { flags: "-q, --queue <id>", hint: ONE_QUEUE },
    { flags: "-o, --offset <offset>", hint: ONE_QUEUE },
    { flags: "-c, --cplus", hint: "every Nimbus client follows a reset; the reset is stage-wide (no cluster)" },
  ]).action(resetOffsetByTime);

  clusterOption(
    apiCommand(
      program,
      "skipAccumulatedMessage",
      "move a group's offsets of a topic to the end (resetOffsetByTime -s now)",
    )
      .requiredOption("-g, --groupName <group>", "consumer group")
      .requiredOption("-t, --topic <topic>", "topic")
      .addOption(force()),
    "checked; the offsets are stage-wide",
  ).action((opts: Omit<ResetOptions, "timestamp">) => resetOffsetByTime({ ...opts, timestamp: "now" }));

  refuseOptions(
    apiCommand(program, "consumerStatus", "per live member: queues, locks, cached messages, last pull and consume")
      .requiredOption("-g, --groupName <group>", "consumer group")
      .option("-i, --clientId <id>", "only this client"),
    [
      { flags: "-b, --brokerAddr <addr>", hint: STAGE_WIDE_BROKER },
      {
        flags: "-s, --jstack",
        hint: "Nimbus's clients are not JVMs: consumerStatus shows each one's queues and caches",
      },
    ],
  ).action(consumerStatus);
}

async function resetOffsetByTime(opts: ResetOptions): Promise<void> {
  const reset = await connect(opts).resetOffsetByTime(opts.groupName, opts.topic, opts.timestamp);
  if (opts.json) return printJson(reset);
  print(
    formatTable(
      [{ header: "Broker Name" }, { header: "QID", align: "right" }, { header: "Offset", align: "right" }],
      reset.offsetTable.map((e) => [e.brokerName, e.queueId, e.offset]),
    ),
  );
  note(`group ${opts.groupName} reset on ${opts.topic}; live consumers move there at their next membership read`);
}

async function consumerStatus(opts: StatusOptions): Promise<void> {
  const all = await connect(opts).consumerStatus(opts.groupName);
  const members = opts.clientId === undefined ? all : all.filter((m) => m.clientId === opts.clientId);
  if (opts.json) return printJson({ group: opts.groupName, consumers: members });
  const rows = members.flatMap((m) => {
    const queues = m.runningInfo?.queues ?? [];
    if (queues.length === 0) return [[m.clientId, "-", "-", "-", "-", "-", "-", "-", "-"]];
    return queues.map((q) => [
      m.clientId,
      `${q.topic}/${q.brokerName}/${q.queueId}`,
      m.runningInfo?.consumeOrderly ? (q.locked ? "yes" : "no") : "-",
      q.cachedMsgCount,
      q.cachedMsgSize,
      q.consumeOffset,
      formatTime(q.lastPullTimestamp),
      formatTime(q.lastConsumeTimestamp),
      formatTime(m.lastHeartbeat),
    ]);
  });
  print(
    formatTable(
      [
        { header: "ClientId" },
        { header: "Queue" },
        { header: "Locked" },
        { header: "Cached Msgs", align: "right" },
        { header: "Cached Bytes", align: "right" },
        { header: "Consume Offset", align: "right" },
        { header: "Last Pull" },
        { header: "Last Consume" },
        { header: "Reported" },
      ],
      rows,
    ),
  );
  if (members.length === 0)
    note(`group ${opts.groupName} has no live consumer${opts.clientId === undefined ? "" : ` ${opts.clientId}`}`);
  for (const m of members) {
    if (!m.subscriptionConsistent)
      note(`${m.clientId}: its subscription differs from the group's (${JSON.stringify(m.subscriptionDataSet)})`);
    if (m.runningInfo === undefined) note(`${m.clientId}: reports no status (an older client, or not a push consumer)`);
  }
}
