/**
 * @module `nimbus send`: one message (`--body`, `--file`), or many (`--count N`, with `--size B` for
 * generated bodies) sent in batches by a few concurrent requests, with progress and a final rate line.
 */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { topicRouteData2TopicPublishInfo } from "../client/producer/index.js";
import type { NimbusApi, SendMessage, SendRequest } from "../client/transport/index.js";
import { isUnreachable } from "../client/transport/index.js";
import { ErrorCode, isNimbusError } from "../core/errors.js";
import { sleep } from "../core/sleep.js";
import { MAX_BATCH_MESSAGES } from "../protocol/index.js";
import { type ApiOptions, apiCommand, byteSize, collect, connect, intIn, usage } from "./common.js";
import { refuseOptions } from "./mqadmin-compat.js";
import { formatBytes, formatRate, formatTable, note, print, printJson } from "./output.js";
import { Progress } from "./progress.js";

interface SendOptions extends ApiOptions {
  topic: string;
  brokerName?: string;
  queueId?: number;
  tags?: string;
  keys?: string;
  property?: string[];
  body?: string;
  file?: string;
  size?: number;
  count: number;
  batch: number;
  concurrency: number;
}

/** A batch stays well under the API's 4 MiB per batch and 6 MB per request (bodies travel as base64). */
const MAX_BATCH_BYTES = 3 * 1024 * 1024;
/** Attempts of a batch the API answered SYSTEM_BUSY / SERVICE_NOT_AVAILABLE (throttled, nothing written). */
const ATTEMPTS = 4;

export function addSendCommand(program: Command): void {
  const sendCommand = apiCommand(
    program,
    "send",
    "send messages: one (--body, --file) or many (--count, --size) with progress",
  )
    .alias("sendMessage")
    .requiredOption("-t, --topic <topic>", "topic (an unknown topic is auto-created unless that is turned off)")
    .option("-b, --brokerName <broker>", "send to this broker (default: the broker picks a writable queue)")
    .option("-i, --queueId <id>", "send to this queue of the broker (needs -b)", intIn(0))
    .option("-c, --tags <tags>", "the message tag, e.g. TagA")
    .option("-k, --keys <keys>", "message keys, separated by spaces or commas")
    .option("--property <key=value>", "a user property (repeatable)", collect)
    .option("-p, --body <text>", "the body, as UTF-8 text")
    .option("--file <path>", "the body, read from a file ('-' reads stdin)")
    .option("--size <bytes>", "generated bodies of this size, e.g. 128, 4k, 1m", byteSize)
    .option("--count <n>", "how many messages to send", intIn(1), 1)
    .option(
      "--batch <k>",
      `messages per request when --count > 1 (at most ${MAX_BATCH_MESSAGES})`,
      intIn(1, MAX_BATCH_MESSAGES),
      32,
    )
    .option("--concurrency <c>", "requests in flight when --count > 1", intIn(1, 256), 4)
    .addHelpText(
      "after",
      "\nExamples:\n  nimbus send -t TopicTest --tags TagA --keys order-1 --body Hello\n  nimbus sendMessage -t TopicTest -p Hello -c TagA -k order-1   (mqadmin's letters)\n  nimbus send -t TopicTest --count 100000 --size 128",
    );
  refuseOptions(sendCommand, [
    {
      flags: "-m, --msgTraceEnable <bool>",
      hint: "traces are written by SDK clients with enableMsgTrace: true (docs/trace.md); queryMsgTraceById reads them",
    },
  ]).action(send);
}

async function send(opts: SendOptions, cmd: Command): Promise<void> {
  const sources = [opts.body, opts.file, opts.size].filter((s) => s !== undefined).length;
  if (sources !== 1) usage(cmd, "send needs exactly one of --body <text>, --file <path> or --size <bytes>");
  if (opts.queueId !== undefined && opts.brokerName === undefined) usage(cmd, "-i/--queueId needs -b/--brokerName");
  const message = messageOf(opts, cmd);
  const target: Omit<SendRequest, "messages"> = {
    topic: opts.topic,
    brokerName: opts.brokerName,
    queueId: opts.queueId,
  };
  const api = connect(opts);
  const pick = await queuePicker(api, target);
  if (opts.count === 1) {
    const sent = await sendWithRetry(api, { ...target, messages: [message] }, pick);
    if (sent.topicCreated) note(topicCreatedNote(opts.topic));
    if (opts.json) return printJson(sent);
    const { brokerName, queueId } = sent.messageQueue;
    print(
      formatTable(
        [
          { header: "Broker Name" },
          { header: "QID" },
          { header: "Queue Offset" },
          { header: "Send Result" },
          { header: "MsgId" },
        ],
        [[brokerName, queueId, sent.queueOffset, sent.sendStatus, sent.msgIds[0] ?? ""]],
      ),
    );
    return;
  }
  await sendMany(api, target, message, opts, pick);
}

/** Said (on stderr) when a send created its topic: a typo in `-t` would otherwise make a new topic silently. */
const topicCreatedNote = (topic: string) =>
  `note: topic ${topic} did not exist; the broker created it (autoCreateTopicEnable). Check the name if you meant an existing topic (nimbus topicList).`;

/** Picks the next writable queue round robin, away from `avoid` when another broker has one. */
type QueuePicker = (avoid: string | undefined) => { brokerName: string; queueId: number } | undefined;

/**
 * For sends without `-b`: the topic's writable queues round robin, as the Producer picks them, so each batch
 * goes to its broker's master (with brokers at their own addresses, the name server takes no messages). A
 * topic without a route is sent as it is, for the API to auto-create it.
 */
