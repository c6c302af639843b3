/**
 * @module Group commit for the embedded store: the puts that arrive in one turn of the event loop (sends
 * to different queues, an offset commit beside them, from any table of one database) run in ONE SQLite
 * transaction (`BEGIN IMMEDIATE` ... `COMMIT`), each with its own condition checked inside it. With
 * `--flush sync` that is one WAL fsync for all of them instead of one each. A put's promise settles only
 * after the transaction has committed: nothing is acknowledged before it is stored (per the flush mode).
 * If the transaction fails as a whole (the database busy past its timeout, a disk error), every put in it
 * fails with that error and none of them is stored.
 */
import type { Database, Transaction } from "better-sqlite3";
import { sqlite } from "./sqlite-table.js";

interface Job {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class WriteBatcher {
  readonly #transaction: Transaction<(jobs: Job[]) => unknown[]>;
  #pending: Job[] = [];
  /** Transactions committed and the writes in them, for tests and the benchmark. */
  transactions = 0;
  writes = 0;

  constructor(db: Database) {
    this.#transaction = db.transaction((jobs: Job[]) => jobs.map((j) => j.run()));
  }

  /** Runs `run` (synchronous SQLite work) inside the next shared transaction; settles after its commit. */
  submit<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#pending.length === 0) setImmediate(() => this.#flush());
      this.#pending.push({ run, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  #flush(): void {
    const jobs = this.#pending;
    this.#pending = [];
    let results: unknown[];
    try {
      results = sqlite("put", () => this.#transaction.immediate(jobs));
    } catch (err) {
      for (const j of jobs) j.reject(err);
      return;
    }
    this.transactions++;
    this.writes += jobs.length;
    for (const [i, j] of jobs.entries()) j.resolve(results[i]);
  }
}

const batchers = new WeakMap<Database, WriteBatcher>();

/** The one batcher of a database (every table on it shares its transactions). */
export function writeBatcherOf(db: Database): WriteBatcher {
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = new WriteBatcher(db);
    batchers.set(db, batcher);
  }
  return batcher;
}
