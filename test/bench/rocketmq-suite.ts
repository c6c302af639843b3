/**
 * @module `npm run bench -- --suite rocketmq`: the same Java program with RocketMQ's official gRPC client 5.0.8
 * (test/bench/rocketmq/client) against Apache RocketMQ 5.3.3 (NameServer + LOCAL Proxy, async flush) and against
 * `nimbus dev --flush async` (its own process), one broker at a time, alternating each round, each on a topic of
 * `--queues` queues on one broker: sync sends from one thread, async sends with 64 in flight, then a SimpleConsumer
 * receiving (32 a call) and acking each message. Prints each phase's msg/s, p50/p99 and the ratio Nimbus /
 * RocketMQ, the servers' CPU (cores busy), and a `BENCH_JSON` line. Stops what it started.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startBrokerProcess } from "./broker-process.js";
import { buildModule, classPath, startRocketMQ } from "./rocketmq-process.js";
import { procCpuSeconds, statCpuSeconds } from "./stats.js";

export interface RocketMQSuiteOptions {
  messages: number;
  rounds: number;
  bodyBytes: number;
  queues: number;
  phases: readonly ("sync" | "async" | "consume")[];
  /** `nimbus dev --workers` (default: one per core). */
  workers?: number | undefined;
  /** `nimbus dev --flush` (default async, as RocketMQ's ASYNC_FLUSH it is set beside). */
  flush?: "async" | "sync" | undefined;
  /** Which brokers run (default both). */
  brokers?: readonly ("rocketmq" | "nimbus")[] | undefined;
  /** Which clients load each broker, one after the other (default gRPC 5.0.8, then remoting 4.9.8). */
  clients?: readonly BenchClient[] | undefined;
  /**
   * Whether the client waits, before each phase, for its JIT compilers to be idle (default true), so that any
   * compiling a phase leaves is not charged to the next.
   */
  jitSettle?: boolean | undefined;
  /**
   * Messages of each phase's own shape the client runs, unmeasured, before the phase (default 0): the client's JIT
   * compiles that shape's code then, not while the phase is timed.
   */
  warmup?: number | undefined;
}

/** The official clients the suite runs: RocketMQ 5's gRPC client, and the classic remoting client. */
export type BenchClient = "grpc" | "remoting";

/** Each client's Maven module and main class (test/bench/rocketmq/). */
const PROGRAMS: Record<BenchClient, { module: "client" | "remoting-client"; main: string }> = {
  grpc: { module: "client", main: "nimbus.bench.GrpcBench" },
  remoting: { module: "remoting-client", main: "nimbus.bench.RemotingBench" },
};

export interface PhaseFigure {
  phase: string;
  messages: number;
  seconds: number;
  msgPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /**
   * The server's CPU (its processes, /proc) over the phase (from its START line to its RESULT line) per message,
   * in µs; absent when not measured.
   */
  serverCpuUsPerMsg?: number | undefined;
  /** The bench client's own CPU per message over the phase. */
  clientCpuUsPerMsg?: number | undefined;
  /** The part of `clientCpuUsPerMsg` its JIT compiler threads spent (at least: jitCpuSeconds). */
  clientJitUsPerMsg?: number | undefined;
  /**
   * From the phase's start to its first message (ms), when the phase starts a consumer: the push consumer's start-up
   * (its rebalance, its offsets) is inside the phase's time. Absent for the other phases.
   */
  firstMessageMs?: number | undefined;
  /** How long the client waited before the phase for its JIT compilers to be idle (0 with `--no-jit-settle`). */
  jitWaitMs?: number | undefined;
}

export interface BrokerRun {
  broker: "rocketmq" | "nimbus";
  round: number;
  phases: PhaseFigure[];
  /** Server CPU seconds over the run divided by its wall seconds: cores kept busy. */
  serverCores: number;
}

/**
 * Runs a client's Java program against `endpoint` (the gRPC endpoint, or the remoting client's name server); its
 * RESULT lines as figures, each phase named with the client (`remoting async`) unless it is the gRPC one.
 * `onPhaseLine` hears each phase's START (its measured part begins) and RESULT (it ended), in order.
 */
