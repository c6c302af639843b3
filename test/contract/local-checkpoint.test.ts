/**
 * The embedded store's WAL checkpoints in their own thread (lib/storage/local/checkpointer.ts): the serving
 * connection's automatic checkpoint is set far out of the way, and the thread copies the WAL into the database
 * file. Observed through the database file itself: until a checkpoint runs, committed pages live only in the WAL,
 * and the main file keeps the size it had.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { Checkpointer, fallbackAutocheckpointPages } from "../../lib/storage/local/checkpointer.js";
import { createLocalStorage, openLocalDatabase } from "../../lib/storage/local/index.js";
import { until } from "../support/held-objects.js";

const body = new Uint8Array(2048).fill(7);

describe("local store: WAL checkpoints in a thread of their own", () => {
  it("the serving connection checkpoints only past the fallback threshold; without the thread, at SQLite's default", () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-ckpt-open-"));
    try {
      const threaded = openLocalDatabase(dataDir, {});
      // 40 MiB of WAL in the new store's 8 KiB pages.
      assert.equal(threaded.pragma("wal_autocheckpoint", { simple: true }), 5120);
      assert.equal(fallbackAutocheckpointPages(4096), 10_240);
      threaded.close();
      const inline = openLocalDatabase(dataDir, { checkpointThread: false });
      assert.equal(inline.pragma("wal_autocheckpoint", { simple: true }), 1000);
      inline.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("the thread copies committed pages into the database file; the commits did not", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-ckpt-thread-"));
    const file = path.join(dataDir, "t.sqlite");
    const db = new Database(file);
    let checkpointer: Checkpointer | undefined;
    try {
      db.pragma("journal_mode = WAL");
      db.pragma("wal_autocheckpoint = 0"); // the commits never checkpoint: only the thread can
      db.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)");
      const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
      for (let i = 0; i < 500; i++) insert.run(body);
      const before = statSync(file).size;
      assert.ok(before < 100 * 1024, `the rows are in the WAL only (${before} bytes in the database file)`);
      checkpointer = new Checkpointer({ file, synchronous: "NORMAL", intervalMs: 5 });
      await until(() => statSync(file).size > 500 * body.byteLength);
      assert.ok((await checkpointer.checkpoints()) >= 1);
      await checkpointer.stop();
      await checkpointer.stop(); // a second stop answers too
      checkpointer = undefined;
      const reader = new Database(file, { readonly: true });
      assert.equal(reader.prepare("SELECT count(*) FROM t").pluck().get(), 500, "every row is there");
      reader.close();
    } finally {
      await checkpointer?.stop();
      db.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("createLocalStorage runs the thread: items written through a table reach the database file, and close stops it", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-ckpt-store-"));
    const storage = createLocalStorage({ dataDir });
    try {
      const table = storage.table({ name: "ckpt", sortKeyType: "number" });
      const file = path.join(dataDir, "tables.sqlite");
      // About 300 pages: far under the serving connection's own threshold, so only the thread checkpoints them.
      for (let i = 0; i < 300; i++) await table.put({ pk: "p", sk: i, b: body });
      await until(() => statSync(file).size > 300 * body.byteLength);
      assert.equal((await table.get({ pk: "p", sk: 299 }))?.b instanceof Uint8Array, true);
    } finally {
      await storage.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
