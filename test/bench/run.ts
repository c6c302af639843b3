/**
 * @module `npm run bench`: the data-plane benchmark by default (the local server on the embedded store and on the
 * AWS adapters, dynalite + s3rver in this process: produce / consume / idle-poll cases for 1 KiB messages at batch
 * sizes 1, 32 and 256 over HTTP, then gRPC, POP and delayed delivery), one table per mode and a `BENCH_JSON` line
 * with every number; `--suite <name>` runs another suite and `--push` the push channel's latency benchmark. Every
 * suite and flag: help.ts (`npm run bench -- --help`); the figures: docs/benchmarks.md.
 */
import { availableParallelism, cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";
import { DEFAULT_DYNAMO_ATTEMPTS, DEFAULT_RETRY_BACKOFF } from "../../lib/storage/aws/index.js";
import type { FlushMode } from "../../lib/storage/local/index.js";
import type { DynamoBackend } from "../support/emulators.js";
import { parseProfile } from "./aws-latency.js";
import { BENCH_FLAGS, positive, share } from "./bench-flags.js";
import { benchStorage } from "./bench-storage.js";
import { runCommits, runIdlePolls } from "./consumer-overhead.js";
import { type CaseOptions, type CaseResult, runCase } from "./data-plane.js";
import { formatDelayed, runDelayed } from "./delayed.js";
import { runGrpc } from "./grpc.js";
import { BENCH_HELP } from "./help.js";
import { formatJsonRate, runJsonRate } from "./json-rate.js";
import { formatRow, runLambdaConcurrency, TABLE_HEADER } from "./lambda-concurrency.js";
import { formatOverload, runOverload } from "./overload.js";
import { runPeerSuite } from "./peer-run.js";
import { formatPop, runPop } from "./pop.js";
import { formatPopIdle, type PopIdleResult, runPopIdle } from "./pop-idle.js";
import { type PushBenchResult, runPushLatency } from "./push-latency.js";
import { formatMode, formatPush, type ModeResult } from "./report.js";
import { runYardstickSuite } from "./run-yardsticks.js";
import { PRICES_PER_MILLION, SQS_PER_MILLION_REQUESTS } from "./stats.js";
import { formatSubscription, runSubscriptionBench, type SubscriptionBenchResult } from "./subscription.js";

const { values } = parseArgs({ options: BENCH_FLAGS, strict: true });

if (values.help === true) {
  console.log(BENCH_HELP);
  process.exit(0);
}

const quick = values.quick === true;
const settings = {
  bodyBytes: 1024,
  queues: 8,
  producers: Math.floor(positive("clients", values.clients, 4)),
  consumers: Math.floor(positive("clients", values.clients, 4)),
  produceBudgetMs: positive("seconds", values.seconds, quick ? 1.5 : 8) * 1000,
  maxMessages: Math.floor(positive("max-messages", values["max-messages"], quick ? 4096 : 100_000)),
  consumeBudgetMs: quick ? 20_000 : 60_000,
  idlePolls: Math.floor(positive("polls", values.polls, quick ? 80 : 400)),
  idleBudgetMs: 20_000,
  commits: quick ? 10 : 50,
  keys: values.keys === true,
  keyIndex: values["key-index"] !== "off",
};
if (values["key-index"] !== "on" && values["key-index"] !== "off") throw new Error("--key-index must be on or off");
const batches = (values.batches ?? "").split(",").map((b) => Math.floor(positive("batches", b, 1)));
if (batches.some((b) => b > 1024)) throw new Error("--batches: a send holds at most 1024 messages");
const modes: ("local" | "aws")[] =
  values.mode === "both" ? ["local", "aws"] : values.mode === "local" || values.mode === "aws" ? [values.mode] : [];
if (modes.length === 0) throw new Error(`--mode must be local, aws or both, got ${values.mode}`);
// The overload suite defaults to `--flush sync` (how its documented figures were measured), the others to async
// (`nimbus dev`'s default).
const flushArg = values.flush ?? (values.suite === "overload" ? "sync" : "async");
const flushes: FlushMode[] =
  flushArg === "both" ? ["async", "sync"] : flushArg === "async" || flushArg === "sync" ? [flushArg] : [];
if (flushes.length === 0) throw new Error(`--flush must be async, sync or both, got ${flushArg}`);

// Whatever happens, this process ends: a hung call would otherwise keep a CI job up.
const WATCHDOG_MS = (values.push || values.suite === "rocketmq" ? 40 : 15) * 60_000;
setTimeout(() => {
  console.error(`bench: still running after ${WATCHDOG_MS / 60_000} min, giving up`);
  process.exit(2);
}, WATCHDOG_MS).unref();

async function runMode(mode: "local" | "aws", runId: string, flush: FlushMode): Promise<ModeResult> {
  const { storage, description, cleanup } = await benchStorage(mode, runId, flush);
  let server: LocalServer | undefined;
  try {
    // Registration and retention run only when the benchmark says (between phases), never inside one.
    server = await startLocalServer({
      port: 0,
      grpcPort: 0,
      storage,
      registerIntervalMs: 3_600_000,
      retentionIntervalMs: 3_600_000,
    });
    const cases: CaseResult[] = [];
    for (const batch of batches) {
      const options: CaseOptions = { ...settings, batch };
      const result = await runCase(server, `Bench${mode}${runId}B${batch}`, options);
      console.error(
        `bench ${mode}${mode === "local" ? ` (--flush ${flush})` : ""} batch ${batch}: produced ${result.produce.messages} (${result.produce.msgsPerSec}/s), ` +
          `consumed ${result.consume.messages} (${result.consume.msgsPerSec}/s)${result.complete ? "" : " INCOMPLETE"}`,
      );
      cases.push(result);
    }
    const grpc = await runGrpc(server, `BenchGrpc${mode}${runId}`, { ...settings, batch: 1 });
    console.error(
      `bench ${mode} gRPC (official Node.js client): produced ${grpc.produce.messages} (${grpc.produce.msgsPerSec}/s), ` +
        `received + acked ${grpc.receiveAck.messages} (${grpc.receiveAck.msgsPerSec}/s)`,
    );
    const last = cases[cases.length - 1];
    if (last === undefined) throw new Error("no case ran");
    const idlePoll = await runIdlePolls(server, last.topic, last.queueEnds, settings.idlePolls, settings.idleBudgetMs);
    const perClient = Math.max(1, Math.ceil(settings.queues / settings.consumers));
    const commit = await runCommits(server, last.topic, last.queueEnds, settings.commits, perClient);
    const pop = await runPop(server, `Bench${mode}${runId}Pop`, {
      messages: quick ? 2048 : 16_384,
      batch: 32,
      clients: settings.consumers,
      queues: settings.queues,
    });
    console.error(formatPop(mode, pop));
    await server.close();
    server = undefined;
    const delayed = await runDelayed(storage, runId, {
      messages: quick ? 100 : 400,
      leadMs: 3000,
      spreadMs: quick ? 3000 : 10_000,
      pullEveryMs: 100,
      sweepIntervalMs: 500,
    });
    console.error(formatDelayed(delayed));
    return { mode, description, cases, grpc, idlePoll, commit, delayed, pop };
  } finally {
    await server?.close();
    await cleanup();
  }
}

async function main(): Promise<void> {
  const runId = Date.now().toString(36);
  const machine = {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? "unknown",
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
  if (values.suite === "peer") {
    const peer = {
      bodyBytes: settings.bodyBytes,
      seconds: positive("seconds", values.seconds, quick ? 1.5 : 8),
      rate: positive("rate", values.rate, 2000),
      e2eSeconds: positive("e2e-seconds", values["e2e-seconds"], quick ? 2 : 10),
      batch: 32,
      queues: settings.queues,
    };
    await runPeerSuite({ modes, flush: flushes[0] ?? "async", url: values.url, options: peer, runId, machine });
    return;
  }
  if (values.suite === "lambda-concurrency") {
    const options = {
      backends: values.backends.split(",") as DynamoBackend[],
      writers: values.writers.split(",").map((w) => Math.floor(positive("writers", w, 1))),
      shapes: values.shapes.split(",") as ("hot" | "topic" | "dead")[],
      seconds: positive("seconds", values.seconds, quick ? 2 : 6),
      stretch: positive("stretch", values.stretch, 1),
      dynamo: parseProfile(values.dynamo, "dynamo"),
      via: values.via === "send-handler" ? ("send-handler" as const) : ("queue-log" as const),
      keyLimits: values["key-limits"] !== "off",
      indexKeys: Math.floor(positive("index-keys", values["index-keys"], 1)),
      batch: Math.min(1024, Math.floor(positive("batch", values.batch, 1))),
      groups: Math.min(64, Math.floor(Number(values.groups) || 0)),
      warmAppends: Math.min(256, Math.floor(Number(values["warm-appends"]) || 0)),
      hedgeBudget: values["hedge-budget"] === undefined ? undefined : share("hedge-budget", values["hedge-budget"]),
      throttleBaseMs: positive("throttle-base-ms", values["throttle-base-ms"], DEFAULT_RETRY_BACKOFF.throttlingBaseMs),
      maxAttempts: Math.min(10, Math.floor(positive("max-attempts", values["max-attempts"], DEFAULT_DYNAMO_ATTEMPTS))),
    };
    if (values["key-limits"] !== "on" && values["key-limits"] !== "off")
      throw new Error(`--key-limits must be on or off, got ${values["key-limits"]}`);
    if (values.via !== "queue-log" && values.via !== "send-handler")
      throw new Error(`--via must be queue-log or send-handler, got ${values.via}`);
    if (options.warmAppends > 0 && (options.shapes.includes("dead") || options.groups > 0))
      throw new Error(
        "--warm-appends is for the writers' rows: not with --shapes dead or --groups (their readers would start behind)",
      );
    if (options.hedgeBudget !== undefined && options.via === "send-handler")
      throw new Error(
        "--hedge-budget sets the queue log's writers (--via queue-log); the Send function keeps its default",
      );
    console.error(`bench lambda-concurrency: ${JSON.stringify({ ...options, machine })}`);
    console.log(TABLE_HEADER);
    const rows = await runLambdaConcurrency(options, runId);
    for (const row of rows) console.log(formatRow(row));
    console.log(`BENCH_JSON ${JSON.stringify({ suite: "lambda-concurrency", options, machine, rows })}`);
    return;
  }
  if (values.suite === "overload" || values.suite === "json-rate") {
    await runLoadSuite(values.suite, runId, machine);
    return;
  }
  if (values.suite === "subscription") {
    await runSubscriptionSuite(machine);
    return;
  }
  if (values.suite === "pop-idle") {
    await runPopIdleSuite(runId, machine);
    return;
  }
  if (values.suite === "rocketmq" || values.suite === "plain-http" || values.suite === "proxy-cost") {
    const flags = { ...values, flush: values.flush, quick };
    await runYardstickSuite(values.suite, flags, { machine, runId, latencies: inProcessMode("aws").latencies });
    return;
  }
  if (values.suite !== "data")
    throw new Error(
      `--suite must be data, peer, lambda-concurrency, overload, json-rate, subscription, pop-idle, rocketmq, proxy-cost or plain-http, got ${values.suite}`,
    );
  console.error(
    `bench: ${modes.join(" + ")}, batches ${batches.join("/")}, ${settings.bodyBytes} B bodies, ` +
      `${settings.producers} producers / ${settings.consumers} consumers, ${settings.queues} queues, ` +
      `produce for ${settings.produceBudgetMs / 1000} s or ${settings.maxMessages} messages per case`,
  );
  const started = performance.now();
  const results: ModeResult[] = [];
  for (const mode of modes) {
    for (const flush of mode === "local" ? flushes : (["async"] as const))
      results.push(await runMode(mode, runId, flush));
  }
  for (const r of results) console.log(formatMode(r));
  console.log(
    "\nCost: AWS list prices (us-east-1, on demand) for requests and capacity units only; " +
      "Lambda duration, storage and data transfer excluded. Every API call counts one API Gateway request " +
      "and one Lambda invocation. dynalite does not return the old item on a failed condition, so each lost " +
      "append race costs one extra read there that real DynamoDB would not.",
  );
  console.log(
    `BENCH_JSON ${JSON.stringify({
      date: new Date().toISOString(),
      machine,
      settings: { ...settings, batches, quick },
      prices: { perMillion: PRICES_PER_MILLION, sqsPerMillionRequests: SQS_PER_MILLION_REQUESTS },
      seconds: Math.round((performance.now() - started) / 100) / 10,
      results,
    })}`,
  );
}

async function mainPush(): Promise<void> {
  const pushModes = values["push-mode"] === "both" ? (["local", "aws-latency"] as const) : [values["push-mode"]];
  const results: PushBenchResult[] = [];
  for (const mode of pushModes) {
    if (mode !== "local" && mode !== "aws-latency") throw new Error(`--push-mode must be local, aws-latency or both`);
    results.push(
      await runPushLatency({
        mode,
        latencies: {
          s3Put: parseProfile(values["s3-put"] ?? "", "s3-put"),
          s3Get: parseProfile(values["s3-get"] ?? "", "s3-get"),
          dynamo: parseProfile(values.dynamo ?? "", "dynamo"),
        },
        rates: (values.rates ?? "").split(",").map((r) => positive("rates", r, 1)),
        secondsPerRate: positive("rate-seconds", values["rate-seconds"], quick ? 3 : 10),
        idleSeconds: positive("idle-seconds", values["idle-seconds"], 60),
        idleRounds: Math.floor(positive("idle-rounds", values["idle-rounds"], 2)),
        idleCostPeriodMs: positive("idle-cost-period", values["idle-cost-period"], 2000),
        idleCostPeriods: Math.floor(positive("idle-cost-periods", values["idle-cost-periods"], quick ? 3 : 10)),
        ratesChannel: values["rates-channel"] !== "off",
      }),
    );
  }
  for (const r of results) console.log(formatPush(r));
  console.log(`BENCH_PUSH_JSON ${JSON.stringify({ date: new Date().toISOString(), machine: machineInfo(), results })}`);
}

/** The suites whose broker and load are separate processes (overload.ts, json-rate.ts). */
async function runLoadSuite(suite: "overload" | "json-rate", runId: string, machine: object): Promise<void> {
  const flush = flushes[0] ?? "sync";
  const started = { date: new Date().toISOString(), load: loadavg() };
  if (suite === "json-rate") {
    const options = {
      flush,
      rate: positive("rate", values.rate, 2000),
      seconds: positive("seconds", values.seconds, quick ? 2 : 20),
      bodyBytes: settings.bodyBytes,
    };
    console.error(`bench json-rate: ${JSON.stringify({ ...options, machine, started })}`);
    const rows = await runJsonRate(options, runId);
    console.log(formatJsonRate(rows, options));
    console.log(`BENCH_JSON ${JSON.stringify({ suite, options, machine, started, rows })}`);
    return;
  }
  const options = {
    flush,
    seconds: positive("seconds", values.seconds, quick ? 2 : 15),
    warmupSeconds: quick ? 0.5 : 2,
    senders: Math.floor(positive("senders", values.senders, 64)),
    connections: Math.floor(positive("connections", values.connections, 256)),
    factors: values.factors.split(",").map((x) => positive("factors", x, 2)),
    healthIntervalMs: positive("health-interval", values["health-interval"], 20),
    bodyBytes: settings.bodyBytes,
    queues: settings.queues,
  };
  console.error(`bench overload: ${JSON.stringify({ ...options, machine, started })}`);
  const result = await runOverload(options, runId);
  console.log(formatOverload(result, options));
  console.log(`BENCH_JSON ${JSON.stringify({ suite, options, machine, started, result })}`);
}

/** The mode and injected latencies of the suites that run everything in this process (subscription, pop-idle). */
function inProcessMode(mode: "local" | "aws") {
  return {
    mode: mode === "aws" ? ("aws-latency" as const) : ("local" as const),
    latencies: {
      s3Put: parseProfile(values["s3-put"], "s3-put"),
      s3Get: parseProfile(values["s3-get"], "s3-get"),
      dynamo: parseProfile(values.dynamo, "dynamo"),
    },
  };
}

async function runSubscriptionSuite(machine: object): Promise<void> {
  const started = { date: new Date().toISOString(), load: loadavg() };
  const results: SubscriptionBenchResult[] = [];
  for (const mode of modes) {
    const target: "https" | "http" = values.target === "http" ? "http" : "https";
    if (values.target !== target) throw new Error(`--target must be https or http, got ${values.target}`);
    const options = {
      ...inProcessMode(mode),
      target,
      messages: Math.floor(positive("max-messages", values["max-messages"], quick ? 512 : 4096)),
      rate: positive("rate", values.rate, 100),
      rateSeconds: positive("rate-seconds", values["rate-seconds"], quick ? 3 : 10),
      idleSeconds: positive("idle-seconds", values["idle-seconds"], quick ? 5 : 60),
      idleRounds: Math.floor(positive("idle-rounds", values["idle-rounds"], 2)),
    };
    console.error(`bench subscription: ${JSON.stringify({ ...options, machine, started })}`);
    results.push(await runSubscriptionBench(options));
  }
  for (const r of results) console.log(formatSubscription(r));
  const ended = { date: new Date().toISOString(), load: loadavg() };
  console.log(`BENCH_JSON ${JSON.stringify({ suite: "subscription", machine, started, ended, results })}`);
}

async function runPopIdleSuite(runId: string, machine: object): Promise<void> {
  const started = { date: new Date().toISOString(), load: loadavg() };
  const results: PopIdleResult[] = [];
  for (const mode of modes) {
    const options = {
      ...inProcessMode(mode),
      idleSeconds: positive("idle-seconds", values["idle-seconds"], quick ? 5 : 60),
      idleRounds: Math.floor(positive("idle-rounds", values["idle-rounds"], quick ? 2 : 5)),
      awaitMs: 20_000,
    };
    console.error(`bench pop-idle: ${JSON.stringify({ ...options, machine, started })}`);
    results.push(await runPopIdle(options, runId));
  }
  for (const r of results) console.log(formatPopIdle(r));
  const ended = { date: new Date().toISOString(), load: loadavg() };
  console.log(`BENCH_JSON ${JSON.stringify({ suite: "pop-idle", machine, started, ended, results })}`);
}

function machineInfo() {
  return { nproc: availableParallelism(), cpu: cpus()[0]?.model ?? "unknown", node: process.version };
}

(values.push ? mainPush() : main()).catch((err: unknown) => {
  console.error("bench failed:", err);
  process.exitCode = 1;
});
