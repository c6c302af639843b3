/**
 * @module `npm run bench -- --suite plain-http`: what an application calling the HTTP/JSON API the simplest way gets
 * (the shape of an app calling it the simplest way). `nimbus dev` (its own process, its defaults: a process per core) and, in processes of their
 * own, stock clients with no tuning sending one 1 KiB JSON message per request, open loop at `--rate` (2,000/s)
 * for `--seconds` (10): Node's global `fetch` (plain-http-fetch.ts), Python's standard urllib
 * (plain_http_urllib.py: a new connection per request) and, with `--plain-clients ...,go`, Go's net/http default
 * client (plain-http-go/main.go: at most 2 idle connections kept, so bursts open new ones). Then, unless
 * `--factor 0`, the overload row: the capacity (OK answers per second to 64 closed-loop senders of
 * `--overload-client`, fetch or go), and `--factor` (2) times it offered open loop from the same client, while this
 * process probes `GET /health` every 20 ms. Per row: OK, SYSTEM_BUSY, other answers and
 * connection errors, answer times from each send's scheduled start (OK p50/p99, refusals' p99 and max, all
 * answers' p99), the client's own start lag, each side's CPU (cores, and µs per request with, at a fixed rate, the
 * cores that rate needs at those costs: cpu-budget.ts). Each row has a broker of its own, warmed up first
 * (WARM_UP_SENDS from this process). `--auth`: `nimbus dev --auth`, every request signed
 * (the fetch client only). `--flush sync|async`.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type NimbusCredentials, signNimbusRequest } from "../../lib/core/request-signing.js";
import { type BrokerProcess, startBrokerProcess } from "./broker-process.js";
import { type CpuBudget, cpuBudget, describeCpuBudget } from "./cpu-budget.js";
import { percentile } from "./stats.js";

export interface PlainHttpOptions {
  rate: number;
  seconds: number;
  clients: readonly PlainClient[];
  flush: "async" | "sync";
  /** `nimbus dev --auth`, every request signed. */
  auth: boolean;
  /** The overload row offers this multiple of the measured capacity (0: no such row). */
  factor: number;
  workers?: number | undefined;
  /** The client of the overload row: its capacity measure and its open loop at `factor` × that. */
  overloadClient: "fetch" | "go";
  /** The Go client's pool (`--go-pool`): 0 its default transport, n > 0 at most n connections, all kept alive. */
  goPool: number;
}

export type PlainClient = "fetch" | "urllib" | "go";

export const isPlainClient = (c: string): c is PlainClient => c === "fetch" || c === "urllib" || c === "go";

export interface PlainHttpRow {
  row: string;
  offeredPerSec: number;
  offered: number;
  ok: number;
  busy: number;
  other: number;
  errors: number;
  okPerSec: number;
  okP50Ms: number;
  okP99Ms: number;
  busyP99Ms: number;
  busyMaxMs: number;
  answerP99Ms: number;
  lagP99Ms: number;
  /** All answers' p99 from the client's `fetch` call: its own start lag left out (fetch only). */
  callP99Ms: number;
  /** The slowest refusal from the client's `fetch` call (fetch only). */
  busyCallMaxMs: number;
  /** OK answers' p99 from the client's call (its own start lag left out). */
  okCallP99Ms: number;
  busyWhy: Record<string, number>;
  /** The overload row: the closed-loop capacity it offered a multiple of, and the /health probes' times. */
  capacityPerSec?: number | undefined;
  healthP99Ms?: number | undefined;
  healthMaxMs?: number | undefined;
  clientCores: number;
  brokerCores: number;
  /** Each side's CPU per request, and the cores the offered rate needs at those costs (cpu-budget.ts). */
  cpu: CpuBudget;
  load: [number, number];
}

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TOPIC = "PlainTopic";
/** Closed-loop senders measuring the capacity (as the overload suite's). */
const CAPACITY_SENDERS = 64;
/** Sends each broker serves before its row is measured (every worker's request path compiled and run). */
const WARM_UP_SENDS = 400;

