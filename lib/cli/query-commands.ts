/**
 * @module mqadmin's message queries: `queryMsgById` and `queryMsgByUniqueKey` (`-i <id> -t <topic>`: a Nimbus
 * message id is the UNIQ_KEY, so both ask the message index for it; `queryMsgById -i <offset message id>` needs no
 * topic: the id says where its message is) and `queryMsgByKey` (`-t <topic> -k <key>
 * [-b <begin> -e <end> -c <maxNum>]`: a table of the matching messages, oldest first). docs/query.md.
 */
import { type Command, InvalidArgumentError } from "commander";
import type { NimbusApi, PulledMessage } from "../client/transport/index.js";
import { ErrorCode, isNimbusError, NimbusError } from "../core/errors.js";
import { parseOffsetMsgId } from "../core/offset-message-id.js";
import { MAX_QUERY_MESSAGES } from "../protocol/index.js";
import { type ApiOptions, apiCommand, connect, intIn } from "./common.js";
import { messageJson, printMessage } from "./message-commands.js";
import { refuseOptions } from "./mqadmin-compat.js";
import { messagesAtOffsetId } from "./offset-id-lookup.js";
import { formatTable, formatTime, note, print, printJson } from "./output.js";

interface ByIdOptions extends ApiOptions {
  msgId: string;
  topic?: string;
  showAll?: boolean;
  beginTimestamp?: number;
  endTimestamp?: number;
}

interface ByKeyOptions extends ApiOptions {
  topic: string;
  msgKey: string;
  beginTimestamp?: number;
  endTimestamp?: number;
  maxNum: number;
  cursor?: string;
}

/** A time as mqadmin takes it (ms since the epoch), or a date Date.parse reads (`2026-12-01T10:00:00Z`). */
export function timeArg(value: string): number {
  const ms = /^\d+$/.test(value.trim()) ? Number(value) : Date.parse(value);
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new InvalidArgumentError("a time in ms since the epoch, or a date such as 2026-12-01T10:00:00Z, is needed");
  }
  return ms;
}

const REFUSED_BY_ID = [
  { flags: "-g, --consumerGroup <group>", hint: "Nimbus does not push a message to one consumer: consume -g G -t T" },
  { flags: "-d, --clientId <id>", hint: "Nimbus does not push a message to one consumer: consume -g G -t T" },
  { flags: "-s, --sendMessage <bool>", hint: "to send a message again: send -t T with its body" },
  { flags: "-u, --unitName <name>", hint: "Nimbus has no units" },
  {
    flags: "-f, --bodyFormat <format>",
    hint: "a body prints as UTF-8 text or escaped bytes; --json gives it in base64",
  },
];

/** queryMsgById takes an offset message id without a topic; queryMsgByUniqueKey needs the topic. */
function addByIdCommand(program: Command, name: string, description: string, offsetIds: boolean): void {
  const cmd = apiCommand(program, name, description).requiredOption(
    "-i, --msgId <id>",
    offsetIds ? "the message id (UNIQ_KEY) a send answered, or an offset message id" : "the UNIQ_KEY a send answered",
  );
  if (offsetIds) cmd.option("-t, --topic <topic>", "topic (needed for a UNIQ_KEY)");
  else cmd.requiredOption("-t, --topic <topic>", "topic");
  cmd
    .option("-a, --showAll", "print every stored copy of the message (a message sent again keeps its id)")
    .option("--beginTimestamp <time>", "search messages stored from this time (default: near the id's birth)", timeArg)
    .option("--endTimestamp <time>", "search messages stored until this time", timeArg)
    .addHelpText(
      "after",
      [
        "",
        "A Nimbus message id is the UNIQ_KEY (RocketMQ's client id); it holds its birth time, so the index is read",
        "near it (a delayed message is stored when due: give --beginTimestamp/--endTimestamp).",
        ...(offsetIds
          ? ["An offset message id (a 4.x client's SendResult.offsetMsgId) says where its message is: no -t needed."]
          : []),
        "",
        "Example:",
        `  nimbus ${name} -i 7F00000100002A9F0000000000000000 -t TopicTest`,
      ].join("\n"),
    );
  refuseOptions(cmd, REFUSED_BY_ID).action(async (opts: ByIdOptions) => {
    const messages = await findById(connect(opts), opts);
    const shown = opts.showAll ? messages : messages.slice(0, 1);
    if (opts.json) return printJson(shown.map(messageJson));
    shown.forEach((m, i) => {
      if (i > 0) print("\n");
      printMessage(m, false);
    });
    if (!opts.showAll && messages.length > 1) note(`${messages.length} copies stored; -a prints them all`);
  });
}

