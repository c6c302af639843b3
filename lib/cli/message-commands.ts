/**
 * @module The message commands: `queryMsgByOffset` (one message's fields, as mqadmin prints them) and
 * `consume` (a consumer of a group that prints each message, or shows progress, until `--count` messages,
 * `--wait` idle seconds or Ctrl-C, committing its offsets either way). `send` is in send-command.ts.
 */
import { type Command, Option } from "commander";
import type { PulledMessage } from "../client/transport/index.js";
import { ErrorCode, NimbusError } from "../core/errors.js";
import { CliConsumer } from "./cli-consumer.js";
import { type ApiOptions, apiCommand, connect, describeFailure, intIn, messageAt } from "./common.js";
import { type FilterOptions, filterOf } from "./filter-option.js";
import { refuseOptions } from "./mqadmin-compat.js";
import { bodyText, formatBody, formatFields, formatRate, formatTime, note, print, printJson } from "./output.js";
import { Progress } from "./progress.js";

/** RocketMQ's MixAll.TOOLS_CONSUMER_GROUP: the group admin tools read with (a pull commits nothing). */

interface QueryOptions extends ApiOptions {
  topic: string;
  brokerName: string;
  queueId: number;
  offset: number;
}

interface ConsumeOptions extends ApiOptions, FilterOptions {
  groupName: string;
  topic: string;
  from: "first" | "last";
  count?: number;
  wait?: number;
  quiet?: boolean;
  /** `--no-push-channel` makes it false. */
  pushChannel: boolean;
}

export function addMessageCommands(program: Command): void {
  const queryCommand = apiCommand(program, "queryMsgByOffset", "show the message at an offset of a queue")
    .requiredOption("-t, --topic <topic>", "topic")
    .requiredOption("-b, --brokerName <broker>", "broker name")
    .requiredOption("-i, --queueId <id>", "queue id", intIn(0))
    .requiredOption("-o, --offset <offset>", "queue offset", intIn(0));
  refuseOptions(queryCommand, [
    {
      flags: "-f, --bodyFormat <format>",
      hint: "a body prints as UTF-8 text or escaped bytes; --json gives it in base64",
    },
  ]).action(queryMsgByOffset);

  apiCommand(program, "consume", "consume a topic as a member of a group, printing each message")
    .requiredOption("-g, --groupName <group>", "consumer group")
    .requiredOption("-t, --topic <topic>", "topic")
    .option("-s, --subExpression <expr>", "tag filter, e.g. 'TagA || TagB'", "*")
    .addOption(
      new Option(
        "--sql <expr>",
        'SQL92 filter over message properties, e.g. "amount > 100" (docs/filters.md)',
      ).conflicts("subExpression"),
    )
    .addOption(
      new Option("--from <where>", "where a queue without a committed offset starts")
        .choices(["first", "last"])
        .default("last"),
    )
    .option("--count <n>", "stop after this many messages", intIn(1))
    .option("--wait <seconds>", "stop after this many seconds without a message (0: when caught up)", intIn(0))
    .option("-q, --quiet", "show progress instead of the messages")
    .option("--no-push-channel", "poll only: no push channel (docs/push-channel.md)")
    .addHelpText(
      "after",
      [
        "",
        "Each message prints as one line (with --json: one JSON object per line). Offsets are committed every",
        "5 s and at the end, also on Ctrl-C. Consumers of one group share the topic's queues, as in RocketMQ.",
        "",
        "Example:",
        "  nimbus consume -g g1 -t TopicTest --from first --count 5",
        `  nimbus consume -g g2 -t TopicTest --sql "amount > 100 AND region = 'eu'"`,
      ].join("\n"),
    )
    .action(consume);
}

async function queryMsgByOffset(opts: QueryOptions): Promise<void> {
  const { message: m, pulled: res } = await messageAt(connect(opts), opts);
  if (m === undefined) {
    throw new NimbusError(
      ErrorCode.QUERY_NOT_FOUND,
      `no message at offset ${opts.offset} of ${opts.topic} ${opts.brokerName} queue ${opts.queueId} (min offset ${res.minOffset}, max offset ${res.maxOffset})`,
    );
  }
  printMessage(m, opts.json === true);
}

