/**
 * @module The embedded store's durability choice (`flush`, RocketMQ's flushDiskType): both run SQLite with
 * `synchronous=NORMAL`; `sync` acknowledges a commit only after an fsync of the WAL that started after it
 * (wal-sync.ts, on the thread pool: what `synchronous=FULL` does inside COMMIT) and fsyncs object files and
 * their folders before a put returns; `async` (the default) leaves both to the OS's page cache. Both store
 * the same data.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import { createLocalStorage, openLocalDatabase } from "../../lib/storage/local/index.js";
import { WalSync } from "../../lib/storage/local/wal-sync.js";
import { WriteBatcher } from "../../lib/storage/local/write-batcher.js";
import { record } from "./queue-log-helpers.js";

/** SQLite's `PRAGMA synchronous` NORMAL. */
const NORMAL = 1;

describe("local storage: --flush async|sync", () => {
  const root = mkdtempSync(path.join(os.tmpdir(), "nimbus-flush-"));
  after(() => rmSync(root, { recursive: true, force: true }));

  for (const [flush, synchronous] of [
    [undefined, NORMAL],
    ["async", NORMAL],
    ["sync", NORMAL],
  ] as const) {
    it(`flush ${flush ?? "(default)"}: SQLite synchronous=NORMAL, WAL`, () => {
      const dataDir = path.join(root, `pragma-${flush ?? "default"}`);
      mkdirSync(dataDir);
      const db = openLocalDatabase(dataDir, flush === undefined ? {} : { flush });
      try {
        assert.equal(db.pragma("synchronous", { simple: true }), synchronous);
        assert.equal(db.pragma("journal_mode", { simple: true }), "wal");
      } finally {
        db.close();
      }
    });
  }

  it("flush sync: a write is acknowledged only after a WAL sync that followed its commit; a rolled-back one waits for none", async () => {
    const dataDir = path.join(root, "wal-sync");
    mkdirSync(dataDir);
    const db = openLocalDatabase(dataDir, { flush: "sync" });
    const walSync = new WalSync(`${db.name}-wal`);
    try {
      db.exec("CREATE TABLE t (k TEXT PRIMARY KEY)");
      const batcher = new WriteBatcher(db, walSync);
      const insert = (k: string) => batcher.submit(() => db.prepare("INSERT INTO t (k) VALUES (?)").run(k));
      const together = [insert("a"), insert("b")];
      const refused = insert("a").catch((err: unknown) => err); // its own savepoint fails: rolled back alone
      const syncsWhenAcknowledged = await Promise.all(together.map((w) => w.then(() => walSync.syncs)));
      assert.deepEqual(syncsWhenAcknowledged, [1, 1], "one commit, one sync, both acknowledged after it");
      assert.match(String(await refused), /UNIQUE/);
      assert.equal(batcher.transactions, 1);
      await insert("c");
      assert.equal(walSync.syncs, 2, "the next commit syncs again");
      const plain = new WriteBatcher(db);
      await plain.submit(() => db.prepare("INSERT INTO t (k) VALUES (?)").run("d"));
      assert.equal(walSync.syncs, 2, "a batcher without a WalSync (--flush async) syncs nothing");
    } finally {
      await walSync.close();
      db.close();
    }
  });

  for (const flush of ["async", "sync"] as const) {
    it(`flush ${flush}: object batches in new folders and inline batches read back after a reopen`, async () => {
      const dataDir = path.join(root, `data-${flush}`);
      const q = { topic: "Flush", brokerName: "broker-a", queueId: 0 };
      const first = createLocalStorage({ dataDir, flush });
      const log = new QueueLog(first, { inlineThresholdBytes: 64 });
      await log.append(q, [record("inline")]);
      await log.append(q, [record(Buffer.alloc(1000, 7))]);
      await first.close();
      const second = createLocalStorage({ dataDir, flush });
      try {
        const read = await new QueueLog(second).read(q, 0);
        assert.deepEqual(
          read.messages.map((m) => m.body.byteLength),
          [6, 1000],
        );
      } finally {
        await second.close();
      }
    });
  }
});