export async function runBenchClient(
  endpoint: string,
  topic: string,
  group: string,
  o: RocketMQSuiteOptions,
  client: BenchClient = "grpc",
  serverCpuSeconds?: () => number,
  onPhaseLine?: (line: "START" | "RESULT") => void,
): Promise<PhaseFigure[]> {
  const program = PROGRAMS[client];
  const cp = classPath(buildModule(program.module));
  const home = mkdtempSync(path.join(os.tmpdir(), "nimbus-bench-client-"));
  try {
    const args = [
      "-Xmx512m",
      `-Dnimbus.bench.settle=${o.jitSettle !== false}`,
      `-Dnimbus.bench.warmup=${o.warmup ?? 0}`,
      `-Duser.home=${home}`,
      `-Drocketmq.log.root=${home}`,
      "-cp",
      cp,
      program.main,
      ...[endpoint, topic, group, `${o.messages}`, `${o.bodyBytes}`, ...o.phases],
    ];
    const child = spawn("java", args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    // The server's and the client's CPU when a phase started (its START line, printed once the client's JIT
    // compilers were idle) and when it ended (its RESULT line): on a shared machine what the client burns is not
    // there for the server. Each RESULT is paired with the START before it; one without a START has no CPU figures.
    const jitThreads = new Map<string, number>();
    const cpuNow = (): CpuReading => ({
      server: serverCpuSeconds?.() ?? 0,
      client: child.pid === undefined ? 0 : procCpuSeconds(child.pid),
      jit: child.pid === undefined ? 0 : jitCpuSeconds(child.pid, jitThreads),
    });
    let started: { at: CpuReading; waitedMs: number } | undefined;
    const phaseCpu: ({ start: CpuReading; end: CpuReading; waitedMs: number } | undefined)[] = [];
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text: string) => {
      const lines = (out.slice(out.lastIndexOf("\n") + 1) + text).split("\n").slice(0, -1);
      for (const line of lines) {
        if (line.startsWith("START ")) {
          started = { at: cpuNow(), waitedMs: Number(line.trim().split(/\s+/)[2] ?? 0) };
          onPhaseLine?.("START");
        } else if (line.startsWith("RESULT ")) {
          phaseCpu.push(started && { start: started.at, end: cpuNow(), waitedMs: started.waitedMs });
          started = undefined;
          onPhaseLine?.("RESULT");
        }
      }
      out += text;
    });
    child.stderr.on("data", (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
    });
    // "close", not "exit": every line of its output has been read by then.
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    if (code !== 0) throw new Error(`the bench client exited (${code}) against ${endpoint}: ${err}`);
    return out
      .split("\n")
      .filter((l) => l.startsWith("RESULT "))
      .map((l, i) => {
        const [, phase = "", messages = "0", seconds = "0", p50 = "0", p99 = "0", errors = "0", first = "-1"] = l
          .trim()
          .split(/\s+/);
        return {
          phase: client === "grpc" ? phase : `${client} ${phase}`,
          messages: Number(messages),
          seconds: Number(seconds),
          msgPerSec: Number(messages) / Number(seconds),
          p50Ms: Number(p50),
          p99Ms: Number(p99),
          errors: Number(errors),
          serverCpuUsPerMsg: serverCpuSeconds === undefined ? undefined : perMessageUs(phaseCpu[i], "server", messages),
          clientCpuUsPerMsg: perMessageUs(phaseCpu[i], "client", messages),
          clientJitUsPerMsg: perMessageUs(phaseCpu[i], "jit", messages),
          jitWaitMs: phaseCpu[i]?.waitedMs,
          ...(Number(first) >= 0 && { firstMessageMs: Number(first) }),
        };
      });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * The CPU seconds so far of a JVM's JIT compiler threads (HotSpot's `C1 CompilerThre…` and `C2 CompilerThre…`,
 * /proc/<pid>/task), at least: HotSpot ends compiler threads that went idle, so `seen` keeps each thread's last
 * figure, and what a thread spent after it was last read and before it ended is not counted (read at each phase's
 * START and RESULT lines only).
 */
function jitCpuSeconds(pid: number, seen: Map<string, number>): number {
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    // The process ended: the figures read before.
  }
  for (const task of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
      if (/^\d+ \(C[12] CompilerThre/.test(stat)) seen.set(task, statCpuSeconds(stat));
    } catch {
      // This thread ended meanwhile: its figure read before, if any.
    }
  }
  let sum = 0;
  for (const seconds of seen.values()) sum += seconds;
  return sum;
}

/** CPU seconds so far: the server's processes, the bench client's, and the client's JIT compiler threads. */
interface CpuReading {
  server: number;
  client: number;
  jit: number;
}

