/**
 * @module mqadmin's consumer-group commands: `consumerProgress` (per queue: broker offset, the group's
 * committed offset, the diff; without `-g`, every group with its member count and total diff, as mqadmin prints
 * them) and `consumerConnection` (the group's live consumers).
 */
import type { Command } from "commander";
import type { NimbusApi } from "../client/transport/index.js";
import type { GroupSummary, ProgressRow } from "../protocol/index.js";
import { type ApiOptions, apiCommand, connect, usage } from "./common.js";
import { clusterBrokers, clusterOption, refuseOptions, STAGE_WIDE_BROKER } from "./mqadmin-compat.js";
import { formatTable, formatTime, note, print, printJson } from "./output.js";

interface ProgressOptions extends ApiOptions {
  /** Absent: every group (mqadmin's consumerProgress without -g). */
  groupName?: string;
  topic?: string;
  clusterName?: string;
  /** mqadmin's `-s`: the client holding each queue (its last committer), as RocketMQ's Client IP column. */
  showClientIP?: boolean;
}

interface ConnectionOptions extends ApiOptions {
  groupName: string;
}

/** Pages of groups `consumerProgress` without -g reads at most (100 groups each). */
const MAX_GROUP_PAGES = 100;

export function addConsumerCommands(program: Command): void {
  clusterOption(
    apiCommand(program, "consumerProgress", "show a group's progress per queue: broker offset, consumer offset, diff")
      .option("-g, --groupName <group>", "consumer group (default: every group, one line each)")
      .option("-t, --topic <topic>", "only this topic (default: every topic the group has offsets for)")
      .option("-s, --showClientIP", "show the client holding each queue (the last to commit its offset)"),
    "only the queues of this cluster's brokers",
  ).action(consumerProgress);

  refuseOptions(
    apiCommand(program, "consumerConnection", "list a group's live consumers and their subscriptions").requiredOption(
      "-g, --groupName <group>",
      "consumer group",
    ),
    [{ flags: "-b, --brokerAddr <addr>", hint: STAGE_WIDE_BROKER }],
  ).action(consumerConnection);
}

async function consumerProgress(opts: ProgressOptions, cmd: Command): Promise<void> {
  if (opts.groupName === undefined) {
    if (opts.topic !== undefined || opts.showClientIP) usage(cmd, "-t and -s need -g <group>");
    return everyGroup(opts);
  }
  const group = opts.groupName;
  const api = connect(opts);
  const all = await api.progress(group, opts.topic);
  const inCluster = opts.clusterName === undefined ? undefined : new Set(await clusterBrokers(api, opts.clusterName));
  const rows = inCluster === undefined ? all : all.filter((r) => inCluster.has(r.brokerName));
  const clients = opts.showClientIP ? await holders(api, group, rows) : undefined;
  if (opts.json) {
    const withClients =
      clients === undefined ? rows : rows.map((r) => ({ ...r, clientId: clients.get(queueKey(r)) ?? "" }));
    return printJson({ group: group, rows: withClients });
  }
  const diffTotal = rows.reduce((sum, r) => sum + r.diff, 0);
  const clientColumn = clients === undefined ? [] : [{ header: "Client IP" }];
  print(
    formatTable(
      [
        { header: "Topic" },
        { header: "Group" },
        { header: "Broker Name" },
        { header: "QID", align: "right" },
        { header: "Broker Offset", align: "right" },
        { header: "Consumer Offset", align: "right" },
        ...clientColumn,
        { header: "Diff", align: "right" },
        { header: "LastTime", align: "left" },
      ],
      rows.map((r) => [
        r.topic,
        group,
        r.brokerName,
        r.queueId,
        r.brokerOffset,
        r.consumerOffset,
        ...(clients === undefined ? [] : [clients.get(queueKey(r)) || "N/A"]),
        r.diff,
        formatTime(r.lastTimestamp),
      ]),
    ),
  );
  print(`\nDiff Total: ${diffTotal}\n`);
  if (rows.length === 0) note(`group ${group} has no committed offsets${opts.topic ? ` on ${opts.topic}` : ""}`);
}

/** mqadmin's consumerProgress without -g: one line per group (the API's pages, at most 100 pages of 100). */
async function everyGroup(opts: ProgressOptions): Promise<void> {
  const api = connect(opts);
  const groups: GroupSummary[] = [];
  let startAfter: string | undefined;
  for (let page = 0; page < MAX_GROUP_PAGES; page++) {
    const answer = await api.listGroups(startAfter === undefined ? {} : { startAfter });
    groups.push(...answer.groups);
    startAfter = answer.nextStartAfter;
    if (startAfter === undefined) break;
  }
  if (opts.json) return printJson({ groups });
  // As mqadmin: most members first, then the largest diff.
  const sorted = [...groups].sort((a, b) => b.memberCount - a.memberCount || b.totalLag - a.totalLag);
  print(
    formatTable(
      [
        { header: "Group" },
        { header: "Count", align: "right" },
        { header: "Model" },
        { header: "Diff Total", align: "right" },
      ],
      sorted.map((g) => [g.group, g.memberCount, g.memberCount === 0 ? "OFFLINE" : g.messageModel, g.totalLag]),
    ),
  );
  if (groups.length === 0)
    note("no consumer group yet: a group appears with its first commit, heartbeat or updateSubGroup");
  if (startAfter !== undefined) note(`more than ${groups.length} groups: the first ${groups.length} shown`);
}

const queueKey = (q: { topic: string; brokerName: string; queueId: number }) =>
  `${q.topic}/${q.brokerName}/${q.queueId}`;

/** Who holds each queue of the rows: its offset record's last committer, one read per topic. */
async function holders(api: NimbusApi, group: string, rows: readonly ProgressRow[]): Promise<Map<string, string>> {
  const held = new Map<string, string>();
  for (const topic of new Set(rows.map((r) => r.topic))) {
    for (const q of await api.queueOwners(group, topic)) {
      if (!q.released) held.set(queueKey({ topic, ...q }), q.owner);
    }
  }
  return held;
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
