/**
 * @module What overload.ts and json-rate.ts share: the broker as its own process on a fresh embedded store,
 * load processes started together (load-process.ts), the broker's CPU across a phase, and the read-back of
 * every acked send (found at the queue and offset its answer named, with its msgId, once).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { FlushMode } from "../../lib/storage/local/index.js";
import { type BrokerProcess, startBrokerProcess } from "./broker-process.js";
import { BROKER } from "./data-plane.js";
import { mustCall, type PullAnswer } from "./http.js";
import type { Ack, LoadResult, LoadSpec } from "./load-process.js";
import { round } from "./stats.js";

const READY_TIMEOUT_MS = 120_000;
/** A load process runs its phase and exits; past this it is killed. */
const PHASE_TIMEOUT_MS = 5 * 60_000;

export interface BenchBroker {
  broker: BrokerProcess;
  dir: string;
  close(): Promise<void>;
}

/** `nimbus dev` in its own process on a fresh store in a temporary folder; `close` stops it and removes both. */
export async function benchBroker(flush: FlushMode): Promise<BenchBroker> {
  const dir = await mkdtemp(join(tmpdir(), "nimbus-load-"));
  try {
    // BENCH_BROKER_PROFILE_DIR: the broker runs under `node --cpu-prof` and writes its profile there on stop.
    const cpuProfileDir = process.env.BENCH_BROKER_PROFILE_DIR;
    const broker = await startBrokerProcess({ dataDir: join(dir, "data"), flush, cpuProfileDir });
    return {
      broker,
      dir,
      close: async () => {
        await broker.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

export interface PhaseRun {
  results: LoadResult[];
  /** The broker's CPU over the phase, in % of one core. */
  brokerCpuPercent: number;
  wallSeconds: number;
  /** 1-minute load average at the start and the end of the phase. */
  load: [number, number];
}

type SpecWithoutOut = LoadSpec extends infer S ? (S extends LoadSpec ? Omit<S, "out"> : never) : never;

/** Starts one process per spec, waits until all are ready, starts them together and collects their results. */
export async function runLoadProcesses(b: BenchBroker, specs: readonly SpecWithoutOut[]): Promise<PhaseRun> {
  const tag = Date.now().toString(36);
  const children = specs.map((spec, i) => {
    const out = join(b.dir, `load-${tag}-${i}.json`);
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "test/bench/load-process.ts", JSON.stringify({ ...spec, out })],
      {
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    const exited = new Promise<number>((resolve) => child.once("exit", (code) => resolve(code ?? 1)));
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (chunk: string) => {
        if (chunk.includes("READY")) resolve();
      });
      exited.then((code) => reject(new Error(`load process ${spec.kind} exited (${code}) before it was ready`)));
    });
    return { child, out, exited, ready };
  });
  const killAll = () => {
    for (const c of children) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  };
  const timer = setTimeout(killAll, READY_TIMEOUT_MS + PHASE_TIMEOUT_MS);
  try {
    await Promise.all(children.map((c) => c.ready));
    const load0 = loadavg()[0] ?? 0;
    const cpu0 = b.broker.cpuSeconds();
    const started = performance.now();
    for (const c of children) c.child.stdin.end("GO\n");
    const codes = await Promise.all(children.map((c) => c.exited));
    const wallSeconds = (performance.now() - started) / 1000;
    const brokerCpuPercent = round(((b.broker.cpuSeconds() - cpu0) / wallSeconds) * 100, 0);
    if (codes.some((code) => code !== 0)) throw new Error(`a load process failed (exit codes ${codes.join(", ")})`);
    const results = await Promise.all(
      children.map(async (c) => JSON.parse(await readFile(c.out, "utf8")) as LoadResult),
    );
    return { results, brokerCpuPercent, wallSeconds: round(wallSeconds, 1), load: [load0, loadavg()[0] ?? 0] };
  } finally {
    clearTimeout(timer);
    killAll();
  }
}

export interface ReadBack {
  acked: number;
  /** Acked sends found at their queue and offset with their msgId. */
  found: number;
  lost: number;
  /** msgIds stored more than once. */
  duplicates: number;
  stored: number;
  /** Stored messages no answer acknowledged (a request that got no answer, if any). */
  storedUnacked: number;
  ok: boolean;
}

/** Pulls every queue of `topic` on broker-a from 0 to its end and checks every ack against what is stored. */
export async function readBack(url: string, topic: string, queues: number, acks: readonly Ack[]): Promise<ReadBack> {
  const stored = new Map<string, string>();
  const seen = new Map<string, number>();
  for (let queueId = 0; queueId < queues; queueId++) {
    let offset = 0;
    for (let pulls = 0; pulls < 100_000; pulls++) {
      const request = {
        consumerGroup: "bench_readback",
        topic,
        brokerName: BROKER,
        queueId,
        queueOffset: offset,
        maxMsgNums: 256,
      };
      const answer = await mustCall<PullAnswer>(url, "POST", "/pull", request);
      for (const m of answer.messages) {
        stored.set(`${queueId}/${m.queueOffset}`, m.msgId);
        seen.set(m.msgId, (seen.get(m.msgId) ?? 0) + 1);
      }
      if (answer.pullStatus !== "FOUND" || answer.nextBeginOffset <= offset) break;
      offset = answer.nextBeginOffset;
    }
  }
  let found = 0;
  for (const [queueId, offset, msgId] of acks) if (stored.get(`${queueId}/${offset}`) === msgId) found++;
  const duplicates = [...seen.values()].filter((n) => n > 1).length;
  const lost = acks.length - found;
  return {
    acked: acks.length,
    found,
    lost,
    duplicates,
    stored: stored.size,
    storedUnacked: stored.size - found,
    ok: lost === 0 && duplicates === 0 && new Set(acks.map((a) => a[2])).size === acks.length,
  };
}

export function formatReadBack(r: ReadBack): string {
  return (
    `read back: ${r.acked} acked, ${r.found} found at their offset once each, lost ${r.lost}, duplicates ${r.duplicates}, ` +
    `stored ${r.stored} (${r.storedUnacked} never acked) — ${r.ok ? "ok" : "FAILED"}`
  );
}