/**
 * By UNIQ_KEY through the message index when the topic is named; an id that is also an offset message id is
 * then looked up there too if the index has nothing. Without a topic, only an offset message id can be found.
 */
async function findById(api: NimbusApi, opts: ByIdOptions): Promise<PulledMessage[]> {
  const offset = parseOffsetMsgId(opts.msgId);
  if (opts.topic === undefined) {
    if (offset === undefined) {
      throw new NimbusError(
        ErrorCode.PARAMETER_ILLEGAL,
        `${opts.msgId} is not an offset message id, and a message id (UNIQ_KEY) does not say where its message is: give -t <topic>`,
      );
    }
    const found = await messagesAtOffsetId(api, offset);
    if (found.length === 0) {
      throw new NimbusError(ErrorCode.QUERY_NOT_FOUND, `no message at offset message id ${opts.msgId}`);
    }
    return found;
  }
  try {
    return await api.queryMessageById({
      topic: opts.topic,
      msgId: opts.msgId,
      ...(opts.beginTimestamp === undefined ? {} : { begin: opts.beginTimestamp }),
      ...(opts.endTimestamp === undefined ? {} : { end: opts.endTimestamp }),
    });
  } catch (err) {
    if (offset === undefined || !isNimbusError(err, ErrorCode.QUERY_NOT_FOUND)) throw err;
    const found = await messagesAtOffsetId(api, offset, opts.topic);
    if (found.length === 0) throw err;
    return found;
  }
}

export function addQueryCommands(program: Command): void {
  addByIdCommand(program, "queryMsgById", "show a message by its id (UNIQ_KEY, or an offset message id)", true);
  addByIdCommand(
    program,
    "queryMsgByUniqueKey",
    "show a message by its unique key (UNIQ_KEY), from the message index",
    false,
  );

  const byKey = apiCommand(program, "queryMsgByKey", "list a topic's messages with a key, from the message index")
    .requiredOption("-t, --topic <topic>", "topic")
    .requiredOption("-k, --msgKey <key>", "message key")
    .option(
      "-b, --beginTimestamp <time>",
      "stored from this time, ms or a date (default: the retention's start)",
      timeArg,
    )
    .option("-e, --endTimestamp <time>", "stored until this time, ms or a date (default: now)", timeArg)
    .option(
      "-c, --maxNum <n>",
      `at most this many messages (1 to ${MAX_QUERY_MESSAGES})`,
      intIn(1, MAX_QUERY_MESSAGES),
      MAX_QUERY_MESSAGES,
    )
    .option("--cursor <cursor>", "continue after the previous page (the cursor it printed)")
    .addHelpText(
      "after",
      [
        "",
        "Messages print oldest first; a page that stops before the end prints the cursor of the next one.",
        "A topic with the attribute key.index=false (updateTopic -a +key.index=false) keeps no keys.",
        "",
        "Example:",
        "  nimbus queryMsgByKey -t TopicTest -k order-1 -b 2026-12-01T00:00:00Z",
      ].join("\n"),
    );
  refuseOptions(byKey, [
    { flags: "--clusterName <cluster>", hint: "a Nimbus topic's index spans all its brokers: no cluster to name" },
  ]).action(async (opts: ByKeyOptions) => {
    const page = await connect(opts).queryMessagesByKey({
      topic: opts.topic,
      key: opts.msgKey,
      maxNum: opts.maxNum,
      ...(opts.beginTimestamp === undefined ? {} : { begin: opts.beginTimestamp }),
      ...(opts.endTimestamp === undefined ? {} : { end: opts.endTimestamp }),
      ...(opts.cursor === undefined ? {} : { cursor: opts.cursor }),
    });
    if (opts.json) {
      return printJson({ messages: page.messages.map(messageJson), nextCursor: page.nextCursor ?? null });
    }
    print(keyTable(page.messages));
    if (page.nextCursor !== undefined) note(`more messages may match: --cursor ${page.nextCursor}`);
  });
}

/** mqadmin's `#Message ID #QID #Offset`, with the broker and store time a Nimbus topic spans. */
function keyTable(messages: readonly PulledMessage[]): string {
  return formatTable(
    [{ header: "Message ID" }, { header: "Broker" }, { header: "QID" }, { header: "Offset" }, { header: "Store Time" }],
    messages.map((m) => [m.msgId, m.brokerName, m.queueId, m.queueOffset, formatTime(m.storeTimestamp)]),
  );
}