async function queuePicker(api: NimbusApi, target: Omit<SendRequest, "messages">): Promise<QueuePicker> {
  if (target.brokerName !== undefined) return () => undefined;
  try {
    const info = topicRouteData2TopicPublishInfo(target.topic, await api.topicRoute(target.topic));
    return (avoid) => (info.ok() ? info.selectOneMessageQueue(avoid) : undefined);
  } catch (err) {
    if (isNimbusError(err, ErrorCode.TOPIC_NOT_EXIST)) return () => undefined;
    throw err;
  }
}

function messageOf(opts: SendOptions, cmd: Command): SendMessage {
  const body =
    opts.body !== undefined
      ? new TextEncoder().encode(opts.body)
      : opts.file !== undefined
        ? new Uint8Array(readFileSync(opts.file === "-" ? 0 : opts.file))
        : generatedBody(0, opts.count, opts.size ?? 1);
  const keys = (opts.keys ?? "").split(/[\s,]+/).filter((k) => k.length > 0);
  const properties: Record<string, string> = {};
  for (const p of opts.property ?? []) {
    const eq = p.indexOf("=");
    if (eq <= 0) usage(cmd, `--property wants key=value, got ${JSON.stringify(p)}`);
    properties[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return {
    body,
    tags: opts.tags,
    ...(keys.length === 0 ? {} : { keys }),
    ...(Object.keys(properties).length === 0 ? {} : { properties }),
  };
}

/** A generated body: `message 7 of 1000 ....`, cut or padded to `size` bytes, readable when consumed. */
function generatedBody(index: number, count: number, size: number): Uint8Array {
  const head = `message ${index + 1} of ${count} `;
  return new TextEncoder().encode(head.length >= size ? head.slice(0, size) : head.padEnd(size, "."));
}

interface QueueTally {
  brokerName: string;
  queueId: number;
  messages: number;
  firstOffset: number;
  lastOffset: number;
}

async function sendMany(
  api: NimbusApi,
  target: Omit<SendRequest, "messages">,
  message: SendMessage,
  opts: SendOptions,
  pick: QueuePicker,
): Promise<void> {
  const perBatch = Math.max(1, Math.min(opts.batch, Math.floor(MAX_BATCH_BYTES / Math.max(1, message.body.length))));
  if (perBatch < opts.batch)
    note(`nimbus: ${perBatch} messages per batch (bodies of ${formatBytes(message.body.length)})`);
  const progress = new Progress({ verb: "sent", total: opts.count, stream: process.stderr });
  const tallies = new Map<string, QueueTally>();
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  let next = 0;
  const worker = async () => {
    while (next < opts.count && !stop.signal.aborted) {
      const n = Math.min(perBatch, opts.count - next);
      next += n;
      const first = next - n;
      const messages = Array.from({ length: n }, (_, i) =>
        opts.size === undefined ? message : { ...message, body: generatedBody(first + i, opts.count, opts.size) },
      );
      const sent = await sendWithRetry(api, { ...target, messages }, pick);
      if (sent.topicCreated) note(topicCreatedNote(opts.topic));
      const { brokerName, queueId } = sent.messageQueue;
      const key = `${brokerName}#${queueId}`;
      const t = tallies.get(key) ?? { brokerName, queueId, messages: 0, firstOffset: sent.queueOffset, lastOffset: 0 };
      t.messages += n;
      t.firstOffset = Math.min(t.firstOffset, sent.queueOffset);
      t.lastOffset = Math.max(t.lastOffset, sent.queueOffset + n - 1);
      tallies.set(key, t);
      progress.add(n);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(opts.concurrency, Math.ceil(opts.count / perBatch)) }, worker));
  } finally {
    process.removeListener("SIGINT", onSignal);
    progress.finish();
  }
  const queues = [...tallies.values()].sort((a, b) =>
    a.brokerName === b.brokerName ? a.queueId - b.queueId : a.brokerName < b.brokerName ? -1 : 1,
  );
  const bytes = progress.count * message.body.length;
  const seconds = progress.elapsed;
  if (stop.signal.aborted) process.exitCode = 130;
  if (opts.json) {
    return printJson({
      topic: opts.topic,
      messages: progress.count,
      bytes,
      seconds,
      msgsPerSecond: progress.rate,
      interrupted: stop.signal.aborted,
      queues,
    });
  }
  print(
    formatTable(
      [
        { header: "Broker Name" },
        { header: "QID" },
        { header: "Messages" },
        { header: "First Offset" },
        { header: "Last Offset" },
      ],
      queues.map((q) => [q.brokerName, q.queueId, q.messages, q.firstOffset, q.lastOffset]),
    ),
  );
  print(
    `\n${stop.signal.aborted ? "interrupted: " : ""}sent ${progress.count} messages (${formatBytes(bytes)}) to ${opts.topic} in ${seconds.toFixed(1)} s: ${formatRate(progress.rate)} msg/s, ${formatBytes(Math.round(bytes / Math.max(seconds, 0.001)))}/s\n`,
  );
}

/** A batch, retried on a busy or unreachable broker (another broker's queue next, when there is one). */
async function sendWithRetry(api: NimbusApi, req: SendRequest, pick: QueuePicker) {
  let avoid: string | undefined;
  for (let attempt = 1; ; attempt++) {
    const queue = pick(avoid);
    try {
      return await api.send(queue === undefined ? req : { ...req, ...queue });
    } catch (err) {
      if (!isNimbusError(err) || !err.retryable || attempt >= ATTEMPTS) throw err;
      avoid = queue?.brokerName;
      if (!isUnreachable(err)) await sleep(100 * 2 ** attempt);
    }
  }
}
