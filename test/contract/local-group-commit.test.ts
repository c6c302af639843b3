/**
 * @module Group commit in the embedded store: puts arriving in one turn of the event loop, to several
 * tables and keys, share one SQLite transaction; each keeps its own condition; each is answered only after
 * the commit (another connection on the same folder reads it then).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { createLocalStorage, type SqliteTable } from "../../lib/storage/local/index.js";
import { WriteBatcher } from "../../lib/storage/local/write-batcher.js";
import { ConditionFailedError } from "../../lib/storage/table.js";

describe("embedded store: group commit of puts", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-group-"));
  const storage = createLocalStorage({ dataDir });
  const other = createLocalStorage({ dataDir });
  after(async () => {
    await storage.close();
    await other.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("puts to several tables in one tick: one transaction, own conditions, committed when answered", async () => {
    const index = storage.table({ name: "gc_index", sortKeyType: "number" }) as SqliteTable;
    const offsets = storage.table({ name: "gc_offsets", sortKeyType: "string" }) as SqliteTable;
    await index.put({ pk: "q0", sk: 0, v: "first" });
    const batcher = index.writeBatcher;
    assert.equal(offsets.writeBatcher, batcher, "one batcher per database");
    const before = { transactions: batcher.transactions, writes: batcher.writes };
    const puts = [
      ...Array.from({ length: 8 }, (_, i) =>
        index.put({ pk: `q${i}`, sk: 1, v: `q${i}` }, { condition: { exists: false } }),
      ),
      offsets.put({ pk: "group", sk: "topic", offset: 42 }),
      // Taken slot: this one fails alone.
      index.put({ pk: "q0", sk: 0, v: "second" }, { condition: { exists: false }, returnExistingOnFailure: true }),
    ];
    const settled = await Promise.allSettled(puts);
    assert.equal(batcher.transactions - before.transactions, 1, "one transaction for the ten puts");
    assert.equal(batcher.writes - before.writes, 10);
    assert.deepEqual(
      settled.map((s) => s.status),
      [...Array.from({ length: 9 }, () => "fulfilled"), "rejected"],
    );
    const failed = settled[9];
    assert.ok(failed?.status === "rejected" && failed.reason instanceof ConditionFailedError);
    assert.equal(failed.reason.existing?.v, "first");
    // Committed: another connection on the same folder sees every fulfilled put, and not the refused one.
    const otherIndex = other.table({ name: "gc_index", sortKeyType: "number" });
    for (let i = 0; i < 8; i++) assert.equal((await otherIndex.get({ pk: `q${i}`, sk: 1 }))?.v, `q${i}`);
    assert.equal((await otherIndex.get({ pk: "q0", sk: 0 }))?.v, "first");
    const otherOffsets = other.table({ name: "gc_offsets", sortKeyType: "string" });
    assert.equal((await otherOffsets.get({ pk: "group", sk: "topic" }))?.offset, 42);
  });

  it("puts in different ticks go in different transactions", async () => {
    const index = storage.table({ name: "gc_index", sortKeyType: "number" }) as SqliteTable;
    const before = index.writeBatcher.transactions;
    await index.put({ pk: "t", sk: 1, v: "a" });
    await index.put({ pk: "t", sk: 2, v: "b" });
    assert.equal(index.writeBatcher.transactions - before, 2);
  });
});

describe("embedded store: the group commit keeps order and isolates writes", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-group-order-"));
  const storage = createLocalStorage({ dataDir });
  after(async () => {
    await storage.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("a put and a delete issued in one turn apply in the order issued", async () => {
    const clients = storage.table({ name: "gc_clients", sortKeyType: "string" });
    // A heartbeat and an unregister in the same turn: the client must end unregistered.
    await Promise.all([
      clients.put({ pk: "consumers@G", sk: "client-1", v: 1 }),
      clients.delete({ pk: "consumers@G", sk: "client-1" }),
    ]);
    assert.equal(await clients.get({ pk: "consumers@G", sk: "client-1" }), undefined);
    // And the other way round: the put issued last wins.
    await Promise.all([
      clients.delete({ pk: "consumers@G", sk: "client-2" }),
      clients.put({ pk: "consumers@G", sk: "client-2", v: 2 }),
    ]);
    assert.equal((await clients.get({ pk: "consumers@G", sk: "client-2" }))?.v, 2);
  });

  it("a write that throws is rolled back alone; the others in its transaction commit", async () => {
    const db = new Database(":memory:");
    try {
      db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)");
      const batcher = new WriteBatcher(db);
      const insert = (k: string, v: number) => () => db.prepare("INSERT INTO t (k, v) VALUES (?, ?)").run(k, v);
      const boom = new Error("job failed half-way");
      const settled = await Promise.allSettled([
        batcher.submit(insert("a", 1)),
        // Writes a row, then throws: its row must not survive, and the others must.
        batcher.submit(() => {
          insert("never", 0)();
          throw boom;
        }),
        batcher.submit(insert("b", 2)),
      ]);
      assert.equal(batcher.transactions, 1, "one transaction for the three jobs");
      assert.deepEqual(
        settled.map((s) => s.status),
        ["fulfilled", "rejected", "fulfilled"],
      );
      assert.equal(settled[1]?.status === "rejected" && settled[1].reason, boom);
      assert.deepEqual(db.prepare("SELECT k, v FROM t ORDER BY k").all(), [
        { k: "a", v: 1 },
        { k: "b", v: 2 },
      ]);
    } finally {
      db.close();
    }
  });

  it("a job alone in its transaction needs no savepoint: when it throws, its transaction is rolled back", async () => {
    const statements: string[] = [];
    const db = new Database(":memory:", { verbose: (sql) => statements.push(String(sql)) });
    try {
      db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)");
      const batcher = new WriteBatcher(db);
      const insert = (k: string, v: number) => () => db.prepare("INSERT INTO t (k, v) VALUES (?, ?)").run(k, v);
      const boom = new Error("job failed half-way");
      const failed = batcher.submit(() => {
        insert("never", 0)();
        throw boom;
      });
      await assert.rejects(failed, (err) => err === boom);
      await batcher.submit(() => {
        insert("a", 1)();
        insert("b", 2)();
      });
      assert.equal(batcher.transactions, 2, "a transaction each");
      assert.deepEqual(db.prepare("SELECT k, v FROM t ORDER BY k").all(), [
        { k: "a", v: 1 },
        { k: "b", v: 2 },
      ]);
      assert.deepEqual(
        statements.filter((s) => s.startsWith("SAVEPOINT")),
        [],
      );
      // Two jobs in one turn: each in its savepoint, as before.
      await Promise.all([batcher.submit(insert("c", 3)), batcher.submit(insert("d", 4))]);
      assert.equal(statements.filter((s) => s.startsWith("SAVEPOINT")).length, 2);
    } finally {
      db.close();
    }
  });

  it("a one-statement job that fails leaves nothing behind without a savepoint", async () => {
    const db = new Database(":memory:");
    try {
      db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)");
      const batcher = new WriteBatcher(db);
      const insert = (k: string, v: number) => () => db.prepare("INSERT INTO t (k, v) VALUES (?, ?)").run(k, v);
      const settled = await Promise.allSettled([
        batcher.submit(insert("a", 1), true),
        batcher.submit(insert("a", 2), true), // the key is taken: the statement fails, rolled back by SQLite
        batcher.submit(insert("b", 2), true),
      ]);
      assert.equal(batcher.transactions, 1);
      assert.deepEqual(
        settled.map((s) => s.status),
        ["fulfilled", "rejected", "fulfilled"],
      );
      assert.deepEqual(db.prepare("SELECT k, v FROM t ORDER BY k").all(), [
        { k: "a", v: 1 },
        { k: "b", v: 2 },
      ]);
    } finally {
      db.close();
    }
  });

  it("a failure after which SQLite rolled the whole transaction back fails every job of it", async () => {
    const db = new Database(":memory:");
    try {
      db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)");
      const batcher = new WriteBatcher(db);
      const insert = (k: string, v: number) => () => db.prepare("INSERT INTO t (k, v) VALUES (?, ?)").run(k, v);
      const fatal = new Error("disk I/O error");
      const settled = await Promise.allSettled([
        batcher.submit(insert("a", 1), true),
        // As SQLITE_IOERR or SQLITE_FULL may: the transaction is gone when the job fails.
        batcher.submit(() => {
          db.exec("ROLLBACK");
          throw fatal;
        }, true),
        batcher.submit(insert("b", 2), true),
      ]);
      assert.deepEqual(
        settled.map((s) => s.status === "rejected" && (s.reason as Error).cause),
        [fatal, fatal, fatal],
        "none is answered as stored",
      );
      assert.deepEqual(db.prepare("SELECT k FROM t").all(), [], "and none is: b did not run outside a transaction");
    } finally {
      db.close();
    }
  });

  it("a lone job after which SQLite rolled the transaction back fails as its batch, not as its own error", async () => {
    const db = new Database(":memory:");
    try {
      db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)");
      const batcher = new WriteBatcher(db);
      const fatal = new Error("disk I/O error");
      const alone = batcher.submit(() => {
        db.prepare("INSERT INTO t (k, v) VALUES ('a', 1)").run();
        db.exec("ROLLBACK");
        throw fatal;
      });
      // Failed as its batch fails (a transaction failing whole): the store's error, caused by the job's error.
      await assert.rejects(alone, (err) => err !== fatal && (err as Error).cause === fatal);
      assert.deepEqual(db.prepare("SELECT k FROM t").all(), []);
    } finally {
      db.close();
    }
  });

  it("waits for another process's write lock on a timer, not in SQLite's busy handler: the event loop runs on", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-group-lock-"));
    const storage = createLocalStorage({ dataDir });
    const holder = new Database(path.join(dataDir, "tables.sqlite"));
    try {
      const table = storage.table({ name: "gc_lock", sortKeyType: "number" }) as SqliteTable;
      await table.put({ pk: "p", sk: 0 });
      holder.exec("BEGIN IMMEDIATE"); // as another process committing: it holds the write lock
      const retriesBefore = table.writeBatcher.lockRetries;
      let stored = false;
      const put = table.put({ pk: "p", sk: 1, v: "waited" }).then(() => {
        stored = true;
      });
      // Timers keep firing while the put waits: were it sleeping in SQLite's busy handler, none would.
      let ticks = 0;
      while (table.writeBatcher.lockRetries - retriesBefore < 3) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        ticks++;
      }
      assert.equal(stored, false, "nothing is stored while the other holds the lock");
      assert.ok(ticks >= 1);
      const joined = table.put({ pk: "p", sk: 2, v: "joined" }); // arrives while the first waits: goes after it
      holder.exec("COMMIT");
      await Promise.all([put, joined]);
      assert.equal((await table.get({ pk: "p", sk: 1 }))?.v, "waited");
      assert.equal((await table.get({ pk: "p", sk: 2 }))?.v, "joined");
    } finally {
      if (holder.inTransaction) holder.exec("ROLLBACK");
      holder.close();
      await storage.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
