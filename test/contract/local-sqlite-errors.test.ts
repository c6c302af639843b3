/**
 * @module How the embedded adapter maps SQLite's errors: every lock conflict, extended codes included
 * (better-sqlite3 reports `SQLITE_BUSY_SNAPSHOT`, `SQLITE_BUSY_RECOVERY`, `SQLITE_BUSY_TIMEOUT` as they
 * are), is the retryable SYSTEM_BUSY; anything else is SYSTEM_ERROR.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { ErrorCode, isNimbusError, type NimbusError } from "../../lib/core/errors.js";
import { retryWhileBusy, sqlite } from "../../lib/storage/local/sqlite-errors.js";

/** What `sqlite()` turns `err` into. */
function mapped(err: unknown): NimbusError {
  try {
    sqlite("op", () => {
      throw err;
    });
  } catch (out) {
    if (isNimbusError(out)) return out;
    throw out;
  }
  throw new Error("sqlite() did not throw");
}

const sqliteError = (code: string) => Object.assign(new Error("database is locked"), { code });

describe("local storage: SQLite error codes", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-sqlite-errors-"));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it("a real SQLITE_BUSY_SNAPSHOT (a WAL reader upgrading after another connection wrote) is SYSTEM_BUSY", () => {
    const file = path.join(dataDir, "snapshot.sqlite");
    const reader = new Database(file);
    const writer = new Database(file);
    try {
      reader.pragma("journal_mode = WAL");
      reader.exec("CREATE TABLE t (x)");
      reader.exec("BEGIN");
      reader.prepare("SELECT * FROM t").all(); // the read snapshot is taken here
      writer.exec("INSERT INTO t VALUES (1)");
      let raised: unknown;
      try {
        reader.exec("INSERT INTO t VALUES (2)");
      } catch (err) {
        raised = err;
      }
      assert.equal((raised as { code?: unknown }).code, "SQLITE_BUSY_SNAPSHOT");
      const out = mapped(raised);
      assert.equal(out.code, ErrorCode.SYSTEM_BUSY);
      assert.equal(out.retryable, true);
      assert.equal(out.cause, raised);
    } finally {
      reader.close();
      writer.close();
    }
  });

  for (const code of ["SQLITE_BUSY", "SQLITE_BUSY_RECOVERY", "SQLITE_BUSY_TIMEOUT", "SQLITE_LOCKED_SHAREDCACHE"]) {
    it(`${code} is SYSTEM_BUSY (retryable)`, () => {
      assert.equal(mapped(sqliteError(code)).code, ErrorCode.SYSTEM_BUSY);
    });
  }

  for (const code of ["SQLITE_CONSTRAINT_PRIMARYKEY", "SQLITE_IOERR", "SQLITE_BUSYNESS", undefined]) {
    it(`${String(code)} is SYSTEM_ERROR`, () => {
      assert.equal(mapped(sqliteError(code as string)).code, ErrorCode.SYSTEM_ERROR);
    });
  }

  it("retryWhileBusy retries extended busy codes and gives up on other errors at once", () => {
    let calls = 0;
    const value = retryWhileBusy(() => {
      calls++;
      if (calls < 3) throw sqliteError("SQLITE_BUSY_RECOVERY");
      return "done";
    }, 10_000);
    assert.equal(value, "done");
    assert.equal(calls, 3);
    let constraintCalls = 0;
    assert.throws(
      () =>
        retryWhileBusy(() => {
          constraintCalls++;
          throw sqliteError("SQLITE_CONSTRAINT");
        }, 10_000),
      { code: "SQLITE_CONSTRAINT" },
    );
    assert.equal(constraintCalls, 1);
  });
});