export interface ClientResult {
  ok: number;
  busy: number;
  other: number;
  errors: number;
  okMs: number[];
  busyMs: number[];
  lagMs: number[];
  /** Answers' times from the client's call (the fetch client only). */
  callMs?: number[] | undefined;
  okCallMs?: number[] | undefined;
  busyCallMs?: number[] | undefined;
  /** Refusals by the reason their message names (the fetch client only). */
  busyWhy?: Record<string, number> | undefined;
  cpuSeconds: number;
  seconds: number;
}

export interface ClientRun {
  mode: "open" | "closed";
  /** Sends per second (open) or senders (closed). */
  count: number;
  seconds: number;
  credentials?: NimbusCredentials | undefined;
  /** The Go client's connections: 0 its default transport, n > 0 at most n, all kept alive (`--go-pool`). */
  goPool?: number | undefined;
}

/** Runs one stock client in a process of its own against `url` and answers what it counted. */
export function runPlainClient(client: PlainClient, url: string, topic: string, run: ClientRun): Promise<ClientResult> {
  const args = [url, topic, run.mode, String(run.count), String(run.seconds)];
  const env = {
    ...process.env,
    ...(run.credentials && {
      NIMBUS_ACCESS_KEY: run.credentials.accessKey,
      NIMBUS_SECRET_KEY: run.credentials.secretKey,
    }),
    PLAIN_HTTP_GO_POOL: String(run.goPool ?? 0),
  };
  const options = { stdio: ["ignore", "pipe", "inherit"] as ("ignore" | "pipe" | "inherit")[], env };
  const child =
    client === "fetch"
      ? spawn(process.execPath, ["--import", "tsx", path.join(HERE, "plain-http-fetch.ts"), ...args], options)
      : client === "go"
        ? spawn(goClient(), args, options)
        : spawn("python3", [path.join(HERE, "plain_http_urllib.py"), ...args], options);
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
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

let goBinary: string | undefined;

/**
 * The Go client (plain-http-go/main.go, the standard library only), built once per bench process into a temporary
 * folder (runPlainHttp builds it before any broker starts and removes it at the end): `go build` reaches for no
 * network, modules and toolchains off.
 */
function goClient(): string {
  if (goBinary !== undefined) return goBinary;
  const out = path.join(mkdtempSync(path.join(os.tmpdir(), "nimbus-bench-go-")), "plain-http-go");
  const built = spawnSync("go", ["build", "-o", out, "main.go"], {
    cwd: path.join(HERE, "plain-http-go"),
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, GOFLAGS: "-mod=readonly", GOPROXY: "off", GOTOOLCHAIN: "local" },
  });
  if (built.status !== 0) throw new Error(`go build of the Go client failed (${built.error?.message ?? built.status})`);
  goBinary = out;
  return out;
}

function removeGoClient(): void {
  if (goBinary !== undefined) rmSync(path.dirname(goBinary), { recursive: true, force: true });
  goBinary = undefined;
}

