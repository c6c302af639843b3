/**
 * @module The embedded store's WAL checkpoints, in a thread of their own. SQLite's automatic checkpoint runs
 * inside the commit that crosses its threshold (1,000 pages: with 4 KiB pages every 60 or so single-message sends):
 * it copies the WAL's pages back into the database and syncs both files, 0.6–3.5 ms on the event loop while every
 * request waits (docs/benchmarks.md, "The sync tail is the store's WAL checkpoint"). Here a worker thread with its own
 * connection runs a PASSIVE checkpoint every `intervalMs` (which never blocks a writer or a reader, and copies only
 * what no reader still needs), as SQLite's documentation suggests for applications that cannot afford the pause.
 * The serving connection keeps an automatic checkpoint at a far higher threshold (`FALLBACK_AUTOCHECKPOINT_BYTES`),
 * so the WAL stays bounded even if this thread stopped. Several processes on one store may each run one: a
 * checkpoint running elsewhere makes this one's try answer busy, which is skipped.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** How often the thread checkpoints (ms): a few hundred WAL frames at 2,000 single-message sends a second. */
export const CHECKPOINT_INTERVAL_MS = 100;

/**
 * The serving connection's own automatic checkpoint, a safety net past the thread: this much WAL (SQLite counts it in
 * pages of the file's size, `fallbackAutocheckpointPages`).
 */
export const FALLBACK_AUTOCHECKPOINT_BYTES = 40 * 1024 * 1024;

/** `FALLBACK_AUTOCHECKPOINT_BYTES` in pages of `pageBytes` (10,240 of 4 KiB, 5,120 of 8 KiB). */
export const fallbackAutocheckpointPages = (pageBytes: number): number =>
  Math.ceil(FALLBACK_AUTOCHECKPOINT_BYTES / pageBytes);

export interface CheckpointerOptions {
  /** The database file. */
  file: string;
  /** How the checkpoint syncs: as the store's commits do (`NORMAL` or `FULL`). */
  synchronous: "NORMAL" | "FULL";
  intervalMs?: number;
}

/**
 * The thread's code, run as a CommonJS script (`eval`): no file to find next to a bundle or under tsx. It loads
 * better-sqlite3 from the path the parent resolved, checkpoints on a timer that does not keep the thread alive
 * past `stop`, and checkpoints once more when told to stop.
 */
const THREAD_CODE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.sqlite);
const db = new Database(workerData.file, { timeout: 0 });
db.pragma("synchronous = " + workerData.synchronous);
let checkpoints = 0;
const checkpoint = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
    checkpoints++;
  } catch {
    // Busy (another process's checkpoint, a recovery): the next turn tries again.
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", (message) => {
  if (message === "count") {
    parentPort.postMessage({ checkpoints });
    return;
  }
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

export class Checkpointer {
  readonly #worker: Worker;
  /** Settles when the thread is gone, whether told to stop or failed. */
  readonly #exited: Promise<void>;

  constructor(options: CheckpointerOptions) {
    const sqlite = createRequire(import.meta.url).resolve("better-sqlite3");
    this.#worker = new Worker(THREAD_CODE, {
      eval: true,
      workerData: {
        sqlite,
        file: options.file,
        synchronous: options.synchronous,
        intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS,
      },
      // Small: it holds a connection and a timer.
      resourceLimits: { maxOldGenerationSizeMb: 32 },
    });
    // A thread that fails (its connection could not open) leaves the serving connection's own checkpoint.
    this.#worker.on("error", (err) => console.warn(`nimbus: WAL checkpoint thread stopped: ${String(err)}`));
    this.#exited = new Promise((resolve) => this.#worker.once("exit", () => resolve()));
    this.#worker.unref();
  }

  /** Checkpoints the thread has run so far (for tests). */
  checkpoints(): Promise<number> {
    this.#worker.ref(); // someone waits for the answer: keep the process up for it
    this.#worker.postMessage("count");
    return new Promise((resolve) => {
      this.#worker.once("message", (m: { checkpoints: number }) => {
        this.#worker.unref();
        resolve(m.checkpoints);
      });
    });
  }

  /** Stops the thread after one last checkpoint and closes its connection; answers once it is gone. */
  stop(): Promise<void> {
    // A thread that has already exited (it failed) ignores both; `#exited` has settled.
    this.#worker.ref(); // the caller waits for its last checkpoint: keep the process up until it exits
    this.#worker.postMessage("stop");
    return this.#exited;
  }
}
