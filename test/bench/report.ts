/**
 * @module Prints the benchmark's results: one readable table per storage mode and its idle-poll line.
 */

import type { CommitResult, IdlePollResult } from "./consumer-overhead.js";
import type { CaseResult, PhaseResult } from "./data-plane.js";
import { type DelayedResult, formatDelayed } from "./delayed.js";
import { GRPC_RECEIVE_BATCH, type GrpcResult } from "./grpc.js";
import type { PhaseRates } from "./meter.js";
import { formatPop, type PopBenchResult } from "./pop.js";
import type { PushBenchResult } from "./push-latency.js";

export interface ModeResult {
  mode: "local" | "aws";
  description: string;
  cases: CaseResult[];
  /** The official RocketMQ Node.js client over gRPC (one message per send), beside the HTTP cases. */
  grpc: GrpcResult;
  idlePoll: IdlePollResult;
  commit: CommitResult;
  delayed: DelayedResult;
  pop: PopBenchResult;
}

/** The columns of a phase's rates (`rateCells`), after its message and call counts in every table. */
export const RATE_HEADERS = ["msgs/s", "CPU µs/msg", "p50 ms", "p99 ms"];

const HEADERS = [
  "batch",
  "phase",
  "msgs",
  "reqs",
  ...RATE_HEADERS,
  "reads/msg",
  "writes/msg",
  "RU/msg",
  "WU/msg",
  "PUT/msg",
  "GET/msg",
  "$/M msgs",
];

/** A figure as the tables print it: "-" for none, 3 significant digits or so. */
export function fmt(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return "-";
  if (x === 0) return "0";
  if (Math.abs(x) >= 100) return x.toFixed(0);
  if (Math.abs(x) >= 1) return x.toFixed(2);
  return x.toPrecision(2);
}

function row(batch: number, name: string, p: PhaseResult): string[] {
  const m = p.perMessage;
  return [
    String(batch),
    name,
    String(p.messages),
    String(p.requests),
    ...rateCells(p),
    fmt(m.tableReads),
    fmt(m.tableWrites),
    fmt(m.readUnits),
    fmt(m.writeUnits),
    fmt(m.s3Puts),
    fmt(m.s3Gets),
    p.costPerMillionMessages.total.toFixed(2),
  ];
}

/** A phase's rates under RATE_HEADERS. */
export function rateCells(p: PhaseRates): string[] {
  return [fmt(p.msgsPerSec), fmt(p.cpuUsPerMsg), fmt(p.latency.p50Ms), fmt(p.latency.p99Ms)];
}

export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  const line = (r: string[]) => `| ${r.map((c, i) => c.padStart(widths[i] ?? 0)).join(" | ")} |`;
  const [head, ...body] = rows;
  return [line(head ?? []), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line)].join("\n");
}

export function formatMode(result: ModeResult): string {
  const rows = [HEADERS];
  for (const c of result.cases) {
    rows.push(row(c.batch, "produce", c.produce));
    rows.push(row(c.batch, `consume(${c.maxMsgNums})`, c.consume));
  }
  rows.push(row(1, "gRPC produce", result.grpc.produce));
  rows.push(row(GRPC_RECEIVE_BATCH, "gRPC receive + ack", result.grpc.receiveAck));
  const notes = result.cases.flatMap((c) => {
    const out: string[] = [];
    if (c.lostRaces > 0) out.push(`batch ${c.batch}: ${c.lostRaces} lost append races (one extra write each)`);
    if (!c.complete) out.push(`batch ${c.batch}: INCOMPLETE (errors or a message not read back; see stderr)`);
    return out;
  });
  const i = result.idlePoll;
  const idle =
    `idle poll (NO_NEW_MSG at the end offset): ${i.polls} polls, p50 ${fmt(i.latency.p50Ms)} ms, p99 ${fmt(i.latency.p99Ms)} ms, ` +
    `${fmt(i.perPoll.tableReads)} reads and ${fmt(i.perPoll.readUnits)} RU per poll, ` +
    `$${i.costPerMillionPolls.total.toFixed(3)} per million polls, ` +
    `$${i.costPerQueueHourAt1s.toFixed(5)} per queue-hour at 1 poll/s ($${(i.costPerQueueHourAt1s * 730).toFixed(2)} per queue-month), ` +
    `$${i.costPerQueueHourAt30s.toFixed(6)} per queue-hour at 1 poll/30 s` +
    (i.errors > 0 ? ` — ${i.errors} ERRORS` : "");
  const c = result.commit;
  const commit =
    `offset commit (PUT /offsets, ${c.queuesPerCommit} queues each): ${c.commits} commits, p50 ${fmt(c.latency.p50Ms)} ms, ` +
    `p99 ${fmt(c.latency.p99Ms)} ms, per commit ${fmt(c.perCommit.tableWrites)} writes (${fmt(c.perCommit.writeUnits)} WU), ` +
    `${fmt(c.perCommit.tableReads)} reads (${fmt(c.perCommit.readUnits)} RU), ` +
    `$${c.costPerMillionCommits.total.toFixed(3)} per million commits` +
    (c.errors > 0 ? ` — ${c.errors} ERRORS` : "");
  return [
    `\n## ${result.description}\n`,
    table(rows),
    ...notes.map((n) => `note: ${n}`),
    idle,
    commit,
    formatDelayed(result.delayed),
    formatPop(result.mode, result.pop),
  ].join("\n");
}

/** The push channel benchmark of one mode as a text table. */
export function formatPush(r: PushBenchResult): string {
  const ms = (x: number) => (Number.isNaN(x) ? "-" : x.toFixed(1));
  const lines = [
    `\n== push channel: ${r.mode} — ${r.description}`,
    "rate msg/s | achieved | received/sent | failed | dup | produce p50/p99 ms | end-to-end p50/p99 ms",
    ...r.rates.map(
      (x) =>
        `${x.targetPerSec} | ${x.achievedPerSec} | ${x.received}/${x.sent} | ${x.failed} | ${x.duplicates} | ${ms(x.produce.p50Ms)}/${ms(x.produce.p99Ms)} | ${ms(x.endToEnd.p50Ms)}/${ms(x.endToEnd.p99Ms)}`,
    ),
    "after idle | channel | end-to-end p50/max ms | found by hint/timer | HTTP requests while idle | table reads/writes while idle",
    ...r.idle.map(
      (x) =>
        `${x.idleSeconds} s | ${x.channel ? "on" : "off"} | ${ms(x.endToEnd.p50Ms)}/${ms(x.endToEnd.maxMs)} | ${x.foundByHint}/${x.foundByTimer} | ${x.httpRequests} | ${x.storage.tableReads}/${x.storage.tableWrites}`,
    ),
    `hints: ${r.channelNotifications} notifications (one connections query each), ${r.channelPosts} posts, ${r.coalescedAppends} appends coalesced`,
    `idle consumer of 4 queues, per period (${r.idleCost.periodMs} ms here, 10 min by default): ${r.idleCost.httpRequestsPerPeriod} HTTP requests, ` +
      `storage ${JSON.stringify(r.idleCost.storagePerPeriod)}; one ping: ${JSON.stringify(r.idleCost.storagePerPing)}`,
  ];
  return lines.join("\n");
}
