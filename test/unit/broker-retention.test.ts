/**
 * @module Retention with a fake clock (`broker.applyRetention()`, 72 h by default): old batches are
 * trimmed oldest first, a queue's newest batch never is (the chain rule), deleted topics are trimmed too,
 * and a trimmed batch's object goes with it.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { QUEUE_INDEX_TABLE } from "../../lib/broker/queue-log/index.js";
import { HALF_QUEUES } from "../../lib/broker/transactions/transaction-records.js";
import { openTestBroker, type TestBroker } from "../support/server-fixture.js";

const HOUR = 3_600_000;
const RETENTION = 72 * HOUR;

describe("retention (fake clock)", () => {
  let t: TestBroker;
  let t0 = 0;
  const send = (topic: string, brokerName: string, queueId: number, ...bodies: (string | Uint8Array)[]) =>
    t.broker.sender.send({
      topic,
      brokerName,
      queueId,
      messages: bodies.map((b) => ({ body: typeof b === "string" ? new TextEncoder().encode(b) : b })),
    });
  const queue = (topic: string, queueId = 0) => ({ topic, brokerName: "broker-a", queueId });
  const pullOffsets = async (topic: string, queueOffset: number, queueId = 0) => {
    const r = await t.broker.puller.pull({ consumerGroup: "CG", ...queue(topic, queueId), queueOffset });
    return { status: r.pullStatus, next: r.nextBeginOffset, offsets: r.messages.map((m) => m.queueOffset) };
  };
  /** Moves the clock and renews the brokers' registration, as the scheduled job does every 30 s. */
  const travelTo = async (ms: number) => {
    t.clock.set(ms);
    await t.broker.registerBrokers();
  };
  const objectCount = async () => (await t.storage.objects.list("")).objects.length;

  beforeEach(async () => {
    t = await openTestBroker();
    t0 = t.clock();
  });
  afterEach(() => t.close());

  it("trims batches older than the retention, oldest first, but never a queue's newest batch", async () => {
    await t.broker.topics.upsert("Orders", { readQueueNums: 2, writeQueueNums: 2, brokerNames: ["broker-a"] });
    await send("Orders", "broker-a", 0, "a", "b");
    await send("Orders", "broker-a", 1, "only");
    await travelTo(t0 + HOUR);
    await send("Orders", "broker-a", 0, "c");
    await travelTo(t0 + 2 * HOUR);
    await send("Orders", "broker-a", 0, "d", "e", "f");

    await travelTo(t0 + RETENTION + HOUR - 1);
    const early = await t.broker.applyRetention();
    assert.deepEqual([early.deletedBatches, early.deletedMessages], [1, 2], "only the t0 batch is past retention");

    await travelTo(t0 + RETENTION + 90 * 60_000);
    const report = await t.broker.applyRetention();
    // Two queues of Orders, and the half queues of transactional messages on both brokers (empty here).
    assert.deepEqual(report, { queues: 2 + 2 * HALF_QUEUES, deletedBatches: 1, deletedMessages: 1, garbageFiles: 0 });
    assert.deepEqual(await t.broker.queueLog.status(queue("Orders")), {
      minOffset: 3,
      maxOffset: 6,
      lastUpdateTimestamp: t0 + 2 * HOUR,
    });
    assert.equal((await t.broker.queueLog.status(queue("Orders", 1))).minOffset, 0, "a lone batch is the newest");
    assert.deepEqual(await pullOffsets("Orders", 0), { status: "OFFSET_ILLEGAL", next: 3, offsets: [] });
    assert.deepEqual(await pullOffsets("Orders", 3), { status: "FOUND", next: 6, offsets: [3, 4, 5] });
    assert.deepEqual(await pullOffsets("Orders", 0, 1), { status: "FOUND", next: 1, offsets: [0] });

    await travelTo(t0 + 10 * RETENTION);
    const later = await t.broker.applyRetention();
    assert.deepEqual([later.deletedBatches, later.deletedMessages], [0, 0], "the newest batches stay, however old");
    const sent = await send("Orders", "broker-a", 0, "g");
    assert.equal(sent.queueOffset, 6, "the chain goes on after the kept batch");
  });

  it("trims a deleted topic's queues, keeping each queue's newest batch", async () => {
    await t.broker.topics.upsert("Gone", { readQueueNums: 1, writeQueueNums: 3, brokerNames: ["broker-a"] });
    await send("Gone", "broker-a", 2, "old");
    await travelTo(t0 + HOUR);
    await send("Gone", "broker-a", 2, "newer");
    await t.broker.topics.delete("Gone");

    await travelTo(t0 + RETENTION + 2 * HOUR);
    const report = await t.broker.applyRetention();
    // Gone's three queues and the half queues of both brokers.
    assert.deepEqual([report.queues, report.deletedBatches, report.deletedMessages], [3 + 2 * HALF_QUEUES, 1, 1]);
    assert.deepEqual(await t.broker.queueLog.status(queue("Gone", 2)), {
      minOffset: 1,
      maxOffset: 2,
      lastUpdateTimestamp: t0 + HOUR,
    });
    assert.ok(!(await t.broker.topics.list()).includes("Gone"), "still deleted");
  });

  it("trims a deleted hot topic's queue over every key, keeping its layout, counter and newest item", async () => {
    const hot = await openTestBroker({ config: { hotTopics: { HotGone: 4 } }, clock: t.clock });
    try {
      const sendHot = (...bodies: string[]) =>
        hot.broker.sender.send({
          topic: "HotGone",
          brokerName: "broker-a",
          queueId: 0,
          messages: bodies.map((b) => ({ body: new TextEncoder().encode(b) })),
        });
      await hot.broker.topics.upsert("HotGone", { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
      for (const body of ["a", "b", "c", "d", "e", "f"]) await sendHot(body);
      await hot.broker.close(); // the unused tail of its range sealed by its owner
      hot.clock.set(t0 + HOUR);
      await hot.broker.registerBrokers();
      const last = await sendHot("newest");
      await hot.broker.close();
      await hot.broker.topics.delete("HotGone");

      hot.clock.set(t0 + RETENTION + 2 * HOUR);
      await hot.broker.registerBrokers();
      const report = await hot.broker.applyRetention();
      // The newest item is the tail its owner sealed after "newest": it keeps the max offset (the chain rule).
      assert.equal(report.deletedMessages, 7, "every old message, whichever key it was on");
      const status = await hot.broker.queueLog.status({ topic: "HotGone", brokerName: "broker-a", queueId: 0 });
      assert.equal(status.minOffset, last.queueOffset + 1);
      assert.ok(status.maxOffset > status.minOffset, "the sealed tail keeps the max offset");
      const index = hot.storage.table(QUEUE_INDEX_TABLE);
      const pk = "HotGone#broker-a#0";
      const base = (await index.query(pk, { consistent: true })).items;
      assert.deepEqual(
        base.map((i) => [i.sk, i.k]),
        [[-1, 4]],
        "the layout item stays: the queue keeps its layout",
      );
      assert.notEqual(await index.get({ pk: `${pk}#ranges`, sk: 0 }), undefined, "the counter stays: offsets go on");
      const left: number[] = [];
      for (let k = 0; k < 4; k++) {
        for (const item of (await index.query(`${pk}#${k}`, { consistent: true })).items) {
          if (item.e === undefined) left.push(Number(item.sk));
        }
      }
      assert.deepEqual(left, [], "no batch is left on any key");

      await hot.broker.topics.upsert("HotGone", { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
      const again = await sendHot("again");
      assert.equal(again.queueOffset, status.maxOffset, "recreated, it goes on at the max offset");
    } finally {
      await hot.close();
    }
  });

  it("deletes the object of a trimmed batch stored outside the index", async () => {
    await t.broker.topics.upsert("Big", { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
    const big = new Uint8Array(64 * 1024).fill(1);
    await send("Big", "broker-a", 0, big);
    await travelTo(t0 + HOUR);
    await send("Big", "broker-a", 0, big);
    assert.equal(await objectCount(), 2);
    await travelTo(t0 + RETENTION + 2 * HOUR);
    assert.equal((await t.broker.applyRetention()).deletedBatches, 1);
    assert.equal(await objectCount(), 1);
    assert.deepEqual(await pullOffsets("Big", 1), { status: "FOUND", next: 2, offsets: [1] });
  });

  it("trims queues that a later PUT dropped (8 -> 2), so old messages cannot come back when it grows again", async () => {
    await t.broker.topics.upsert("Shrunk", { readQueueNums: 8, writeQueueNums: 8, brokerNames: ["broker-a"] });
    await send("Shrunk", "broker-a", 5, "old");
    await travelTo(t0 + HOUR);
    await send("Shrunk", "broker-a", 5, "newer");
    await t.broker.topics.upsert("Shrunk", { readQueueNums: 2, writeQueueNums: 2, brokerNames: ["broker-a"] });

    await travelTo(t0 + RETENTION + 2 * HOUR);
    await t.broker.applyRetention();
    assert.equal(
      (await t.broker.queueLog.status(queue("Shrunk", 5))).minOffset,
      1,
      "the batch past retention in dropped queue 5 is still stored",
    );
    await t.broker.topics.upsert("Shrunk", { readQueueNums: 8, writeQueueNums: 8, brokerNames: ["broker-a"] });
    assert.deepEqual(await pullOffsets("Shrunk", 0, 5), { status: "OFFSET_ILLEGAL", next: 1, offsets: [] });
  });
});
