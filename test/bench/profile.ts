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
 * `--sampler perf`: Linux `perf` instead of V8's sampler (perf-record.ts): the server runs under `node
 * --perf-basic-prof`, and only its time on a core is counted (V8's sampler also charges a thread for the turns the
 * OS gave the client on a shared machine). With the Java clients it samples the measured phase only (from its START
 * line to its RESULT line: consume without the sends before it) and divides by that phase's messages; each phase
 * first runs a warm-up, not sampled: `--warmup` (5,000, as the rocketmq suite) messages of its own shape, and for the
 * push consume a second group reading every message sent.
 * See docs/benchmarks.md ("Where the time goes, per door").
 */

import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import type { NimbusCredentials } from "../../lib/core/request-signing.js";
import { type BrokerProcess, startBrokerProcess } from "./broker-process.js";
import { PERF_HZ, type PerfRecording, perfAvailable, startPerfRecord } from "./perf-record.js";
import { formatPerfByPart, perfByPart } from "./perf-samples.js";
import { createTopic, runPlainClient } from "./plain-http.js";
import {
  type CpuProfile,
  formatByPart,
  profileByPart,
  type SampleWindow,
  summarizeProfile,
} from "./profile-summary.js";
import { type PhaseFigure, runBenchClient } from "./rocketmq-suite.js";

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
    sampler: { type: "string", default: "v8" },
    warmup: { type: "string" },
  },
});
const sampler = values.sampler;
if (sampler !== "v8" && sampler !== "perf") throw new Error(`--sampler must be v8 or perf, got ${sampler}`);
/** Messages of each phase's shape run first, unmeasured: 5,000 (as the suite) when only the phase is sampled. */
const warmup = Number(values.warmup ?? (sampler === "perf" ? 5000 : 0));
if (!Number.isInteger(warmup) || warmup < 0) throw new Error(`--warmup must be a whole number, got ${values.warmup}`);
const DOORS = ["http", "grpc", "remoting"] as const;
const parsedDoor = DOORS.find((d) => d === values.door);
if (parsedDoor === undefined) throw new Error(`--door must be http, grpc or remoting, got ${values.door}`);
const door: (typeof DOORS)[number] = parsedDoor;
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

/**
 * RocketMQ's gRPC (or remoting) Java client's phase against `endpoint`; its figures, the measured phase's last.
 * `onPhaseLine` hears each phase's START and RESULT lines.
 */
async function loadJava(
  endpoint: string,
  topic: string,
  client: "grpc" | "remoting",
  onPhaseLine?: (line: "START" | "RESULT") => void,
): Promise<PhaseFigure[]> {
  const messages = Number(values.messages);
  // consume receives what the phases before it sent: send them first (async).
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
      // V8's profile spans the whole load: a wait or a warm-up before each phase would only be mixed into it.
      jitSettle: sampler === "perf",
      warmup,
    },
    client,
    undefined,
    onPhaseLine,
  );
  for (const f of figures)
    console.log(
      `${client} ${f.phase}: ${f.messages} messages, ${Math.round(f.msgPerSec)} msg/s, p50 ${f.p50Ms} ms, p99 ${f.p99Ms} ms`,
    );
  return figures;
}

/** Where the Java client of `door` connects: the gRPC endpoint, or the remoting client's name server (`host:port`). */
function javaEndpoint(broker: BrokerProcess): string {
  return door === "grpc" ? (broker.grpcEndpoint ?? "") : new URL(broker.url).host;
}

/** What `perf` recorded over the load, the span of it counted, and the messages its samples are divided by. */
interface PerfLoad {
  recording: PerfRecording;
  /** The measured phase (Java clients), or undefined: the whole recording (HTTP). */
  window: SampleWindow | undefined;
  messages: number;
}

/**
 * `perf` over the whole load (attaching takes a while: started at the phase's START line it missed most of a short
 * phase), counting with the Java clients only the measured phase's samples, from its START line to its RESULT line.
 * The samples are read once the server has stopped (`samples`).
 */
async function loadUnderPerf(broker: BrokerProcess, topic: string, file: string): Promise<PerfLoad> {
  const recording = startPerfRecord(broker.pids(), file);
  let messages: number;
  let window: SampleWindow | undefined;
  try {
    if (door === "http") messages = await loadHttp(broker.url, topic);
    else {
      const phases = phase === "consume" ? 2 : 1;
      let starts = 0;
      let fromUs: number | undefined;
      const onPhaseLine = (line: "START" | "RESULT") => {
        if (line === "START" && ++starts === phases) fromUs = monotonicUs();
        else if (line === "RESULT" && fromUs !== undefined && window === undefined)
          window = { fromUs, toUs: monotonicUs() };
      };
      const measured = (await loadJava(javaEndpoint(broker), topic, door, onPhaseLine)).at(-1);
      if (window === undefined || measured === undefined) throw new Error("the client printed no measured phase");
      messages = measured.messages;
    }
  } catch (err) {
    // The client's error is the one reported; perf is stopped before the server is.
    await recording.stop().catch(() => undefined);
    throw err;
  }
  await recording.stop();
  return { recording, window, messages };
}

async function main(): Promise<void> {
  if (sampler === "perf") {
    const why = perfAvailable();
    if (why !== undefined) throw new Error(`--sampler perf: ${why}`);
  }
  const dir = await mkdtemp(join(tmpdir(), "nimbus-profile-"));
  try {
    await profileInto(dir);
  } finally {
    // A failed run leaves nothing behind either; `KEEP_PROFILE` keeps the folder (the profiles, or perf.data).
    if (process.env.KEEP_PROFILE === undefined) await rm(dir, { recursive: true, force: true });
    else console.log(`kept in ${dir}`);
  }
}

/** Starts the server with its data and profiles in `dir`, loads it, stops it and prints the profile. */
async function profileInto(dir: string): Promise<void> {
  const broker = await startBrokerProcess({
    dataDir: join(dir, "data"),
    ...(sampler === "v8"
      ? { cpuProfileDir: join(dir, "prof") }
      : // Code that does not move keeps the address its map entry gives (V8 does not log moves to the map file).
        // `--perf-basic-prof` also opens V8's log of every isolate (each worker thread's too), by default in the
        // working directory: `--logfile` puts those files in `dir`, removed with it.
        { nodeArgs: ["--perf-basic-prof", "--no-compact-code-space", `--logfile=${join(dir, "v8.log")}`] }),
    grpc: door === "grpc",
    workers: Number(values.workers),
    rootPassword: credentials?.secretKey,
  });
  const pids = broker.pids();
  let messages = 0;
  let window = { fromUs: 0, toUs: 0 };
  let perf: PerfLoad | undefined;
  try {
    const topic = `Profile${Date.now().toString(36)}`;
    await createTopic(broker.url, topic, credentials, { brokerNames: ["broker-a"] });
    const fromUs = monotonicUs();
    const cpu0 = broker.cpuSeconds();
    if (sampler === "perf") {
      perf = await loadUnderPerf(broker, topic, join(dir, "perf.data"));
      messages = perf.messages;
    } else
      messages =
        door === "http"
          ? await loadHttp(broker.url, topic)
          : (await loadJava(javaEndpoint(broker), topic, door)).map((f) => f.messages).reduce((a, b) => a + b, 0);
    window = { fromUs, toUs: monotonicUs() };
    const cpu = broker.cpuSeconds() - cpu0;
    console.log(`server CPU (/proc, the whole load, profiler included): ${cpu.toFixed(2)} s`);
  } finally {
    await broker.stop();
    // A run that recorded nothing to read leaves no map files behind; `samples` removes them once it has read them.
    if (perf === undefined) for (const pid of pids) await rm(`/tmp/perf-${pid}.map`, { force: true });
  }
  if (perf !== undefined) {
    // Read after the server stopped: V8 holds its map files open while it runs.
    const samples = perf.recording.samples();
    const result = perfByPart(samples, PERF_HZ, perf.window);
    console.log(
      `${result.samples} perf samples at ${PERF_HZ}/s of CPU time (of ${samples.length}), ${messages} messages`,
    );
    console.log(formatPerfByPart(result, messages, 25));
    return;
  }
  const files = (await readdir(join(dir, "prof"))).filter((f) => f.endsWith(".cpuprofile"));
  if (files.length === 0) throw new Error("the server wrote no profile");
  const profiles = await Promise.all(
    files.map(async (f) => JSON.parse(await readFile(join(dir, "prof", f), "utf8")) as CpuProfile),
  );
  console.log(`${files.length} process profile(s); the load's span only (the Java client's start-up included)`);
  console.log(formatByPart(profileByPart(profiles, window), messages));
  for (const profile of profiles) console.log(`\n${summarizeProfile(profile, 15)}`);
}

main().catch((err: unknown) => {
  console.error("profile failed:", err);
  process.exitCode = 1;
});