/**
 * CPU µs per message over a phase, from its START line to its RESULT line; undefined without its START, or when the
 * process was gone at its RESULT (a reading of 0).
 */
function perMessageUs(
  phase: { start: CpuReading; end: CpuReading } | undefined,
  part: keyof CpuReading,
  messages: string,
): number | undefined {
  if (phase === undefined || phase.end[part] < phase.start[part]) return undefined;
  return ((phase.end[part] - phase.start[part]) * 1e6) / Math.max(1, Number(messages));
}

const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + procCpuSeconds(pid), 0);

async function onRocketMQ(round: number, o: RocketMQSuiteOptions): Promise<BrokerRun> {
  const rmq = await startRocketMQ();
  try {
    const topic = `BenchRmq${round}`;
    const cpu0 = cpuOf(rmq.pids());
    const t0 = performance.now();
    const phases: PhaseFigure[] = [];
    for (const client of o.clients ?? ["grpc", "remoting"]) {
      const endpoint = client === "grpc" ? rmq.grpcEndpoint : rmq.nameServer;
      rmq.createTopic(`${topic}_${client}`, o.queues);
      phases.push(
        ...(await runBenchClient(endpoint, `${topic}_${client}`, `BenchRmqGroup${round}_${client}`, o, client, () =>
          cpuOf(rmq.pids()),
        )),
      );
    }
    const serverCores = (cpuOf(rmq.pids()) - cpu0) / ((performance.now() - t0) / 1000);
    return { broker: "rocketmq", round, phases, serverCores };
  } finally {
    await rmq.stop();
  }
}

