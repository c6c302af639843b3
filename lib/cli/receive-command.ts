/**
 * @module `nimbus receive`: POP consumption from the command line (docs/pop.md). Receives batches of a topic
 * for a group, prints each message (one line, or one JSON object per line with --json) and acks the batch,
 * until `--count` messages, a receive that found nothing after `--wait` seconds, or Ctrl-C. `--no-ack` leaves
 * them unacked: they come back after `--invisible` seconds, with deliveryAttempt + 1.
 */
import { type Command, Option } from "commander";
import { endpoints, MAX_RECEIVE_MESSAGES, type ReceivedMessage } from "../protocol/index.js";
import { type ApiOptions, apiCommand, connect, intIn } from "./common.js";
import { type FilterOptions, filterOf } from "./filter-option.js";
import { bodyText, formatBody, note, print } from "./output.js";

interface ReceiveOptions extends ApiOptions, FilterOptions {
  groupName: string;
  topic: string;
  count?: number;
  batch: number;
  invisible: number;
  wait: number;
  /** `--no-ack` makes it false. */
  ack: boolean;
}

export function addReceiveCommand(program: Command): void {
  apiCommand(program, "receive", "receive a topic's messages for a group (POP: SimpleConsumer), print and ack them")
    .requiredOption("-g, --groupName <group>", "consumer group")
    .requiredOption("-t, --topic <topic>", "topic")
    .option("-s, --subExpression <expr>", "tag filter, e.g. 'TagA || TagB'", "*")
    .option("--sql <expr>", "an SQL92 filter over user properties instead of tags")
    .option("--count <n>", "stop after this many messages", intIn(1))
    .addOption(new Option("--batch <n>", "messages per receive").argParser(intIn(1, MAX_RECEIVE_MESSAGES)).default(16))
    .addOption(
      new Option("--invisible <seconds>", "invisible time of a received message")
        .argParser(intIn(1, 43_200))
        .default(30),
    )
    .addOption(
      new Option("--wait <seconds>", "long polling: how long a receive waits; stop after one that found nothing")
        .argParser(intIn(0, 20))
        .default(5),
    )
    .option("--no-ack", "do not ack: the messages come back after their invisible time")
    .addHelpText(
      "after",
      [
        "",
        "A new group gets what is sent from its first receive on (docs/pop.md); the group keeps its place after that.",
        "Example:",
        "  nimbus receive -g workers -t TopicTest --count 10 --invisible 60",
      ].join("\n"),
    )
    .action(receive);
}

async function receive(opts: ReceiveOptions): Promise<void> {
  const api = connect(opts, opts.wait * 1000 + 10_000);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  let received = 0;
  try {
    while (!stop.signal.aborted && (opts.count === undefined || received < opts.count)) {
      const want = Math.min(opts.batch, (opts.count ?? Number.POSITIVE_INFINITY) - received);
      const { messages } = await api.call(endpoints.receive, {
        body: {
          consumerGroup: opts.groupName,
          topic: opts.topic,
          filterExpression: filterOf(opts),
          maxMessages: want,
          invisibleDurationMs: opts.invisible * 1000,
          awaitDurationMs: opts.wait * 1000,
        },
      });
      if (messages.length === 0) break;
      for (const m of messages) print(opts.json ? `${JSON.stringify(messageJson(m))}\n` : messageLine(m));
      received += messages.length;
      if (opts.ack) {
        const acked = await api.call(endpoints.ack, {
          body: {
            consumerGroup: opts.groupName,
            topic: opts.topic,
            receiptHandles: messages.map((m) => m.receiptHandle),
          },
        });
        const refused = acked.entries.filter((e) => e.code !== "OK").length;
        if (refused > 0) note(`nimbus: ${refused} acks refused (INVALID_RECEIPT_HANDLE): those messages come back`);
      }
    }
  } finally {
    process.removeListener("SIGINT", onSignal);
  }
  note(
    `received ${received} message${received === 1 ? "" : "s"} of ${opts.topic} as group ${opts.groupName}${opts.ack ? ", acked" : ", not acked"}`,
  );
}

function messageJson(m: ReceivedMessage): Record<string, unknown> {
  return { ...m, body: Buffer.from(m.body).toString("base64"), bodyText: bodyText(m.body) };
}

/** `broker-a/0 offset=3 attempt=1 tags=TagA msgId=... body=Hello`. */
function messageLine(m: ReceivedMessage): string {
  const parts = [`${m.brokerName}/${m.queueId}`, `offset=${m.queueOffset}`, `attempt=${m.deliveryAttempt}`];
  if (m.tags) parts.push(`tags=${m.tags}`);
  if (m.keys.length > 0) parts.push(`keys=${m.keys.join(",")}`);
  parts.push(`msgId=${m.msgId}`, `body=${formatBody(m.body, 200)}`);
  return `${parts.join(" ")}\n`;
}
