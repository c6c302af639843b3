/**
 * The embedded store makes no temporary files (PRAGMA temp_store = MEMORY, lib/storage/local/index.ts). Sends to
 * several queues in one turn share a transaction, each in its own savepoint, and a savepoint whose B-tree page
 * splits change more than 64 KiB of pages would have its journal in a file of SQLite's temporary folder. Observed
 * through that folder: SQLite reads SQLITE_TMPDIR when it first initializes, and this file (its own process under
 * node --test) sets it before any database opens.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, watch, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { QueueRef } from "../../lib/broker/queue-log/queue-index.js";
import { QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import type { SqliteTable } from "../../lib/storage/local/sqlite-table.js";
import { record } from "./queue-log-helpers.js";

const sqliteTemp = mkdtempSync(path.join(os.tmpdir(), "nimbus-sqlite-temp-"));
process.env.SQLITE_TMPDIR = sqliteTemp;

const ROUNDS = 400;
const body = new Uint8Array(1024).fill(97);

describe("local store: no temporary files", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-temp-files-"));
  after(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(sqliteTemp, { recursive: true, force: true });
  });

  it(`${ROUNDS} rounds of 4 concurrent 1 KiB sends create nothing in SQLite's temporary folder`, {
    timeout: 60_000,
  }, async () => {
    const seen: string[] = [];
    let sentinelSeen: () => void = () => undefined;
    const sentinel = new Promise<void>((resolve) => {
      sentinelSeen = resolve;
    });
    const watcher = watch(sqliteTemp, (_event, name) => {
      if (name === "sentinel") sentinelSeen();
      else seen.push(String(name));
    });
    const storage = createLocalStorage({ dataDir });
    try {
      const log = new QueueLog(storage);
      const queues: QueueRef[] = [0, 1, 2, 3].map((queueId) => ({
        topic: "TempFiles",
        brokerName: "broker-a",
        queueId,
      }));
      for (const q of queues) await log.append(q, [record(body)]);
      const batcher = (storage.table({ name: "queue-index", sortKeyType: "number" }) as SqliteTable).writeBatcher;
      const before = { transactions: batcher.transactions, writes: batcher.writes };
      for (let i = 0; i < ROUNDS; i++) await Promise.all(queues.map((q) => log.append(q, [record(body)])));
      // The sends shared their transactions (each in its savepoint), the shape that spilled journals to files.
      assert.equal(batcher.writes - before.writes, 4 * ROUNDS);
      assert.ok(batcher.transactions - before.transactions <= 2 * ROUNDS, "two sends or more per transaction");
      // inotify reports in order: once the sentinel's event is here, every file SQLite made before it was reported.
      writeFileSync(path.join(sqliteTemp, "sentinel"), "");
      await sentinel;
      assert.deepEqual(seen, []);
    } finally {
      watcher.close();
      await storage.close();
    }
  });
});
