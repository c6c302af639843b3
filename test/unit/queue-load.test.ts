/**
 * @module A queue's write load from its newest index items (`QueueLog.load`, `topicStatus --load`), with an
 * injected wall clock: the rate is taken from the sampled items' store times to now, so a burst reads near the
 * ceiling, and the same items long after read far below it; a one-key queue's counter counts too.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { QueueLog } from "../../lib/broker/queue-log/index.js";
import { LOAD_SAMPLE } from "../../lib/broker/queue-log/load.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import { record } from "../contract/queue-log-helpers.js";

describe("queue load (topicStatus --load)", () => {
  let dataDir = "";
  let storage: Storage;
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), "nimbus-load-"));
    storage = createLocalStorage({ dataDir });
  });
  afterEach(async () => {
    await storage.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const kib = () => record(new Uint8Array(1024).fill(7));

  it("40 appends of 1 KiB within 50 ms on one key: near its ceiling (2 units each, and the counter's ADDs)", async () => {
    let now = 900_000_000;
    const log = new QueueLog(storage, { now: () => now });
    const q = { topic: "Busy", brokerName: "b", queueId: 0 };
    for (let i = 0; i < 40; i++) await log.append(q, [kib()]);
    now += 50;
    const load = await log.load(q);
    assert.equal(load.indexKeys, 1);
    assert.equal(load.sampledAppends, LOAD_SAMPLE, "the newest items only");
    assert.equal(load.appendsPerSecond, LOAD_SAMPLE / 0.05);
    assert.equal(load.busiestKeyWriteUnits, (2 * LOAD_SAMPLE) / 0.05, "2 write units per 1 KiB item");
    assert.ok(load.nearLimit, `${load.busiestKeyShare} of the ceiling`);

    now += 60_000;
    const later = await log.load(q);
    assert.ok(!later.nearLimit && later.busiestKeyShare < 0.01, "a queue gone quiet reads low at once");
  });

  it("a hot queue: its appends over K keys, each key's share measured", async () => {
    let now = 900_000_000;
    const log = new QueueLog(storage, { now: () => now, indexKeys: 4, rangeUseMs: 60_000 });
    const q = { topic: "Hot", brokerName: "b", queueId: 0 };
    for (let i = 0; i < 40; i++) await log.append(q, [kib()]);
    await log.releaseRanges();
    now += 50;
    const load = await log.load(q);
    assert.equal(load.indexKeys, 4);
    assert.ok(load.sampledAppends >= 40, `every item is sampled (${load.sampledAppends})`);
    assert.ok(load.messagesPerSecond === 40 / 0.05, `${load.messagesPerSecond} messages/s`);
    assert.ok(load.busiestKeyWriteUnits < (2 * 40) / 0.05, "the busiest key takes a share of the writes");
  });
});
