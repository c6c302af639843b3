/**
 * @module Group commit for the embedded store: the writes (puts and deletes) that arrive in one turn of
 * the event loop (sends to different queues, an offset commit beside them, from any table of one database)
 * run in ONE SQLite transaction (`BEGIN IMMEDIATE` ... `COMMIT`), in arrival order, each with its own
 * condition checked inside it. With `--flush sync` that is one WAL fsync for all of them instead of one
 * each. A write's promise settles only after the transaction has committed: nothing is acknowledged before
 * it is stored (per the flush mode). A write that throws is rolled back alone and rejects alone, the others
 * commit: a job of one write statement relies on SQLite's statement rollback (a failed statement leaves
 * nothing behind), any other job runs in its own savepoint (two statements more each: SAVEPOINT, RELEASE).
 * If the transaction fails as a whole (the database busy past its timeout, a disk error at commit, or an
 * error after which SQLite rolled the whole transaction back), every write in it fails with that error and
 * none of them is stored.
 */
import type { Database, Transaction } from "better-sqlite3";
import { sqlite } from "./sqlite-errors.js";

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Job {
  run: () => unknown;
  /** The job makes at most one write statement, its last step: no savepoint needed to undo it alone. */
  singleStatement: boolean;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class WriteBatcher {
  readonly #transaction: Transaction<(jobs: Job[]) => Outcome[]>;
  #pending: Job[] = [];
  /** Transactions committed and the writes in them, for tests and the benchmark. */
  transactions = 0;
  writes = 0;

  constructor(db: Database) {
    // Called inside the outer transaction, a better-sqlite3 transaction function is a SAVEPOINT: a job
    // that throws rolls back to it (its own writes only) and the outer transaction goes on.
    const savepoint = db.transaction((run: () => unknown) => run());
    this.#transaction = db.transaction((jobs: Job[]) =>
      jobs.map((j): Outcome => {
        try {
          return { ok: true, value: j.singleStatement ? j.run() : savepoint(j.run) };
        } catch (error) {
          // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) make SQLite roll the whole transaction back: the jobs
          // before this one are gone and those after it would run outside any transaction. Fail them all.
          if (!db.inTransaction) throw error;
          return { ok: false, error };
        }
      }),
    );
  }

  /**
   * Runs `run` (synchronous SQLite work) inside the next shared transaction, after every job submitted
   * before it; settles after the commit (rejects with what `run` threw, its writes rolled back).
   * `singleStatement`: `run` makes at most one write statement and nothing after it can throw (reads and
   * checks before it may), so a failure leaves nothing to undo and the job needs no savepoint.
   */
  submit<T>(run: () => T, singleStatement = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#pending.length === 0) setImmediate(() => this.#flush());
      this.#pending.push({ run, singleStatement, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  #flush(): void {
    const jobs = this.#pending;
    this.#pending = [];
    let results: Outcome[];
    try {
      results = sqlite("write", () => this.#transaction.immediate(jobs));
    } catch (err) {
      for (const j of jobs) j.reject(err);
      return;
    }
    this.transactions++;
    this.writes += jobs.length;
    for (const [i, j] of jobs.entries()) {
      const outcome = results[i];
      if (outcome?.ok) j.resolve(outcome.value);
      else j.reject(outcome?.error);
    }
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
