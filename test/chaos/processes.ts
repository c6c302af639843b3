/**
 * @module The chaos runner's process handling: producer processes that are restarted from their first
 * unacknowledged message whenever they die by SIGKILL (their own, between an object PUT and its index
 * put), and the local server process, killed with SIGKILL and started again on its port and data folder.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type FaultCounts, noFaultCounts } from "../support/fault-storage.js";
import type { AckReport, ProducerJob, ProducerReport } from "./workload.js";

const PRODUCER = fileURLToPath(new URL("./producer.ts", import.meta.url));
const SERVER = fileURLToPath(new URL("./server.ts", import.meta.url));
const TSX = { execArgv: ["--import", "tsx"] };

export interface ProducerTotals {
  acks: AckReport[];
  faults: FaultCounts;
  clientRetries: number;
  /** Producer processes that died by SIGKILL (between an object PUT and its index put). */
  kills: number;
}

function addFaults(into: FaultCounts, from: FaultCounts): void {
  into.throttled += from.throttled;
  into.droppedReplies += from.droppedReplies;
  into.lateApplied += from.lateApplied;
  into.latencySpikes += from.latencySpikes;
}

/** Runs `job` to its end, restarting its process after each SIGKILL; resolves when all its messages are acked. */
export async function runProducer(job: ProducerJob, totals: ProducerTotals): Promise<void> {
  let from = job.from;
  for (let run = 0; ; run++) {
    // The forced kill is for the first run only: the restarted process goes on by chance alone.
    const thisRun: ProducerJob = { ...job, from, killAtFirstObject: run === 0 && job.killAtFirstObject === true };
    const child = fork(PRODUCER, [JSON.stringify(thisRun)], {
      ...TSX,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let last: { faults: FaultCounts; clientRetries: number } = { faults: noFaultCounts(), clientRetries: 0 };
    child.on("message", (m: ProducerReport) => {
      last = m;
      if (m.kind === "ack") {
        totals.acks.push(m);
        from = m.from + m.count;
      }
    });
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("exit", (code, signal) => resolve({ code, signal })),
    );
    addFaults(totals.faults, last.faults);
    totals.clientRetries += last.clientRetries;
    if (exit.code === 0) return;
    if (exit.signal !== "SIGKILL") throw new Error(`producer ${job.producer} failed (${exit.code ?? exit.signal})`);
    totals.kills++;
  }
}

/** The local server in its own process, on `dataDir`; `kill()` SIGKILLs it and `start()` brings it back. */
export class ServerProcess {
  readonly #dataDir: string;
  #child: ChildProcess | undefined;
  #port = 0;

  constructor(dataDir: string) {
    this.#dataDir = dataDir;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Starts the server (on its previous port after the first start) and waits until it listens. */
  async start(): Promise<void> {
    const child = fork(SERVER, [this.#dataDir, String(this.#port)], {
      ...TSX,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.#child = child;
    this.#port = await new Promise<number>((resolve, reject) => {
      child.once("message", (m: { port: number }) => resolve(m.port));
      child.once("exit", (code) => reject(new Error(`the local server exited with ${code} before listening`)));
    });
  }

  /** SIGKILL, and wait until the process is gone. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await gone;
  }
}
