/**
 * The embedded store makes no temporary files (PRAGMA temp_store = MEMORY, lib/storage/local/index.ts): appends one
 * at a time split B-tree pages inside savepoints, whose statement journals SQLite would otherwise spill to files in
 * its temporary folder, one file created and unlinked per such split. Observed through that folder: SQLite reads
 * SQLITE_TMPDIR when it first initializes, and this file (its own process under node --test) sets it before any
 * database opens.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, watch, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { QueueRef } from "../../lib/broker/queue-log/queue-index.js";
import { QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import type { MessageRecord } from "../../lib/core/message.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";

const sqliteTemp = mkdtempSync(path.join(os.tmpdir(), "nimbus-sqlite-temp-"));
process.env.SQLITE_TMPDIR = sqliteTemp;

const APPENDS = 1500;
const body = new Uint8Array(1024).fill(97);

function message(i: number): MessageRecord {
  return { bornTimestamp: 0, flag: 0, tags: "", keys: [], properties: { UNIQ_KEY: `u-${i}` }, body, reconsumeTimes: 0 };
}

describe("local store: no temporary files", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-temp-files-"));
  after(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(sqliteTemp, { recursive: true, force: true });
  });

  it(`${APPENDS} appends of 1 KiB one at a time create nothing in SQLite's temporary folder`, async () => {
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
      for (let i = 0; i < APPENDS; i++) await log.append(queues[i % 4] as QueueRef, [message(i)]);
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
