/**
 * @module `npm run bench -- --suite json-rate`: single sends at a fixed offered rate (`--rate`, default
 * 2,000 msg/s) end to end against `nimbus dev` in its own process. The load is another
 * process running peer-phases.ts's end-to-end phase twice, each on a fresh one-queue topic: through the
 * SDK's JSON transport with no retries (`json`: a plain JSON client), then through the SDK as an application
 * uses it (`sdk`: binary batches, shed retries). Each consumer reads every message back (once each).
 */
import { createTopic } from "./data-plane.js";
import { benchBroker, runLoadProcesses } from "./load-phases.js";
import type { EndToEndResult } from "./peer-phases.js";
import { table } from "./report.js";

export interface JsonRateOptions {
  flush: "async" | "sync";
  rate: number;
  seconds: number;
  bodyBytes: number;
}

export interface JsonRateRow {
  via: "json" | "sdk";
  e2e: EndToEndResult;
  brokerCpuPercent: number;
  load: [number, number];
}

export async function runJsonRate(o: JsonRateOptions, runId: string): Promise<JsonRateRow[]> {
  const b = await benchBroker(o.flush);
  try {
    const url = b.broker.url;
    const rows: JsonRateRow[] = [];
    for (const via of ["json", "sdk"] as const) {
      const topic = `JsonRate${runId}${via}`;
      await createTopic({ url }, topic, 1);
      await createTopic({ url }, `${topic}Warm`, 1);
      const run = await runLoadProcesses(b, [
        { kind: "e2e", url, topic, via, rate: o.rate, seconds: o.seconds, bodyBytes: o.bodyBytes },
      ]);
      const e2e = run.results[0]?.e2e;
      if (e2e === undefined) throw new Error("the load process gave no end-to-end result");
      rows.push({ via, e2e, brokerCpuPercent: run.brokerCpuPercent, load: run.load });
      console.error(`bench json-rate ${via}: ${e2e.received}/${e2e.sent} back, e2e p99 ${e2e.latency.p99Ms} ms`);
    }
    return rows;
  } finally {
    await b.close();
  }
}

const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "-");

export function formatJsonRate(rows: readonly JsonRateRow[], o: JsonRateOptions): string {
  const lines = [
    [
      "path",
      "offered/s",
      "sent/s",
      "received/s",
      "back/sent",
      "errors",
      "strays",
      "send p50 / p99 ms",
      "end-to-end p50 / p99 ms",
      "sustained",
      "broker CPU",
      "load",
    ],
    ...rows.map((r) => [
      r.via === "json" ? "JSON (no retries)" : "SDK (binary, retries)",
      String(r.e2e.offeredPerSec),
      String(r.e2e.sentPerSec),
      String(r.e2e.receivedPerSec),
      `${r.e2e.received}/${r.e2e.sent}`,
      String(r.e2e.sendErrors),
      String(r.e2e.strays),
      `${ms(r.e2e.sendLatency.p50Ms)} / ${ms(r.e2e.sendLatency.p99Ms)}`,
      `${ms(r.e2e.latency.p50Ms)} / ${ms(r.e2e.latency.p99Ms)}`,
      r.e2e.sustained ? "yes" : "NO",
      `${r.brokerCpuPercent} %`,
      `${r.load[0].toFixed(1)}→${r.load[1].toFixed(1)}`,
    ]),
  ];
  const json = rows.find((r) => r.via === "json");
  const sdk = rows.find((r) => r.via === "sdk");
  const goal = (met: boolean, what: string) => `goal ${met ? "met" : "MISSED"}: ${what}`;
  return [
    `\n## Single sends at ${o.rate} msg/s for ${o.seconds} s, nimbus dev (--flush ${o.flush}) in its own process, ${o.bodyBytes} B\n`,
    table(lines),
    goal(json?.e2e.sustained === true, `JSON single sends at ${o.rate}/s sustained, every message back once`),
    goal((json?.e2e.latency.p99Ms ?? Number.NaN) <= 50, "JSON end-to-end p99 <= 50 ms"),
    goal((sdk?.e2e.sendLatency.p99Ms ?? Number.NaN) <= 10, "SDK send p99 <= 10 ms (quiet machine)"),
  ].join("\n");
}
