/**
 * @module `npm run bench -- --suite plain-http`: what an application calling the HTTP/JSON API the simplest way gets
 * (issue 40's shape). `nimbus dev` (its own process, its defaults: a process per core) and, in processes of their
 * own, stock clients with no tuning sending one 1 KiB JSON message per request, open loop at `--rate` (2,000/s)
 * for `--seconds` (10): Node's global `fetch` (plain-http-fetch.ts) and Python's standard urllib
 * (plain_http_urllib.py: a new connection per request). Per client: OK, SYSTEM_BUSY, other answers and connection
 * errors, the OK answers' p50/p99 from their scheduled start, the client's own CPU and the broker's.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startBrokerProcess } from "./broker-process.js";
import { percentile } from "./stats.js";

export interface PlainHttpOptions {
  rate: number;
  seconds: number;
  clients: readonly PlainClient[];
  flush: "async" | "sync";
}

export type PlainClient = "fetch" | "urllib";

export interface PlainHttpRow {
  client: PlainClient;
  offered: number;
  ok: number;
  busy: number;
  other: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  clientCores: number;
  brokerCores: number;
}

const HERE = path.dirname(fileURLToPath(import.meta.url));

interface ClientResult {
  ok: number;
  busy: number;
  other: number;
  errors: number;
  latencies: number[];
  cpuSeconds: number;
}

function runClient(client: PlainClient, url: string, topic: string, o: PlainHttpOptions): Promise<ClientResult> {
  const args = [url, topic, String(o.rate), String(o.seconds)];
  const child =
    client === "fetch"
      ? spawn(process.execPath, ["--import", "tsx", path.join(HERE, "plain-http-fetch.ts"), ...args], {
          stdio: ["ignore", "pipe", "inherit"],
        })
      : spawn("python3", [path.join(HERE, "plain_http_urllib.py"), ...args], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("RESULT "));
      if (code !== 0 || line === undefined) reject(new Error(`the ${client} client exited ${code}`));
      else resolve(JSON.parse(line.slice("RESULT ".length)) as ClientResult);
    });
  });
}

export async function runPlainHttp(o: PlainHttpOptions): Promise<PlainHttpRow[]> {
  const rows: PlainHttpRow[] = [];
  for (const client of o.clients) {
    // A fresh broker per client: one client's leftovers (connections, a line) never meet the next.
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-bench-plain-"));
    const broker = await startBrokerProcess({ dataDir, flush: o.flush });
    try {
      const topic = "PlainTopic";
      const created = await fetch(`${broker.url}/topics/${topic}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ readQueueNums: 8, writeQueueNums: 8 }),
      });
      if (!created.ok) throw new Error(`PUT /topics answered ${created.status}`);
      const cpu0 = broker.cpuSeconds();
      const t0 = performance.now();
      const r = await runClient(client, broker.url, topic, o);
      const wall = (performance.now() - t0) / 1000;
      rows.push({
        client,
        offered: Math.round(o.rate * o.seconds),
        ok: r.ok,
        busy: r.busy,
        other: r.other,
        errors: r.errors,
        p50Ms: percentile(r.latencies, 50),
        p99Ms: percentile(r.latencies, 99),
        clientCores: r.cpuSeconds / wall,
        brokerCores: (broker.cpuSeconds() - cpu0) / wall,
      });
    } finally {
      await broker.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return rows;
}

export function formatPlainHttp(o: PlainHttpOptions, rows: readonly PlainHttpRow[]): string {
  const f = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
  return [
    `stock clients, open loop, ${f(o.rate)} single 1 KiB JSON sends/s for ${o.seconds} s, nimbus dev --flush ${o.flush}`,
    "| client | offered | OK | SYSTEM_BUSY | other | connection errors | OK p50 / p99 ms | client cores | broker cores |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.client} | ${f(r.offered)} | ${f(r.ok)} (${f((100 * r.ok) / Math.max(1, r.offered), 1)} %) | ${f(r.busy)} | ${f(r.other)} | ${f(r.errors)} | ${f(r.p50Ms, 1)} / ${f(r.p99Ms, 1)} | ${f(r.clientCores, 2)} | ${f(r.brokerCores, 2)} |`,
    ),
  ].join("\n");
}
