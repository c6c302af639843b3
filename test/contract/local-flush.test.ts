/**
 * @module The embedded store's durability choice (`flush`, RocketMQ's flushDiskType): `sync` runs SQLite
 * with `synchronous=FULL` and fsyncs object files and their folders before a put returns; `async` (the
 * default) runs `synchronous=NORMAL` and leaves objects to the OS's page cache. Both store the same data.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import { createLocalStorage, openLocalDatabase } from "../../lib/storage/local/index.js";
import { record } from "./queue-log-helpers.js";

/** SQLite's `PRAGMA synchronous` values. */
const NORMAL = 1;
const FULL = 2;

describe("local storage: --flush async|sync", () => {
  const root = mkdtempSync(path.join(os.tmpdir(), "nimbus-flush-"));
  after(() => rmSync(root, { recursive: true, force: true }));

  for (const [flush, synchronous] of [
    [undefined, NORMAL],
    ["async", NORMAL],
    ["sync", FULL],
  ] as const) {
    it(`flush ${flush ?? "(default)"}: SQLite synchronous=${synchronous === FULL ? "FULL" : "NORMAL"}`, () => {
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
