/**
 * @module `npm run bench -- --suite overload`: the local broker at and past its capacity. `nimbus
 * dev` runs as its own process on a fresh embedded store (`--flush sync` by default); JSON single sends of 1
 * KiB come from another process over plain HTTP (no SDK retry: every raw answer counts), and `/health` is
 * probed from a third. First `--senders` (64) closed-loop senders measure the capacity (OK answers per
 * second); then each `--factors` multiple of it (default 2) is offered open-loop from `--connections` (256).
 * Every acked send is read back (at its offset, once). See docs/benchmarks/http-clients.md ("Local overload").
 */
import { createTopic } from "./data-plane.js";
import {
  benchBroker,
  formatReadBack,
  type PhaseRun,
  type ReadBack,
  readBack,
  runLoadProcesses,
} from "./load-phases.js";
import type { Ack, AnswerTally } from "./load-process.js";
import { table } from "./report.js";
import { round } from "./stats.js";

export interface OverloadOptions {
  flush: "async" | "sync";
  seconds: number;
  warmupSeconds: number;
  senders: number;
  connections: number;
  factors: number[];
  healthIntervalMs: number;
  bodyBytes: number;
  queues: number;
}

export interface OverloadRow {
  phase: string;
  offeredPerSec: number;
  sends: AnswerTally;
  health: AnswerTally;
  brokerCpuPercent: number;
  generatorCpuPercent: number;
  load: [number, number];
}

export interface OverloadResult {
  capacityPerSec: number;
  rows: OverloadRow[];
  readBack: ReadBack;
  goals: Record<string, boolean>;
}

function row(phase: string, offeredPerSec: number, run: PhaseRun): { row: OverloadRow; acks: Ack[] } {
  const [sends, health] = run.results;
  if (!sends?.tally || !health?.tally) throw new Error("a load process gave no tally");
  return {
    row: {
      phase,
      offeredPerSec: round(offeredPerSec, 0),
      sends: sends.tally,
      health: health.tally,
      brokerCpuPercent: run.brokerCpuPercent,
      generatorCpuPercent: round((sends.tally.cpuSeconds / sends.tally.seconds) * 100, 0),
      load: run.load,
    },
    acks: sends.acks ?? [],
  };
}

export async function runOverload(o: OverloadOptions, runId: string): Promise<OverloadResult> {
  const b = await benchBroker(o.flush);
  try {
    const url = b.broker.url;
    const topic = `Overload${runId}`;
    await createTopic({ url }, topic, o.queues);
    const common = { url, topic, bodyBytes: o.bodyBytes };
    const probe = (seconds: number) => ({ kind: "health" as const, url, seconds, intervalMs: o.healthIntervalMs });
    const acks: Ack[] = [];
    const closed = await runLoadProcesses(b, [
      { ...common, kind: "closed", senders: o.senders, seconds: o.seconds, warmupSeconds: o.warmupSeconds },
      probe(o.seconds + o.warmupSeconds),
    ]);
    const first = row(`closed, ${o.senders} senders`, Number.NaN, closed);
    const capacityPerSec = first.row.sends.ok / first.row.sends.seconds;
    const rows = [first.row];
    acks.push(...first.acks);
    console.error(`bench overload: capacity ${round(capacityPerSec, 0)} OK sends/s (${o.senders} closed-loop senders)`);
    for (const factor of o.factors) {
      const rate = capacityPerSec * factor;
      const open = await runLoadProcesses(b, [
        { ...common, kind: "open", rate, connections: o.connections, seconds: o.seconds },
        probe(o.seconds),
      ]);
      const r = row(`open ${factor}×, ${o.connections} connections`, rate, open);
      rows.push(r.row);
      acks.push(...r.acks);
      console.error(
        `bench overload: ${factor}× offered ${round(rate, 0)}/s: ${r.row.sends.ok} OK, ${r.row.sends.busy} busy`,
      );
    }
    const back = await readBack(url, topic, o.queues, acks);
    const over = rows.filter((r) => r.phase.startsWith("open 2×"));
    const goals = {
      "p99 of all answers <= 250 ms at 2x": over.length > 0 && over.every((r) => r.sends.all.p99Ms <= 250),
      "OK answers >= 70 % of capacity at 2x":
        over.length > 0 && over.every((r) => r.sends.ok / r.sends.seconds >= 0.7 * capacityPerSec),
      "/health p99 <= 250 ms at 2x": over.length > 0 && over.every((r) => r.health.all.p99Ms <= 250),
      "nothing acked lost": back.ok,
    };
    return { capacityPerSec: round(capacityPerSec, 0), rows, readBack: back, goals };
  } finally {
    await b.close();
  }
}

const f = (x: number) => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x.toFixed(1)) : "-");

export function formatOverload(r: OverloadResult, o: OverloadOptions): string {
  const rows = [
    [
      "phase",
      "offered/s",
      "OK/s",
      "SYSTEM_BUSY/s",
      "other/none",
      "p50 / p99 ms (all)",
      "on-wire p99 ms",
      "OK p99 ms",
      "busy p99 ms",
      "/health p99 ms",
      "broker CPU",
      "generator CPU",
      "load",
    ],
    ...r.rows.map((x) => [
      x.phase,
      f(x.offeredPerSec),
      f(x.sends.ok / x.sends.seconds),
      f(x.sends.busy / x.sends.seconds),
      `${x.sends.otherAnswers}/${x.sends.noAnswer}`,
      `${f(x.sends.all.p50Ms)} / ${f(x.sends.all.p99Ms)}`,
      f(x.sends.onWire.p99Ms),
      f(x.sends.okLatency.p99Ms),
      f(x.sends.busyLatency.p99Ms),
      f(x.health.all.p99Ms),
      `${x.brokerCpuPercent} %`,
      `${x.generatorCpuPercent} %`,
      `${x.load[0].toFixed(1)}→${x.load[1].toFixed(1)}`,
    ]),
  ];
  const samples = r.rows.flatMap((x) => x.sends.samples.map((s) => `note (${x.phase}): ${s}`));
  return [
    `\n## Local overload: nimbus dev (--flush ${o.flush}) in its own process, JSON single sends of ${o.bodyBytes} B, ${o.seconds} s per phase\n`,
    `capacity: ${r.capacityPerSec} OK sends/s from ${o.senders} closed-loop senders; answer times from each send's ` +
      "scheduled start (waits for one of the connections included); on-wire: from when it went out on a connection",
    table(rows),
    ...samples,
    formatReadBack(r.readBack),
    ...Object.entries(r.goals).map(([goal, met]) => `goal ${met ? "met" : "MISSED"}: ${goal}`),
  ].join("\n");
}