/** Probes `GET /health` every 20 ms until `stop` resolves; answers each probe's time (ms, sorted; failures: Infinity). */
async function probeHealth(url: string, stop: Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  let done = false;
  void stop.finally(() => {
    done = true;
  });
  while (!done) {
    const t0 = performance.now();
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      times.push(res.ok ? performance.now() - t0 : Number.POSITIVE_INFINITY);
    } catch {
      times.push(Number.POSITIVE_INFINITY);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return times.sort((a, b) => a - b);
}

function toRow(name: string, offeredPerSec: number, r: ClientResult, brokerCpu: number, load0: number): PlainHttpRow {
  const answers = [...r.okMs, ...r.busyMs].sort((a, b) => a - b);
  const offered = r.ok + r.busy + r.other + r.errors;
  return {
    row: name,
    offeredPerSec,
    offered,
    ok: r.ok,
    busy: r.busy,
    other: r.other,
    errors: r.errors,
    okPerSec: r.ok / r.seconds,
    okP50Ms: percentile(r.okMs, 50),
    okP99Ms: percentile(r.okMs, 99),
    busyP99Ms: percentile(r.busyMs, 99),
    busyMaxMs: r.busyMs.at(-1) ?? Number.NaN,
    answerP99Ms: percentile(answers, 99),
    lagP99Ms: percentile(r.lagMs, 99),
    callP99Ms: percentile(r.callMs ?? [], 99),
    busyCallMaxMs: r.busyCallMs?.at(-1) ?? Number.NaN,
    okCallP99Ms: percentile(r.okCallMs ?? [], 99),
    busyWhy: r.busyWhy ?? {},
    clientCores: r.cpuSeconds / r.seconds,
    brokerCores: brokerCpu / r.seconds,
    cpu: cpuBudget({
      offeredPerSec,
      requestsSent: offered,
      requestsAnswered: r.ok + r.busy + r.other,
      clientCpuSeconds: r.cpuSeconds,
      brokerCpuSeconds: brokerCpu,
      cores: os.availableParallelism(),
    }),
    load: [load0, os.loadavg()[0] ?? 0],
  };
}

/** Creates `topic` with 8 queues (`route` adds to the body), signed with `credentials` when given. */
export async function createTopic(
  brokerUrl: string,
  topic: string,
  credentials: NimbusCredentials | undefined,
  route: Record<string, unknown> = {},
): Promise<void> {
  const url = `${brokerUrl}/topics/${topic}`;
  const body = JSON.stringify({ readQueueNums: 8, writeQueueNums: 8, ...route });
  const plain = { "content-type": "application/json" };
  const headers = credentials
    ? { ...plain, ...signNimbusRequest({ method: "PUT", url, headers: plain, body, credentials }) }
    : plain;
  const created = await fetch(url, { method: "PUT", headers, body });
  if (!created.ok) throw new Error(`PUT /topics answered ${created.status}: ${await created.text()}`);
}

/** Sends WARM_UP_SENDS from this process, 8 at a time, before a row: the rows measure a broker that has served. */
async function warmUp(broker: BrokerProcess, credentials: NimbusCredentials | undefined): Promise<void> {
  const url = `${broker.url}/send`;
  const body = JSON.stringify({ topic: TOPIC, messages: [{ body: Buffer.alloc(1024, 97).toString("base64") }] });
  const plain = { "content-type": "application/json" };
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = 0; i < WARM_UP_SENDS / 8; i++) {
        const sign = credentials && signNimbusRequest({ method: "POST", url, headers: plain, body, credentials });
        const res = await fetch(url, { method: "POST", headers: { ...plain, ...sign }, body });
        await res.arrayBuffer();
      }
    }),
  );
}

