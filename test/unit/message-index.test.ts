/**
 * @module The message index's write path and paging, on a broker over the embedded store: a send of 32 keyed
 * messages is one index item (not 32), a topic with key indexing off keeps ids only, a group past 256 KiB of
 * ids and keys splits into items that still cover every offset; and the merge of queue scans never skips a hit
 * of a queue that stopped early.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { comparePositions, type IndexPosition, mergeScans } from "../../lib/broker/query/index-scan.js";
import { decodeIndexItem } from "../../lib/broker/query/message-index.js";
import { MESSAGE_INDEX_TABLE } from "../../lib/broker/store/index.js";
import { openTestBroker, type TestBroker } from "../support/server-fixture.js";

const body = new TextEncoder().encode("x");

describe("the message index", () => {
  let t: TestBroker;
  before(async () => {
    t = await openTestBroker();
  });
  after(() => t.close());

  const items = async (pk: string) => {
    const page = await t.storage.table(MESSAGE_INDEX_TABLE).query(pk, { limit: 1000 });
    return page.items.map((i) => decodeIndexItem(i));
  };

  it("writes one item per send batch, with every id and key", async () => {
    await t.broker.topics.upsert("IdxA", { readQueueNums: 1, writeQueueNums: 1 });
    const messages = Array.from({ length: 32 }, (_, i) => ({ body, keys: [`k${i}`, "all"] }));
    const sent = await t.broker.sender.send({ topic: "IdxA", brokerName: "broker-a", queueId: 0, messages });
    const [item, ...more] = await items("IdxA#broker-a#0");
    assert.equal(more.length, 0, "one item for 32 messages");
    assert.deepEqual(item?.ids, sent.msgIds);
    assert.equal(item?.start, sent.queueOffset);
    assert.equal(item?.keys?.length, 64);
    assert.deepEqual(item?.keys?.slice(0, 2), [
      ["k0", 0],
      ["all", 0],
    ]);
  });

  it("keeps only ids for a topic with key indexing off", async () => {
    await t.broker.topics.upsert("IdxOff", { readQueueNums: 1, writeQueueNums: 1 });
    await t.broker.messageIndex.setKeysIndexed("IdxOff", false);
    const sent = await t.broker.sender.send({
      topic: "IdxOff",
      brokerName: "broker-a",
      queueId: 0,
      messages: [{ body, keys: ["k"] }],
    });
    const [item] = await items("IdxOff#broker-a#0");
    assert.deepEqual([item?.ids, item?.keys], [sent.msgIds, undefined]);
  });

  it("splits a group past 256 KiB of ids and keys into items covering every offset", async () => {
    await t.broker.topics.upsert("IdxBig", { readQueueNums: 1, writeQueueNums: 1 });
    const longKey = (i: number) => `${"k".repeat(1000)}${i}`;
    const messages = Array.from({ length: 400 }, (_, i) => ({ body, keys: [longKey(i)] }));
    const sent = await t.broker.sender.send({ topic: "IdxBig", brokerName: "broker-a", queueId: 0, messages });
    const all = await items("IdxBig#broker-a#0");
    assert.ok(all.length >= 2, `${all.length} items`);
    const ids = all.flatMap((b) => b?.ids ?? []);
    assert.deepEqual(ids, sent.msgIds);
    const starts = all.map((b) => b?.start);
    assert.equal(starts[0], sent.queueOffset);
    const keyed = all.flatMap((b) => (b?.keys ?? []).map(([key, i]) => [key, (b?.start ?? 0) + i]));
    assert.deepEqual(keyed[399], [longKey(399), sent.queueOffset + 399]);
  });

  it("a merged page stops where a queue stopped early, and continues from there", () => {
    const at = (storeTimestamp: number, pk: string, offset: number): IndexPosition => ({ storeTimestamp, pk, offset });
    // Queue a read everything; queue b stopped at time 20 (its budget): a's hit at 30 must wait.
    const scans = [
      { hits: [at(10, "a", 0), at(30, "a", 5)], itemsRead: 2 },
      { hits: [at(15, "b", 1)], stoppedAt: at(20, "b", 3), itemsRead: 1 },
    ];
    const page = mergeScans(scans, 10);
    assert.deepEqual(page.hits, [at(10, "a", 0), at(15, "b", 1)]);
    assert.deepEqual(page.next, at(20, "b", 3));
    const full = mergeScans([{ hits: [at(1, "a", 0), at(2, "a", 1), at(3, "a", 2)], itemsRead: 3 }], 2);
    assert.deepEqual(full.next, at(2, "a", 1));
    assert.equal(mergeScans([{ hits: [at(1, "a", 0)], itemsRead: 1 }], 2).next, undefined);
    assert.ok(comparePositions(at(1, "b", 0), at(1, "a", 9)) > 0);
  });
});
