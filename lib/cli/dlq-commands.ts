/**
 * @module `resendDlqMsg`: sends a message of a group's dead-letter queue `%DLQ%<group>` back to the topic
 * it came from (its `RETRY_TOPIC`), as a fresh message (reconsumeTimes 0) with its msgId, body, tags, keys,
 * flag and user properties; the retry bookkeeping (RETRY_TOPIC, ORIGIN_MESSAGE_ID, RECONSUME_TIME, ...) is
 * left behind. The dead-letter copy stays where it is (a DLQ is kept like any queue, until retention).
 */
import type { Command } from "commander";
import type { PulledMessage } from "../client/transport/index.js";
import { ErrorCode, NimbusError } from "../core/errors.js";
import { MessageConst, SYSTEM_PROPERTY_NAMES } from "../core/message.js";
import { dlqTopic } from "../core/names.js";
import { type ApiOptions, apiCommand, connect, intIn, messageAt } from "./common.js";
import { formatFields, print, printJson } from "./output.js";

/** RocketMQ's MixAll.TOOLS_CONSUMER_GROUP: admin reads commit nothing. */

interface ResendOptions extends ApiOptions {
  groupName: string;
  brokerName: string;
  offset: number;
}

/** The system properties a resent message keeps: its id. Every other system property is the broker's. */
const KEPT_SYSTEM_PROPERTIES: ReadonlySet<string> = new Set([MessageConst.UNIQ_KEY]);

export function addDlqCommands(program: Command): void {
  apiCommand(program, "resendDlqMsg", "send a message of a group's dead-letter queue back to its original topic")
    .requiredOption("-g, --groupName <group>", "consumer group whose %DLQ% topic holds the message")
    .requiredOption("-b, --brokerName <broker>", "broker of the dead-letter queue")
    .requiredOption("-o, --offset <offset>", "offset of the message in the dead-letter queue", intIn(0))
    .action(resendDlqMsg);
}

async function resendDlqMsg(opts: ResendOptions): Promise<void> {
  const api = connect(opts);
  const topic = dlqTopic(opts.groupName);
  const { message: m, pulled: res } = await messageAt(api, {
    topic,
    brokerName: opts.brokerName,
    queueId: 0,
    offset: opts.offset,
  });
  if (m === undefined) {
    throw new NimbusError(
      ErrorCode.QUERY_NOT_FOUND,
      `no message at offset ${opts.offset} of ${topic} on ${opts.brokerName} (max offset ${res.maxOffset})`,
    );
  }
  const original = m.properties[MessageConst.RETRY_TOPIC];
  if (original === undefined) {
    throw new NimbusError(
      ErrorCode.MESSAGE_ILLEGAL,
      `the message at offset ${opts.offset} has no ${MessageConst.RETRY_TOPIC}`,
    );
  }
  const sent = await api.send({ topic: original, messages: [resendable(m)] });
  const where = { ...sent.messageQueue, queueOffset: sent.queueOffset };
  if (opts.json)
    return printJson({
      msgId: m.msgId,
      from: { topic, brokerName: opts.brokerName, queueOffset: opts.offset },
      to: where,
    });
  print(
    formatFields([
      ["Msg ID", m.msgId],
      ["Resent To", original],
      ["Broker Name", where.brokerName],
      ["Queue ID", where.queueId],
      ["Queue Offset", where.queueOffset],
    ]),
  );
}

/** The message as a producer would send it again: fields, its id and its user properties. */
export function resendable(m: PulledMessage) {
  const properties = Object.fromEntries(
    Object.entries(m.properties).filter(([k]) => KEPT_SYSTEM_PROPERTIES.has(k) || !SYSTEM_PROPERTY_NAMES.has(k)),
  );
  return {
    body: m.body,
    ...(m.tags === "" ? {} : { tags: m.tags }),
    ...(m.keys.length === 0 ? {} : { keys: m.keys }),
    properties,
    ...(m.flag === 0 ? {} : { flag: m.flag }),
  };
}
