/**
 * @module `--workers N`: one server process per core on one store (docs/design.md "Every core"). The command's
 * own process is the primary: it forks N workers (Node's cluster), listens for them and hands each new connection to
 * the worker with the fewest open ones (./connection-placement.ts; gRPC's port is Node's cluster's, shared in turn),
 * relays what they tell each other (lib/dev/process-bus.ts), prints
 * the banner once they all serve, and stops them on SIGINT/SIGTERM. Worker 1 also runs the background work
 * (delivery, timers, checks, retention). A worker that dies stops the rest (the primary exits 1); a primary that
 * dies (even SIGKILL) takes its workers with it: they exit when their IPC channel closes.
 */
import cluster, { type Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import { InvalidArgumentError } from "commander";
import { isPlacementMessage, PLACED_ENV } from "../dev/placed-listen.js";
import { isBusMessage } from "../dev/process-bus.js";
import { ConnectionPlacement } from "./connection-placement.js";

/** The environment variable that tells a worker its index (1..N). */
const WORKER_INDEX_ENV = "NIMBUS_WORKER_INDEX";
/** The most workers a command starts by default, whatever the cores. */
const MAX_DEFAULT_WORKERS = 8;

/** `--workers` when not given: one per core the process may use, at most 8. */
export const defaultWorkers = (): number => Math.min(availableParallelism(), MAX_DEFAULT_WORKERS);

/** Parses `--workers`: 1 to 64 processes. */
export function parseWorkers(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new InvalidArgumentError("a whole number of processes, 1 to 64");
  return n;
}

/** This process's worker index (1..N), or 0 when it is not a worker of `--workers`. */
export function workerIndex(): number {
  return cluster.isWorker ? Number(process.env[WORKER_INDEX_ENV] ?? 0) : 0;
}

/** A worker has started serving; worker 1 also sends the banner the primary prints. */
interface Ready {
  t: "ready";
  lines: string[];
}

const isReady = (m: unknown): m is Ready => typeof m === "object" && m !== null && (m as { t?: unknown }).t === "ready";

/** In a worker: tells the primary it serves (with the banner lines worker 1 prints), and dies with the primary. */
export function announceWorker(lines: string[]): void {
  process.send?.({ t: "ready", lines } satisfies Ready);
  process.on("disconnect", () => process.exit(1));
}

/**
 * In a worker whose command failed (bad options, a taken port): its IPC channel would keep it alive (and a cluster
 * worker that merely disconnects exits 0), so it exits with the failure's code; its primary then stops the others.
 */
export function leaveIfWorker(): void {
  if (cluster.isWorker) process.exit(typeof process.exitCode === "number" ? process.exitCode : 1);
}

/** In the primary: forks `n` workers and supervises them until a signal stops them, or one of them dies. */
export function superviseWorkers(n: number): void {
  const workers: Worker[] = [];
  let ready = 0;
  let banner: string[] = [];
  let stopping = false;
  const placement = new ConnectionPlacement();
  const stopAll = (code: number) => {
    stopping = true;
    placement.close();
    const alive = workers.filter((w) => !w.isDead());
    if (alive.length === 0) process.exit(code);
    let left = alive.length;
    for (const w of alive) {
      w.once("exit", () => {
        if (--left === 0) process.exit(code);
      });
      w.process.kill("SIGTERM");
    }
    // A worker that does not stop in 20 s is killed.
    setTimeout(() => {
      for (const w of alive) if (!w.isDead()) w.process.kill("SIGKILL");
    }, 20_000).unref();
  };
  for (let i = 1; i <= n; i++) {
    const w = cluster.fork({ [WORKER_INDEX_ENV]: String(i), [PLACED_ENV]: "1" });
    workers.push(w);
    placement.add(w);
    w.on("message", (m: unknown) => {
      if (isPlacementMessage(m)) placement.heard(w, m);
      else if (isBusMessage(m)) {
        for (const other of workers) if (other !== w && other.isConnected()) other.send(m);
      } else if (isReady(m)) {
        if (m.lines.length > 0) banner = m.lines;
        if (++ready === n) {
          for (const line of banner) console.log(line);
          console.log(`nimbus: ${n} worker processes serve these ports (--workers ${n})`);
        }
      }
    });
    w.on("exit", (code, signal) => {
      placement.remove(w);
      if (stopping) return;
      // A worker that stopped cleanly got the terminal's signal before this process: the others stop too.
      if (code === 0) return stopAll(0);
      console.error(`nimbus: worker ${i} exited (${signal ?? code}); stopping`);
      stopAll(1);
    });
  }
  const onSignal = (signal: string) => {
    if (stopping) return;
    console.log(`nimbus: ${signal}, stopping`);
    stopAll(0);
  };
  process.on("SIGINT", () => onSignal("SIGINT"));
  process.on("SIGTERM", () => onSignal("SIGTERM"));
}

export const isPrimaryOf = (workers: number): boolean => workers > 1 && cluster.isPrimary;