/** A fresh broker (its own data folder) for `work`, stopped and removed after it. */
async function withBroker<T>(
  o: PlainHttpOptions,
  work: (b: BrokerProcess, c?: NimbusCredentials) => Promise<T>,
): Promise<T> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-bench-plain-"));
  const credentials = o.auth ? { accessKey: "root", secretKey: randomBytes(12).toString("hex") } : undefined;
  const broker = await startBrokerProcess({
    dataDir,
    flush: o.flush,
    workers: o.workers,
    rootPassword: credentials?.secretKey,
  });
  try {
    await createTopic(broker.url, TOPIC, credentials);
    await warmUp(broker, credentials);
    return await work(broker, credentials);
  } finally {
    await broker.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function runPlainHttp(o: PlainHttpOptions): Promise<PlainHttpRow[]> {
  // Built before any broker starts: the build's CPU counts in no row.
  if (o.clients.includes("go") || (o.factor > 0 && o.overloadClient === "go")) goClient();
  try {
    return await runPlainRows(o);
  } finally {
    removeGoClient();
  }
}

async function runPlainRows(o: PlainHttpOptions): Promise<PlainHttpRow[]> {
  const rows: PlainHttpRow[] = [];
  // A fresh broker per row: one client's leftovers (connections, a line) never meet the next.
  for (const client of o.clients) {
    if (client !== "fetch" && o.auth) continue; // only the fetch client signs
    rows.push(
      await withBroker(o, async (broker, credentials) => {
        const load0 = os.loadavg()[0] ?? 0;
        const cpu0 = broker.cpuSeconds();
        const run = { mode: "open" as const, count: o.rate, seconds: o.seconds, credentials, goPool: o.goPool };
        const r = await runPlainClient(client, broker.url, TOPIC, run);
        return toRow(client, o.rate, r, broker.cpuSeconds() - cpu0, load0);
      }),
    );
  }
  if (o.factor > 0) {
    rows.push(
      await withBroker(o, async (broker, credentials) => {
        const closed = {
          mode: "closed" as const,
          count: CAPACITY_SENDERS,
          seconds: o.seconds,
          credentials,
          goPool: o.goPool,
        };
        const measured = await runPlainClient(o.overloadClient, broker.url, TOPIC, closed);
        const capacity = measured.ok / measured.seconds;
        const offered = Math.max(1, Math.round(o.factor * capacity));
        const load0 = os.loadavg()[0] ?? 0;
        const cpu0 = broker.cpuSeconds();
        const run = runPlainClient(o.overloadClient, broker.url, TOPIC, {
          mode: "open",
          count: offered,
          seconds: o.seconds,
          credentials,
          goPool: o.goPool,
        });
        const [r, health] = await Promise.all([run, probeHealth(broker.url, run)]);
        return {
          ...toRow(`${o.overloadClient} at ${o.factor}× capacity`, offered, r, broker.cpuSeconds() - cpu0, load0),
          capacityPerSec: capacity,
          healthP99Ms: percentile(health, 99),
          healthMaxMs: health.at(-1) ?? Number.NaN,
        };
      }),
    );
  }
  return rows;
}

export function formatPlainHttp(o: PlainHttpOptions, rows: readonly PlainHttpRow[]): string {
  const f = (n: number | undefined, d = 0) =>
    n === undefined || Number.isNaN(n)
      ? "–"
      : n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
  const lines = [
    `stock clients, single 1 KiB JSON sends for ${o.seconds} s, nimbus dev --flush ${o.flush}${o.auth ? " --auth (signed)" : ""}`,
    "| client | offered/s | OK | OK/s | SYSTEM_BUSY | other | conn. errors | OK p50 / p99 ms | refusal p99 / max ms (max from the call) | answer p99 ms (from the call) | client lag p99 ms | client / broker cores | load |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.row} | ${f(r.offeredPerSec)} | ${f(r.ok)} (${f((100 * r.ok) / Math.max(1, r.offered), 1)} %) | ${f(r.okPerSec)} | ${f(r.busy)} | ${f(r.other)} | ${f(r.errors)} | ${f(r.okP50Ms, 1)} / ${f(r.okP99Ms, 1)} | ${f(r.busyP99Ms, 1)} / ${f(r.busyMaxMs, 1)} (${f(r.busyCallMaxMs, 1)}) | ${f(r.answerP99Ms, 1)} (${f(r.callP99Ms, 1)}) | ${f(r.lagP99Ms, 1)} | ${f(r.clientCores, 2)} / ${f(r.brokerCores, 2)} | ${f(r.load[0], 1)}–${f(r.load[1], 1)} |`,
    ),
  ];
  for (const r of rows) {
    const why = Object.entries(r.busyWhy).map(([reason, n]) => `${reason} ${f(n)}`);
    lines.push(
      `${r.row}: OK p99 from the call ${f(r.okCallP99Ms, 1)} ms; refusals by reason: ${why.length > 0 ? why.join(", ") : "none"}`,
    );
  }
  for (const r of rows) lines.push(describeCpuBudget(r.row, r.cpu, r.capacityPerSec === undefined));
  for (const r of rows) {
    if (r.capacityPerSec === undefined) continue;
    lines.push(
      `${r.row}: capacity ${f(r.capacityPerSec)} OK/s (${CAPACITY_SENDERS} closed-loop ${o.overloadClient} senders); OK ${f((100 * r.okPerSec) / r.capacityPerSec, 1)} % of it; /health p99 ${f(r.healthP99Ms, 1)} ms, max ${f(r.healthMaxMs, 1)} ms`,
    );
  }
  return lines.join("\n");
}
