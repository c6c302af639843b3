/**
 * @module Group commit for the embedded store: the writes (puts and deletes) that arrive in one turn of
 * the event loop (sends to different queues, an offset commit beside them, from any table of one database)
 * run in ONE SQLite transaction (`BEGIN IMMEDIATE` ... `COMMIT`), in arrival order, each with its own
 * condition checked inside it. With `--flush sync` that is one WAL fsync for all of them instead of one
 * each. A write's promise settles only after the transaction has committed: nothing is acknowledged before
 * it is stored (per the flush mode). A write that throws is rolled back alone and rejects alone, the others
 * commit: a job of one write statement relies on SQLite's statement rollback (a failed statement leaves
 * nothing behind), any other job runs in its own savepoint (two statements more each: SAVEPOINT, RELEASE), unless it
 * is alone in its transaction, which is then rolled back whole.
 * If the transaction fails as a whole (the database busy past its timeout, a disk error at commit, or an
 * error after which SQLite rolled the whole transaction back), every write in it fails with that error and
 * none of them is stored.
 *
 * Waiting for the write lock does not hold up the event loop: the transaction asks for the lock without SQLite's
 * busy handler (which sleeps in the calling thread, 1, 2, 5, 10 ms and more, while another process of the same
 * data folder commits), and while another process holds it the batch is tried again on a timer (after 1 ms, then
 * 2, then every 4), until the connection's busy timeout has passed since its first try (then SYSTEM_BUSY, as
 * before). Writes that arrive meanwhile join the batch behind it.
 */
import type { Database, Transaction } from "better-sqlite3";
import { isBusy, sqlite } from "./sqlite-errors.js";

/** How long a batch waits before it asks again for the write lock another process holds: 1 ms, doubling to 4. */
export const LOCK_RETRY_MS = 1;
const MAX_LOCK_RETRY_MS = 4;

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** What a lone job threw, carried out of its transaction (which SQLite then rolls back) to be answered as its own. */
class LoneJobFailed {
  constructor(readonly error: unknown) {}
}

interface Job {
  run: () => unknown;
  /** The job makes at most one write statement, its last step: no savepoint needed to undo it alone. */
  singleStatement: boolean;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class WriteBatcher {
  readonly #transaction: Transaction<(jobs: Job[]) => Outcome[]>;
  /** A batch of one job: the transaction is the job's own, so it needs no savepoint to be undone alone. */
  readonly #loneTransaction: Transaction<(job: Job) => unknown>;
  readonly #db: Database;
  #pending: Job[] = [];
  /** When the batch waiting for the lock first asked for it (`performance.now()`), or undefined: none waits. */
  #lockWaitSince: number | undefined;
  /** The tries of the batch waiting for the lock so far. */
  #lockTries = 0;
  /** The connection's busy timeout (ms): how long a batch may wait for the write lock. */
  readonly #busyTimeoutMs: number;
  /** The statement that gives the connection its busy timeout back after a transaction. */
  readonly #restoreTimeout: string;
  /** Transactions run (committed, or a lone failed write's rolled back) and their writes, for tests and the bench. */
  transactions = 0;
  writes = 0;
  /** Batches tried again because another process held the write lock (for tests and the benchmark). */
  lockRetries = 0;

  constructor(db: Database) {
    this.#db = db;
    this.#busyTimeoutMs = Number(db.pragma("busy_timeout", { simple: true }));
    this.#restoreTimeout = `PRAGMA busy_timeout = ${this.#busyTimeoutMs}`;
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
    // Two statements fewer (SAVEPOINT, RELEASE) and no savepoint journal of the pages it changes: a send one at a
    // time is such a batch. A job that throws rolls the whole transaction back, which holds nothing else.
    this.#loneTransaction = db.transaction((job: Job) => {
      try {
        return job.run();
      } catch (error) {
        // As above: when SQLite already rolled the transaction back, it is the batch's failure, not the job's.
        if (!db.inTransaction) throw error;
        throw new LoneJobFailed(error);
      }
    });
  }

  /**
   * Runs `run` (synchronous SQLite work) inside the next shared transaction, after every job submitted
   * before it; settles after the commit (rejects with what `run` threw, its writes rolled back).
   * `singleStatement`: `run` makes at most one write statement and nothing after it can throw (reads and
   * checks before it may), so a failure leaves nothing to undo and the job needs no savepoint.
   */
  submit<T>(run: () => T, singleStatement = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#pending.length === 0 && this.#lockWaitSince === undefined) setImmediate(() => this.#flush());
      this.#pending.push({ run, singleStatement, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  #flush(): void {
    const jobs = this.#pending;
    this.#pending = [];
    let results: Outcome[];
    try {
      results = sqlite("write", () => this.#immediate(jobs));
    } catch (err) {
      const since = this.#lockWaitSince ?? performance.now();
      if (isBusy((err as { cause?: unknown }).cause) && performance.now() - since < this.#busyTimeoutMs) {
        // Another process holds the write lock: nothing of the batch ran. Ask again soon, the event loop free.
        this.#lockWaitSince = since;
        this.#pending = [...jobs, ...this.#pending];
        this.lockRetries++;
        setTimeout(() => this.#flush(), Math.min(MAX_LOCK_RETRY_MS, LOCK_RETRY_MS * 2 ** this.#lockTries++));
        return;
      }
      this.#lockWaitSince = undefined;
      this.#lockTries = 0;
      for (const j of jobs) j.reject(err);
      this.#flushLater();
      return;
    }
    this.#lockWaitSince = undefined;
    this.#lockTries = 0;
    this.transactions++;
    this.writes += jobs.length;
    for (const [i, j] of jobs.entries()) {
      const outcome = results[i];
      if (outcome?.ok) j.resolve(outcome.value);
      else j.reject(outcome?.error);
    }
    this.#flushLater();
  }

  /** Writes that arrived while a batch waited for the lock go in the next turn's transaction. */
  #flushLater(): void {
    if (this.#pending.length > 0) setImmediate(() => this.#flush());
  }

  /**
   * The shared transaction, its `BEGIN IMMEDIATE` answered at once (busy timeout 0) when another process holds the
   * write lock: SQLite's busy handler would sleep in this thread. The connection's timeout is restored after.
   */
  #immediate(jobs: Job[]): Outcome[] {
    // `exec`, not `pragma`: no statement object or result rows (about 1 µs for the pair, 5 with `pragma`). A
    // prepared PRAGMA cannot be kept: SQLite applies a busy timeout when it compiles the statement.
    this.#db.exec("PRAGMA busy_timeout = 0");
    try {
      const [lone] = jobs;
      if (jobs.length !== 1 || lone === undefined) return this.#transaction.immediate(jobs);
      try {
        return [{ ok: true, value: this.#loneTransaction.immediate(lone) }];
      } catch (err) {
        if (err instanceof LoneJobFailed) return [{ ok: false, error: err.error }];
        throw err;
      }
    } finally {
      this.#db.exec(this.#restoreTimeout);
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