/** One message's fields as mqadmin prints them (queryMsgByOffset, queryMsgById), or as JSON. */
export function printMessage(m: PulledMessage, json: boolean): void {
  if (json) {
    printJson(messageJson(m));
    return;
  }
  print(
    formatFields([
      ["Msg ID", m.msgId],
      ["Topic", m.topic],
      ["Broker Name", m.brokerName],
      ["Queue ID", m.queueId],
      ["Queue Offset", m.queueOffset],
      ["Tags", `[${m.tags}]`],
      ["Keys", `[${m.keys.join(", ")}]`],
      ["Properties", JSON.stringify(m.properties)],
      ["Reconsume Times", m.reconsumeTimes],
      ["Flag", m.flag],
      ["Born Timestamp", formatTime(m.bornTimestamp)],
      ["Store Timestamp", formatTime(m.storeTimestamp)],
      ["Body Size", m.body.length],
      ["Body", formatBody(m.body)],
    ]),
  );
}

/** A message for scripts: the API's fields, the body in base64 as the API sends it, and as text if it is. */
export function messageJson(m: PulledMessage): Record<string, unknown> {
  const text = bodyText(m.body);
  return {
    ...m,
    body: Buffer.from(m.body).toString("base64"),
    bodyText: text,
  };
}

/** One line per message: `broker-a/0 offset=3 tags=TagA keys=order-1 msgId=... body=Hello`. */
function messageLine(m: PulledMessage): string {
  const parts = [`${m.brokerName}/${m.queueId}`, `offset=${m.queueOffset}`];
  if (m.tags) parts.push(`tags=${m.tags}`);
  if (m.keys.length > 0) parts.push(`keys=${m.keys.join(",")}`);
  parts.push(`msgId=${m.msgId}`, `body=${formatBody(m.body, 200)}`);
  return `${parts.join(" ")}\n`;
}

async function consume(opts: ConsumeOptions): Promise<void> {
  const stop = new AbortController();
  let signals = 0;
  const onSignal = () => {
    // The first Ctrl-C stops and commits; a second one does not wait for the commit.
    if (++signals > 1) process.exit(130);
    stop.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const progress = opts.quiet
    ? new Progress({
        verb: "consumed",
        total: opts.count,
        stream: process.stderr,
      })
    : undefined;
  const consumer = new CliConsumer(connect(opts), {
    group: opts.groupName,
    topic: opts.topic,
    filter: filterOf(opts),
    from: opts.from,
    count: opts.count,
    ...(opts.wait === undefined ? {} : { idleMs: opts.wait * 1000 }),
    pushChannel: opts.pushChannel,
    signal: stop.signal,
    onMessage: (m) => {
      if (progress) progress.add(1);
      else print(opts.json ? `${JSON.stringify(messageJson(m))}\n` : messageLine(m));
    },
    onError: (err, what) => note(`nimbus: ${what}: ${describeFailure(err)}`),
  });
  const started = Date.now();
  try {
    const summary = await consumer.run();
    progress?.finish();
    const seconds = (Date.now() - started) / 1000;
    const rate = formatRate(seconds > 0 ? summary.consumed / seconds : 0);
    const messages = summary.consumed === 1 ? "1 message" : `${summary.consumed} messages`;
    const committed =
      summary.commitError === undefined
        ? "offsets committed"
        : `committing the offsets failed: ${describeFailure(summary.commitError)}`;
    note(
      `consumed ${messages} of ${opts.topic} as group ${opts.groupName} from ${summary.queues.length} queues in ${seconds.toFixed(1)} s (${rate} msg/s); ${committed}`,
    );
    if (summary.commitError !== undefined) process.exitCode = 1;
  } finally {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
  }
}