async function onNimbus(round: number, o: RocketMQSuiteOptions): Promise<BrokerRun> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-bench-dev-"));
  const nimbus = await startBrokerProcess({ dataDir, flush: o.flush ?? "async", grpc: true, workers: o.workers });
  try {
    const topic = `BenchNimbus${round}`;
    const cpu0 = nimbus.cpuSeconds();
    const t0 = performance.now();
    const phases: PhaseFigure[] = [];
    for (const client of o.clients ?? ["grpc", "remoting"]) {
      const route = await fetch(`${nimbus.url}/topics/${topic}_${client}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ readQueueNums: o.queues, writeQueueNums: o.queues, brokerNames: ["broker-a"] }),
      });
      if (!route.ok) throw new Error(`nimbus: PUT /topics answered ${route.status}`);
      // The remoting client's name server is the HTTP port itself (docs/remoting.md).
      const endpoint = client === "grpc" ? (nimbus.grpcEndpoint ?? "") : new URL(nimbus.url).host;
      phases.push(
        ...(await runBenchClient(endpoint, `${topic}_${client}`, `BenchNimbusGroup${round}_${client}`, o, client, () =>
          nimbus.cpuSeconds(),
        )),
      );
    }
    const serverCores = (nimbus.cpuSeconds() - cpu0) / ((performance.now() - t0) / 1000);
    return { broker: "nimbus", round, phases, serverCores };
  } finally {
    await nimbus.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Alternates the brokers, RocketMQ first in odd rounds and Nimbus first in even ones. */
export async function runRocketMQSuite(o: RocketMQSuiteOptions): Promise<BrokerRun[]> {
  const runs: BrokerRun[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    const both = round % 2 === 1 ? [onRocketMQ, onNimbus] : [onNimbus, onRocketMQ];
    const order = both.filter((run) => o.brokers?.includes(run === onRocketMQ ? "rocketmq" : "nimbus") ?? true);
    for (const run of order) {
      const result = await run(round, o);
      console.error(`bench rocketmq: round ${round} ${result.broker}: ${JSON.stringify(result.phases)}`);
      runs.push(result);
    }
  }
  return runs;
}

/**
 * A consume phase's rate from its first message to the end of the phase (when the client saw every message): its
 * messages over its time less the consumer's start-up (`firstMessageMs`). The phase's own rate when it has no first
 * message, or when what is left of the phase is under 50 ms (its figures are rounded: the difference means nothing).
 */
export function steadyRate(p: PhaseFigure): number {
  if (p.firstMessageMs === undefined) return p.msgPerSec;
  const seconds = p.seconds - p.firstMessageMs / 1000;
  return seconds < 0.05 ? p.msgPerSec : p.messages / seconds;
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** One table: per phase, each broker's median msg/s over the rounds with its p50/p99, and the ratio. */
export function formatRocketMQ(runs: readonly BrokerRun[]): string {
  const phases = [...new Set(runs.flatMap((r) => r.phases.map((p) => p.phase)))];
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length === 0 ? 0 : (s[Math.floor((s.length - 1) / 2)] ?? 0);
  };
  const of = (broker: BrokerRun["broker"], phase: string) =>
    runs.filter((r) => r.broker === broker).flatMap((r) => r.phases.filter((p) => p.phase === phase));
  /** Nimbus's rate over RocketMQ's, each broker's `rate` of its rounds; "—" when a broker has no figures. */
  const ratioCell = (r: PhaseFigure[], n: PhaseFigure[], rate: (xs: PhaseFigure[]) => number) =>
    r.length === 0 || n.length === 0 ? "—" : `${fmt(rate(n) / Math.max(1e-9, rate(r)), 2)}×`;
  const lines = [
    "| phase | Apache RocketMQ 5.3.3 msg/s (p50 / p99 ms) | Nimbus msg/s (p50 / p99 ms) | Nimbus / RocketMQ |",
    "|---|---:|---:|---:|",
  ];
  for (const phase of phases) {
    const [r, n] = [of("rocketmq", phase), of("nimbus", phase)];
    const cell = (xs: PhaseFigure[]) =>
      `${fmt(median(xs.map((x) => x.msgPerSec)))} (${fmt(median(xs.map((x) => x.p50Ms)), 1)} / ${fmt(median(xs.map((x) => x.p99Ms)), 1)})`;
    const ratio = ratioCell(r, n, (xs) => median(xs.map((x) => x.msgPerSec)));
    lines.push(`| ${phase} | ${r.length === 0 ? "—" : cell(r)} | ${n.length === 0 ? "—" : cell(n)} | ${ratio} |`);
  }
  const cpu = (xs: PhaseFigure[], side: "server" | "client" | "jit") => {
    const us = xs.flatMap((x) => {
      const v = side === "server" ? x.serverCpuUsPerMsg : side === "client" ? x.clientCpuUsPerMsg : x.clientJitUsPerMsg;
      return v === undefined ? [] : [v];
    });
    return us.length === 0 ? "—" : fmt(median(us));
  };
  lines.push(
    "",
    "| phase | µs CPU per message: RocketMQ server | Nimbus server | client against RocketMQ (its JIT) | client against Nimbus (its JIT) |",
    "|---|---:|---:|---:|---:|",
  );
  for (const phase of phases) {
    const [r, n] = [of("rocketmq", phase), of("nimbus", phase)];
    const client = (xs: PhaseFigure[]) => `${cpu(xs, "client")} (${cpu(xs, "jit")})`;
    lines.push(`| ${phase} | ${cpu(r, "server")} | ${cpu(n, "server")} | ${client(r)} | ${client(n)} |`);
  }
  const started = phases.filter((phase) =>
    runs.some((r) => r.phases.some((p) => p.phase === phase && p.firstMessageMs !== undefined)),
  );
  if (started.length > 0) {
    lines.push(
      "",
      "| phase | first message after (ms): RocketMQ | Nimbus | msg/s from the first message: RocketMQ | Nimbus | Nimbus / RocketMQ |",
      "|---|---:|---:|---:|---:|---:|",
    );
    for (const phase of started) {
      const [r, n] = [of("rocketmq", phase), of("nimbus", phase)];
      // Each round's first message, in round order.
      const first = (xs: PhaseFigure[]) =>
        xs.length === 0
          ? "—"
          : xs.flatMap((x) => (x.firstMessageMs === undefined ? [] : [fmt(x.firstMessageMs)])).join(", ");
      const steady = (xs: PhaseFigure[]) => median(xs.map(steadyRate));
      const rate = (xs: PhaseFigure[]) => (xs.length === 0 ? "—" : fmt(steady(xs)));
      lines.push(`| ${phase} | ${first(r)} | ${first(n)} | ${rate(r)} | ${rate(n)} | ${ratioCell(r, n, steady)} |`);
    }
  }
  const cores = (broker: BrokerRun["broker"]) =>
    median(runs.filter((r) => r.broker === broker).map((r) => r.serverCores));
  lines.push(
    "",
    `Server CPU over a run (cores busy, median): RocketMQ ${fmt(cores("rocketmq"), 2)}, Nimbus ${fmt(cores("nimbus"), 2)}`,
  );
  return lines.join("\n");
}
