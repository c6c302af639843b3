/**
 * @module `nimbus dev` as its own OS process for a benchmark (the CLI from source under tsx, as `npm run dev`
 * runs it): on a free port, gRPC off, the embedded store in `dataDir`. `start` answers once `/health` does;
 * `stop` sends SIGINT (the server closes its store, a `--cpu-prof` run writes its profile) and SIGKILLs it
 * if it has not exited within 20 s.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { FlushMode } from "../../lib/storage/local/index.js";
import { procTree, procTreeCpuSeconds } from "./stats.js";

export interface BrokerProcess {
  url: string;
  /** `host:port` of its gRPC endpoint, when started with `grpc`. */
  grpcEndpoint: string | undefined;
  pid: number;
  /** CPU seconds the broker process and its workers used so far (user + system, /proc). */
  cpuSeconds(): number;
  /** The broker's process and its workers' (the primary first). */
  pids(): number[];
  stop(): Promise<void>;
}

export interface BrokerProcessOptions {
  dataDir: string;
  flush?: FlushMode | undefined;
  /** Runs the broker under `node --cpu-prof`; it writes its profile in this folder when stopped. */
  cpuProfileDir?: string | undefined;
  /** More of node's own options for the broker's processes (e.g. `--perf-basic-prof`). */
  nodeArgs?: readonly string[] | undefined;
  /** Serve gRPC too, on a free port (default off). */
  grpc?: boolean | undefined;
  /** `--workers N` (default: the CLI's, one per core). */
  workers?: number | undefined;
  /** `--auth` with this password for the Super user `root` (NIMBUS_ROOT_PASSWORD); absent: no auth. */
  rootPassword?: string | undefined;
}

const START_TIMEOUT_MS = 90_000;

export async function startBrokerProcess(o: BrokerProcessOptions): Promise<BrokerProcess> {
  const args = [
    ...(o.cpuProfileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", o.cpuProfileDir]),
    ...(o.nodeArgs ?? []),
    "--import",
    "tsx",
    "lib/cli/main.ts",
    "dev",
    "--port",
    "0",
    // --port 0 with gRPC on: a free port for it too; --grpc-port 0 turns it off.
    ...(o.grpc === true ? [] : ["--grpc-port", "0"]),
    "--data-dir",
    o.dataDir,
    "--flush",
    o.flush ?? "async",
    ...(o.workers === undefined ? [] : ["--workers", String(o.workers)]),
    ...(o.rootPassword === undefined ? [] : ["--auth", "--root-user", "root"]),
  ];
  const env = o.rootPassword === undefined ? process.env : { ...process.env, NIMBUS_ROOT_PASSWORD: o.rootPassword };
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"], env });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const { url, grpcEndpoint } = await listening(child, o.grpc === true);
    await untilHealthy(url);
    const pid = child.pid ?? 0;
    return { url, grpcEndpoint, pid, cpuSeconds: () => procTreeCpuSeconds(pid), pids: () => procTree(pid), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The URL of the "listening on" line the CLI prints once it serves (and its gRPC endpoint's, when asked). */
function listening(child: ChildProcess, grpc: boolean): Promise<{ url: string; grpcEndpoint: string | undefined }> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error("nimbus dev did not start listening")), START_TIMEOUT_MS);
    child.once("exit", (code) => reject(new Error(`nimbus dev exited (${code}) before listening`)));
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      seen = (seen + chunk).slice(-4096);
      const url = /listening on (http:\/\/\S+)/.exec(seen)?.[1];
      const grpcEndpoint = /gRPC endpoint on (\S+)/.exec(seen)?.[1];
      if (url === undefined || (grpc && grpcEndpoint === undefined)) return;
      clearTimeout(timer);
      resolve({ url, grpcEndpoint });
    });
  });
}

async function untilHealthy(url: string): Promise<void> {
  let last: unknown;
  for (let i = 0; i < 300; i++) {
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      if (res.ok) return;
      last = new Error(`/health answered ${res.status}`);
    } catch (err) {
      last = err;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw last;
}
