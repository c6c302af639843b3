/**
 * @module The embedded store removes what killed writers leave behind: objects whose index item was
 * never written, and half-written temp files. It does so when the store opens and on every retention
 * run, and never touches an object that is young (an index item may still get it) or that an item owns.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { QUEUE_INDEX_TABLE, queuePk } from "../../lib/broker/queue-log/queue-index.js";
import { QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import { ErrorCode } from "../../lib/core/errors.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import { record } from "./queue-log-helpers.js";

const HOUR = 3_600_000;
const q = { topic: "Garbage", brokerName: "broker-a", queueId: 0 };

/** Sets a file's modification time `ms` into the past. */
function age(file: string, ms: number): void {
  const then = new Date(Date.now() - ms);
  utimesSync(file, then, then);
}

/** A pid that no process has now: one of a child that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(child.stdout.toString());
}

describe("local storage: garbage of killed writers", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-garbage-"));
  const objectsDir = path.join(dataDir, "objects");
  const objectFile = (key: string) => `${path.join(objectsDir, ...key.split("/"))}~`;
  const opened: Storage[] = [];
  const open = () => {
    const storage = createLocalStorage({ dataDir });
    opened.push(storage);
    return storage;
  };
  after(async () => {
    for (const s of opened) await s.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("collects old orphan objects and dead writers' temp files, keeps owned, young and live ones", async () => {
    const storage = open();
    const log = new QueueLog(storage, { inlineThresholdBytes: 0 });
    await log.append(q, [record("owned")]);
    const [item] = (await storage.table(QUEUE_INDEX_TABLE).query(queuePk(q), { consistent: true })).items;
    const ownedKey = String(item?.ok);
    // Collections run one at a time: once this one is over, so are those the opening started (which would
    // otherwise race the garbage made below).
    await storage.collectGarbage?.();
    await storage.objects.put("batches/aa/bb/orphan-old", new Uint8Array([1]));
    await storage.objects.put("batches/aa/cc/orphan-young", new Uint8Array([2]));
    await storage.objects.put("other/not-owned-by-any-table", new Uint8Array([3]));
    const deadTemp = `${objectFile("batches/aa/bb/x")}0badc0de-${deadPid()}.1.tmp`;
    const liveTemp = `${objectFile("batches/aa/bb/y")}0badc0de-${process.pid}.2.tmp`;
    const oldLiveTemp = `${objectFile("batches/aa/bb/z")}0badc0de-${process.pid}.3.tmp`;
    for (const temp of [deadTemp, liveTemp, oldLiveTemp]) writeFileSync(temp, "half");
    for (const file of [objectFile(ownedKey), objectFile("batches/aa/bb/orphan-old"), oldLiveTemp]) age(file, 2 * HOUR);
    age(objectFile("other/not-owned-by-any-table"), 2 * HOUR);

    const report = await storage.collectGarbage?.();
    assert.deepEqual(report, { tempFiles: 2, orphanObjects: 1 });
    await assert.rejects(storage.objects.get("batches/aa/bb/orphan-old"), { code: ErrorCode.OBJECT_NOT_FOUND });
    assert.equal(existsSync(deadTemp), false, "a dead writer's temp file");
    assert.equal(existsSync(oldLiveTemp), false, "a temp file older than the grace");
    assert.equal(existsSync(liveTemp), true, "a live writer's young temp file stays");
    assert.equal(
      (await storage.objects.get("batches/aa/cc/orphan-young")).byteLength,
      1,
      "young: may still get an item",
    );
    assert.equal((await storage.objects.get("other/not-owned-by-any-table")).byteLength, 1, "no table owns it");
    assert.equal((await log.read(q, 0)).messages.length, 1, "the owned object stays");
  });

  it("collects when the store and the queue index open, before any retention run", async () => {
    await open().objects.put("batches/dd/ee/orphan-at-start", new Uint8Array([4]));
    age(objectFile("batches/dd/ee/orphan-at-start"), 2 * HOUR);
    const deadTemp = `${objectFile("batches/dd/ee/w")}0badc0de-${deadPid()}.4.tmp`;
    writeFileSync(deadTemp, "half");
    const restarted = open();
    restarted.table(QUEUE_INDEX_TABLE);
    await restarted.close(); // waits for the collections that opening started
    assert.equal(existsSync(objectFile("batches/dd/ee/orphan-at-start")), false);
    assert.equal(existsSync(deadTemp), false);
  });
});
