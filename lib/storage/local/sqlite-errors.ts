/** @module SQLite's errors as Nimbus sees them: lock conflicts are retryable SYSTEM_BUSY, the rest SYSTEM_ERROR. */
import { ErrorCode, NimbusError } from "../../core/errors.js";

/**
 * SQLite's lock conflicts: `SQLITE_BUSY` and `SQLITE_LOCKED`, and their extended codes, which
 * better-sqlite3 reports as they are (`SQLITE_BUSY_RECOVERY`, `SQLITE_BUSY_SNAPSHOT`, `SQLITE_BUSY_TIMEOUT`,
 * `SQLITE_LOCKED_SHAREDCACHE`, ...). None of them applied anything: all are retryable.
 */
export const isBusy = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^SQLITE_(BUSY|LOCKED)(_[A-Z]+)?$/.test(code);
};

/**
 * Runs `fn` again while SQLite answers BUSY, for up to `timeoutMs`. SQLite skips its busy handler in some
 * lock states (switching a new database to WAL, schema changes racing another process's), so processes
 * opening one data folder at the same moment need this on top of `busy_timeout`. Blocks the thread while it
 * waits, as better-sqlite3 itself does.
 */
export function retryWhileBusy<T>(fn: () => T, timeoutMs: number): T {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return fn();
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.min(50, 2 + attempt * 5));
    }
  }
}

/** Runs SQLite work, turning its errors into NimbusErrors (busy: retryable SYSTEM_BUSY). */
export function sqlite<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof NimbusError) throw err;
    if (isBusy(err)) {
      throw new NimbusError(ErrorCode.SYSTEM_BUSY, `${what}: the local database is busy`, { cause: err });
    }
    throw new NimbusError(ErrorCode.SYSTEM_ERROR, `${what}: ${(err as Error).message}`, { cause: err });
  }
}
