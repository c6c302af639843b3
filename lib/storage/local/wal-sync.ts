/**
 * @module `--flush sync` without stalling the event loop: SQLite commits with `synchronous=NORMAL` (no fsync
 * inside COMMIT, which better-sqlite3 runs on the main thread), and the write batcher acknowledges a commit
 * only once an `fdatasync` of the WAL file that started after the commit has finished, on libuv's thread
 * pool. That is what `synchronous=FULL` does in WAL mode (the WAL synced at every commit), moved off the main
 * thread: while the disk is slow, `/health`, the load shedder's timers and the next group commit still run.
 * Commits that arrive while a sync runs share the next one (at most one sync running and one waiting).
 * On Linux an fsync flushes the file's dirty pages whichever descriptor wrote them; the WAL file keeps its
 * inode while a connection of this process has the database open (SQLite deletes it only when the last
 * connection closes), so one descriptor, opened at the first sync, serves the store's life.
 */
import { type FileHandle, open } from "node:fs/promises";

export class WalSync {
  readonly #walPath: string;
  #handle: Promise<FileHandle> | undefined;
  #running: Promise<void> | undefined;
  #next: Promise<void> | undefined;
  #closed = false;
  /** Syncs run so far (for tests and the benchmark). */
  syncs = 0;

  constructor(walPath: string) {
    this.#walPath = walPath;
  }

  /** Resolves once a sync of the WAL that started after this call has finished; rejects if it failed. */
  afterCommit(): Promise<void> {
    if (this.#running === undefined) return this.#start();
    if (this.#next === undefined) {
      const begin = () => {
        this.#next = undefined;
        return this.#start();
      };
      this.#next = this.#running.then(begin, begin);
    }
    return this.#next;
  }

  #start(): Promise<void> {
    const run = this.#syncOnce();
    this.#running = run;
    const clear = () => {
      if (this.#running === run) this.#running = undefined;
    };
    run.then(clear, clear);
    return run;
  }

  async #syncOnce(): Promise<void> {
    if (this.#closed) throw new Error("the local store is closed");
    this.#handle ??= open(this.#walPath, "r+");
    let handle: FileHandle;
    try {
      handle = await this.#handle;
    } catch (err) {
      this.#handle = undefined; // the next sync tries to open it again
      throw err;
    }
    await handle.datasync();
    this.syncs++;
  }

  /** Waits for the syncs asked for, then closes the descriptor. */
  async close(): Promise<void> {
    await Promise.allSettled([this.#running, this.#next]);
    this.#closed = true;
    const handle = this.#handle;
    this.#handle = undefined;
    if (handle) await (await handle.catch(() => undefined))?.close();
  }
}
