/**
 * @module The message index, kept in the queue log's own index items, on a broker over the embedded store: a
 * send of 32 keyed messages in an object is one index put carrying every id and key (the same requests as a
 * send to a system topic, which keeps none), an inline batch's ids and keys are read from its bytes, a topic
 * with key indexing off keeps ids only, a batch past the item's index budget is found through its object; and
 * the merge of queue scans never skips a hit of a queue that stopped early and goes on where each queue stopped.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type IndexHit, mergeScans, type QueueScan } from "../../lib/broker/query/index-scan.js";
import { MAX_ITEM_INDEX_BYTES } from "../../lib/broker/queue-log/append.js";
import { QUEUE_INDEX_TABLE } from "../../lib/broker/store/index.js";
import { diffCounts } from "../../lib/storage/request-counter.js";
import { openTestBroker, type TestBroker } from "../support/server-fixture.js";

const small = new TextEncoder().encode("x");
const large = new Uint8Array(1024).fill(7);

describe("the message index", () => {
  let t: TestBroker;
  before(async () => {
    t = await openTestBroker();
  });
  after(() => t.close());

  const queue = (topic: string) => ({ topic, brokerName: "broker-a", queueId: 0 });
  const batches = async (topic: string) => (await t.broker.queueLog.indexedBatches(queue(topic), 0, 100)).batches;
  const rawItems = async (topic: string) =>
    (await t.storage.table(QUEUE_INDEX_TABLE).query(`${topic}#broker-a#0`, { limit: 100 })).items;

  it("keeps an object batch's ids and keys in its own index put: no request more than a send that keeps none", async () => {
    const messages = Array.from({ length: 32 }, (_, i) => ({ body: large, keys: [`k${i}`, "all"] }));
    const send = async (topic: string) => {
      await t.broker.topics.upsert(topic, { readQueueNums: 1, writeQueueNums: 1 });
      await t.broker.sender.send({ topic, brokerName: "broker-a", queueId: 0, messages }); // warms caches
      const c0 = t.storage.counter.snapshot();
      const sent = await t.broker.sender.send({ topic, brokerName: "broker-a", queueId: 0, messages });
      return { sent, counts: diffCounts(t.storage.counter.snapshot(), c0) };
    };
    const indexed = await send("IdxA");
    const [item, second, ...more] = await rawItems("IdxA");
    assert.equal(more.length, 0, "one item per send of 32");
    assert.deepEqual(second?.u, indexed.sent.msgIds, "the ids are in the batch's index item");
    assert.deepEqual((second?.k as string[] | undefined)?.slice(0, 3), ["0 k0", "0 all", "1 k1"]);
    assert.equal(typeof item?.ok, "string", "an object batch");
    // A system topic's batches keep no index: the indexed send costs the same requests (and more write units).
    const none = await send("RMQ_SYS_IDX_NONE");
    assert.deepEqual(
      [indexed.counts.tableReads, indexed.counts.tableWrites, indexed.counts.objectPuts],
      [none.counts.tableReads, none.counts.tableWrites, none.counts.objectPuts],
    );
    assert.ok(indexed.counts.writeUnits > none.counts.writeUnits);
    const [, found] = await batches("IdxA");
    assert.deepEqual(found?.ids, indexed.sent.msgIds);
    assert.deepEqual(found?.keys?.slice(0, 2), [
      ["k0", 0],
      ["all", 0],
    ]);
  });

  it("reads an inline batch's ids and keys from its bytes, and keeps only ids for a topic with key indexing off", async () => {
    await t.broker.topics.upsert("IdxIn", { readQueueNums: 1, writeQueueNums: 1 });
    const sent = await t.broker.sender.send({
      topic: "IdxIn",
      brokerName: "broker-a",
      queueId: 0,
      messages: [{ body: small, keys: ["a", "b"] }, { body: small }],
    });
    const [raw] = await rawItems("IdxIn");
    assert.ok(raw?.d instanceof Uint8Array && raw.u === undefined, "inline: no ids written beside the bytes");
    const [inline] = await batches("IdxIn");
    assert.deepEqual(
      [inline?.ids, inline?.keys],
      [
        sent.msgIds,
        [
          ["a", 0],
          ["b", 0],
        ],
      ],
    );

    await t.broker.topics.upsert("IdxOff", { readQueueNums: 1, writeQueueNums: 1 });
    await t.broker.keyIndexSettings.setKeysIndexed("IdxOff", false);
    const off = await t.broker.sender.send({
      topic: "IdxOff",
      brokerName: "broker-a",
      queueId: 0,
      messages: [{ body: small, keys: ["k"] }],
    });
    const offObject = await t.broker.sender.send({
      topic: "IdxOff",
      brokerName: "broker-a",
      queueId: 0,
      messages: Array.from({ length: 16 }, () => ({ body: large, keys: ["k"] })),
    });
    const [first, second] = await batches("IdxOff");
    assert.deepEqual([first?.ids, first?.keys], [off.msgIds, undefined]);
    assert.deepEqual([second?.ids, second?.keys], [offObject.msgIds, undefined]);
  });

  it("finds a batch's ids and keys through its object when they pass the item's budget", async () => {
    await t.broker.topics.upsert("IdxBig", { readQueueNums: 1, writeQueueNums: 1 });
    const longKey = (i: number) => `${"k".repeat(1000)}${i}`;
    const messages = Array.from({ length: 400 }, (_, i) => ({ body: small, keys: [longKey(i)] }));
    assert.ok(400 * 1000 > MAX_ITEM_INDEX_BYTES);
    const sent = await t.broker.sender.send({ topic: "IdxBig", brokerName: "broker-a", queueId: 0, messages });
    const [raw, ...more] = await rawItems("IdxBig");
    assert.equal(more.length, 0);
    assert.ok(typeof raw?.ok === "string" && raw.u === undefined && raw.k === undefined, "the item holds neither");
    const c0 = t.storage.counter.snapshot();
    const [batch] = await batches("IdxBig");
    assert.equal(diffCounts(t.storage.counter.snapshot(), c0).objectGets, 1, "one GET of the object");
    assert.deepEqual(batch?.ids, sent.msgIds);
    assert.deepEqual(batch?.keys?.[399], [longKey(399), 399]);
  });

  it("a merged page stops where a queue stopped early, and each queue goes on where it stopped", () => {
    const at = (storeTimestamp: number, pk: string, offset: number): IndexHit => ({
      storeTimestamp,
      pk,
      offset,
      batchStart: offset,
    });
    // Queue a read everything; queue b stopped after its batch stored at 20 (its budget): a's hit at 30 waits.
    const scans: QueueScan[] = [
      { hits: [at(10, "a", 0), at(30, "a", 5)], itemsRead: 2 },
      { hits: [at(15, "b", 1)], resume: { batchStart: 4, offset: 4 }, lastStored: 20, itemsRead: 1 },
    ];
    const page = mergeScans(scans, 10);
    assert.deepEqual(page.hits, [at(10, "a", 0), at(15, "b", 1)]);
    assert.deepEqual(page.resumes, [
      { batchStart: 5, offset: 5 },
      { batchStart: 4, offset: 4 },
    ]);
    assert.equal(page.more, true);
    // A full page goes on at the first hit not taken; a queue whose hits were all taken and that ended is done.
    const full = mergeScans([{ hits: [at(1, "a", 0), at(2, "a", 1), at(3, "a", 2)], itemsRead: 3 }], 2);
    assert.deepEqual(full.resumes, [{ batchStart: 2, offset: 2 }]);
    const done = mergeScans([{ hits: [at(1, "a", 0)], itemsRead: 1 }], 2);
    assert.deepEqual([done.resumes, done.more], [[undefined], false]);
  });
});
