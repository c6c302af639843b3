/**
 * @module mqadmin's consumer-group commands: `consumerProgress` (per queue: broker offset, the group's
 * committed offset, the diff) and `consumerConnection` (the group's live consumers).
 */
import type { Command } from "commander";
import { type ApiOptions, apiCommand, connect } from "./common.js";
import { formatTable, formatTime, note, print, printJson } from "./output.js";

interface ProgressOptions extends ApiOptions {
  groupName: string;
  topic?: string;
}

interface ConnectionOptions extends ApiOptions {
  groupName: string;
}

export function addConsumerCommands(program: Command): void {
  apiCommand(program, "consumerProgress", "show a group's progress per queue: broker offset, consumer offset, diff")
    .requiredOption("-g, --groupName <group>", "consumer group")
    .option("-t, --topic <topic>", "only this topic (default: every topic the group has offsets for)")
    .action(consumerProgress);

  apiCommand(program, "consumerConnection", "list a group's live consumers and their subscriptions")
    .requiredOption("-g, --groupName <group>", "consumer group")
    .action(consumerConnection);
}

async function consumerProgress(opts: ProgressOptions): Promise<void> {
  const rows = await connect(opts).progress(opts.groupName, opts.topic);
  if (opts.json) return printJson({ group: opts.groupName, rows });
  const diffTotal = rows.reduce((sum, r) => sum + r.diff, 0);
  print(
    formatTable(
      [
        { header: "Topic" },
        { header: "Group" },
        { header: "Broker Name" },
        { header: "QID", align: "right" },
        { header: "Broker Offset", align: "right" },
        { header: "Consumer Offset", align: "right" },
        { header: "Diff", align: "right" },
        { header: "LastTime", align: "left" },
      ],
      rows.map((r) => [
        r.topic,
        opts.groupName,
        r.brokerName,
        r.queueId,
        r.brokerOffset,
        r.consumerOffset,
        r.diff,
        formatTime(r.lastTimestamp),
      ]),
    ),
  );
  print(`\nDiff Total: ${diffTotal}\n`);
  if (rows.length === 0)
    note(`group ${opts.groupName} has no committed offsets${opts.topic ? ` on ${opts.topic}` : ""}`);
}

async function consumerConnection(opts: ConnectionOptions): Promise<void> {
  const api = connect(opts);
  const answer = await api.consumerConnection(opts.groupName);
  if (opts.json) return printJson(answer);
  const consumers = answer.consumers;
  print(
    formatTable(
      [
        { header: "ClientId" },
        { header: "Message Model" },
        { header: "Consume Type" },
        { header: "Consume From" },
        { header: "Subscriptions" },
        { header: "Last Heartbeat" },
      ],
      consumers.map((c) => [
        c.clientId,
        c.messageModel,
        c.consumeType,
        c.consumeFromWhere.replace(/^CONSUME_FROM_/, ""),
        c.subscriptionDataSet
          .map((s) => `${s.topic}(${s.expressionType === "SQL92" ? "SQL92: " : ""}${s.subString})`)
          .join(" "),
        formatTime(c.lastHeartbeat),
      ]),
    ),
  );
  if (consumers.length === 0) note(`group ${opts.groupName} has no live consumer`);
  for (const c of consumers) {
    if (!c.subscriptionConsistent)
      note(`${c.clientId}: its subscription differs from the group's (RocketMQ requires one per group)`);
  }
}
