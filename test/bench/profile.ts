/**
 * @module `npm run bench:profile`: where a local server's CPU goes per message, door by door. Starts `nimbus dev`
 * as its own process (and its `--workers`, each) under `node --cpu-prof`, loads one door, stops the server (each
 * process writes its profile) and prints the busy µs per message by part of the path (framing, codec, door,
 * broker, store, runtime) over the load's span, then the top frames by self time.
 * - `--door http` (default): `--clients` (4) SDK producers sending one 1 KiB message per request for `--seconds` (10);
 *   with `--client fetch`, the plain-http suite's stock `fetch` client instead (its own process, open loop at `--rate`,
 *   default 1000/s): what a plain client's connections and refusals cost the broker; `--auth` signs its requests
 *   (`nimbus dev --auth`, the root user's keys).
 * - `--door grpc`: RocketMQ's official gRPC Java client 5.0.8 (test/bench/rocketmq/client), `--phase async` (64
 *   sends in flight) or `sync` or `consume` (receive 32 + ack each), `--messages` (20000) of 1 KiB.
 * - `--door remoting`: the classic remoting client 4.9.8 (test/bench/rocketmq/remoting-client), the same phases
 *   (`consume`: a push consumer pulling 32 at a time).
 * `--workers N` (default 1, so one profile holds the whole server); `KEEP_PROFILE` keeps the `.cpuprofile` files.
 * See docs/benchmarks.md ("Where the time goes, per door").
 */

import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import type { NimbusCredentials } from "../../lib/core/request-signing.js";
import { startBrokerProcess } from "./broker-process.js";
import { createTopic, runPlainClient } from "./plain-http.js";
import { type CpuProfile, formatByPart, profileByPart, summarizeProfile } from "./profile-summary.js";
import { runBenchClient } from "./rocketmq-suite.js";

const { values } = parseArgs({
  options: {
    door: { type: "string", default: "http" },
    seconds: { type: "string", default: "10" },
    clients: { type: "string", default: "4" },
    phase: { type: "string", default: "async" },
    messages: { type: "string", default: "20000" },
    workers: { type: "string", default: "1" },
    client: { type: "string", default: "sdk" },
    rate: { type: "string", default: "1000" },
    auth: { type: "boolean", default: false },
  },
});
const door = values.door;
if (door !== "http" && door !== "grpc" && door !== "remoting")
  throw new Error(`--door must be http, grpc or remoting, got ${door}`);
const PHASES = ["sync", "async", "consume"] as const;
const parsedPhase = PHASES.find((p) => p === values.phase);
if (parsedPhase === undefined) throw new Error(`--phase must be sync, async or consume, got ${values.phase}`);
const phase: (typeof PHASES)[number] = parsedPhase;

if (values.auth && (door !== "http" || values.client !== "fetch"))
  throw new Error("--auth signs the plain fetch client's requests: it needs --door http --client fetch");
/** `--auth`: the root user's keys, every request signed (`nimbus dev --auth`). */
const credentials: NimbusCredentials | undefined = values.auth
  ? { accessKey: "root", secretKey: randomBytes(12).toString("hex") }
  : undefined;

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** Sends one message per request over HTTP from `clients` SDK producers for `seconds`; the messages sent. */
async function loadHttp(url: string, topic: string): Promise<number> {
  if (values.client === "fetch") {
    const run = { mode: "open" as const, count: Number(values.rate), seconds: Number(values.seconds), credentials };
    const r = await runPlainClient("fetch", url, topic, run);
    console.log(`plain fetch at ${values.rate}/s: ${r.ok} OK, ${r.busy} SYSTEM_BUSY, ${r.errors} connection errors`);
    return r.ok;
  }
  if (values.client !== "sdk") throw new Error(`--client must be sdk or fetch, got ${values.client}`);
  const api = new NimbusApi({ endpoints: url, timeoutMs: 30_000 });
  const body = new Uint8Array(1024);
  const seconds = Number(values.seconds);
  let sent = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: Number(values.clients) }, async () => {
      while (performance.now() < deadline) {
        await api.send({ topic, messages: [{ body }] });
        sent++;
      }
    }),
  );
  console.log(`HTTP: ${sent} single-message sends in ${seconds} s (${Math.round(sent / seconds)}/s)`);
  return sent;
}

/** RocketMQ's gRPC (or remoting) Java client's phase against `endpoint`; the messages of the measured phase. */
async function loadJava(endpoint: string, topic: string, client: "grpc" | "remoting"): Promise<number> {
  const messages = Number(values.messages);
  // consume receives what the phases before it sent: send them first (async), measure the whole run.
  const phases: (typeof PHASES)[number][] = phase === "consume" ? ["async", "consume"] : [phase];
  const figures = await runBenchClient(
    endpoint,
    topic,
    `Profile${topic}`,
    {
      messages,
      rounds: 1,
      bodyBytes: 1024,
      queues: 4,
      phases,
      // The profile spans the whole load: a wait before each phase would only add idle samples to it.
      jitSettle: false,
    },
    client,
  );
  for (const f of figures)
    console.log(
      `${client} ${f.phase}: ${f.messages} messages, ${Math.round(f.msgPerSec)} msg/s, p50 ${f.p50Ms} ms, p99 ${f.p99Ms} ms`,
    );
  return figures.reduce((n, f) => n + f.messages, 0);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "nimbus-profile-"));
  const broker = await startBrokerProcess({
    dataDir: join(dir, "data"),
    cpuProfileDir: join(dir, "prof"),
    grpc: door === "grpc",
    workers: Number(values.workers),
    rootPassword: credentials?.secretKey,
  });
  let messages = 0;
  let window = { fromUs: 0, toUs: 0 };
  try {
    const topic = `Profile${Date.now().toString(36)}`;
    await createTopic(broker.url, topic, credentials, { brokerNames: ["broker-a"] });
    const fromUs = monotonicUs();
    const cpu0 = broker.cpuSeconds();
    messages =
      door === "http"
        ? await loadHttp(broker.url, topic)
        : door === "grpc"
          ? await loadJava(broker.grpcEndpoint ?? "", topic, "grpc")
          : await loadJava(new URL(broker.url).host, topic, "remoting");
    window = { fromUs, toUs: monotonicUs() };
    const cpu = broker.cpuSeconds() - cpu0;
    console.log(
      `server CPU (/proc, profiler included): ${cpu.toFixed(2)} s, ${Math.round((cpu * 1e6) / messages)} µs per message`,
    );
  } finally {
    await broker.stop();
  }
  const files = (await readdir(join(dir, "prof"))).filter((f) => f.endsWith(".cpuprofile"));
  if (files.length === 0) throw new Error("the server wrote no profile");
  const profiles = await Promise.all(
    files.map(async (f) => JSON.parse(await readFile(join(dir, "prof", f), "utf8")) as CpuProfile),
  );
  console.log(`${files.length} process profile(s); the load's span only (the Java client's start-up included)`);
  console.log(formatByPart(profileByPart(profiles, window), messages));
  for (const profile of profiles) console.log(`\n${summarizeProfile(profile, 15)}`);
  if (process.env.KEEP_PROFILE === undefined) await rm(dir, { recursive: true, force: true });
  else console.log(`profiles kept in ${dir}`);
}

main().catch((err: unknown) => {
  console.error("profile failed:", err);
  process.exitCode = 1;
});
