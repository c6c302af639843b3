/**
 * @module Exactly-once appends when replies are lost. On DynamoDB (dynalite behind a fault proxy) the
 * SDK itself retries a conditional put whose reply was dropped, and the retry's condition fails on the
 * writer's own item; on the embedded store (a fault wrapper at the port) the put is applied and the
 * caller sees SYSTEM_BUSY. Either way the queue log must recognise its own item and answer its offset:
 * one batch, one index item, one offset range.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { QUEUE_INDEX_TABLE, type QueueRef, queuePk } from "../../lib/broker/queue-log/queue-index.js";
import { QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import { createAwsStorage, ensureBucket, ensureTables } from "../../lib/storage/aws/index.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import { type Emulators, emulatorStorageOptions, startEmulators } from "../support/emulators.js";
import { type FaultProxy, type ProxyFault, startFaultProxy } from "../support/fault-proxy.js";
import { NO_FAULTS, noFaultCounts, withFaults } from "../support/fault-storage.js";
import { record } from "./queue-log-helpers.js";

let queueSeq = 0;
const freshQueue = (): QueueRef => ({ topic: `Faults${++queueSeq}`, brokerName: "broker-a", queueId: 0 });

async function indexItems(storage: Storage, q: QueueRef) {
  return (await storage.table(QUEUE_INDEX_TABLE).query(queuePk(q), { consistent: true })).items;
}

describe("queue log on DynamoDB: a conditional put retried by the SDK after a lost reply", () => {
  let emulators: Emulators;
  let proxy: FaultProxy;
  let storage: Storage;
  /** The fault for the next index PutItem; consumed by the proxy. */
  let nextIndexPutFault: ProxyFault | undefined;

  before(async () => {
    emulators = await startEmulators();
    proxy = await startFaultProxy({
      target: emulators.dynamoEndpoint,
      service: "dynamodb",
      decide: (req) => {
        if (req.dynamoOperation !== "PutItem" || !req.tableName?.endsWith("queue-index")) return undefined;
        const fault = nextIndexPutFault;
        nextIndexPutFault = undefined;
        return fault;
      },
      lateApplyMs: 30,
    });
    const direct = emulatorStorageOptions(emulators, { bucket: "nimbus-faults", tablePrefix: "f-" });
    await ensureTables(direct, [QUEUE_INDEX_TABLE]);
    await ensureBucket(direct);
    storage = createAwsStorage({ ...direct, dynamoEndpoint: proxy.url });
  });
  after(async () => {
    await storage.close();
    await proxy.stop();
    await emulators.stop();
  });

  for (const [label, inlineThresholdBytes] of [
    ["inline batch", 8192],
    ["object batch", 0],
  ] as const) {
    it(`${label}: one append, one index item, one offset range`, async () => {
      const log = new QueueLog(storage, { inlineThresholdBytes });
      const q = freshQueue();
      await log.append(q, [record("before")]);
      const dropsBefore = proxy.counts.droppedReplies;
      nextIndexPutFault = "drop-reply";
      const appended = await log.append(q, [record("a"), record("b")]);
      assert.equal(proxy.counts.droppedReplies, dropsBefore + 1, "the reply was dropped after the put applied");
      assert.equal(appended.queueOffset, 1);
      const items = await indexItems(storage, q);
      assert.deepEqual(
        items.map((i) => [i.sk, i.n]),
        [
          [0, 1],
          [1, 2],
        ],
        "the SDK's retry did not append the batch a second time",
      );
      assert.equal((await log.status(q)).maxOffset, 3);
      const next = await log.append(q, [record("c")]);
      assert.equal(next.queueOffset, 3);
    });
  }

  it("a put applied after the client gave up (late) is recognised too", async () => {
    const log = new QueueLog(storage);
    const q = freshQueue();
    nextIndexPutFault = "late-apply";
    const appended = await log.append(q, [record("late")]);
    assert.equal(appended.queueOffset, 0);
    await new Promise((resolve) => setTimeout(resolve, 100)); // let the late request land
    assert.equal((await indexItems(storage, q)).length, 1);
    assert.equal((await log.append(q, [record("next")])).queueOffset, 1);
  });
});

describe("queue log on the embedded store: a put applied whose answer is lost", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-faults-"));
  const local = createLocalStorage({ dataDir });
  after(async () => {
    await local.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers the offset of its own item instead of SYSTEM_BUSY or a second copy", async () => {
    const counts = noFaultCounts();
    let dropNext = true;
    const faulty = withFaults(local, {
      plan: { ...NO_FAULTS, dropReply: 1 },
      counts,
      applies: (what) => {
        if (what !== "queue-index.put" || !dropNext) return false;
        dropNext = false;
        return true;
      },
    });
    const log = new QueueLog(faulty);
    const q = freshQueue();
    const appended = await log.append(q, [record("x"), record("y")]);
    assert.equal(counts.droppedReplies, 1);
    assert.equal(appended.queueOffset, 0);
    assert.equal((await indexItems(local, q)).length, 1);
    assert.equal((await log.append(q, [record("z")])).queueOffset, 2);
  });
});
