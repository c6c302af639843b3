/**
 * @module The offsets pulls carry (lib/broker/consume/carried-offsets.ts), on the embedded store through the broker's
 * OffsetService: held, written once per queue per interval, read at once by this process, overtaken by a commit,
 * bounded, written on close. Another storage handle on the same folder stands for another process.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Broker } from "../../lib/broker/broker.js";
import { keys, OFFSETS_TABLE } from "../../lib/broker/store/index.js";
import { isNimbusError } from "../../lib/core/errors.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import type { Storage } from "../../lib/storage/storage.js";
import { waitUntil } from "../support/consumer-helpers.js";
import { openLocalFixture } from "../support/local-fixture.js";
import type { StorageFixture } from "../support/storage-fixture.js";

const BROKER = "broker-a";
let seq = 0;

describe("offsets carried by pulls", () => {
  let fixture: StorageFixture;
  let other: Storage;
  const errors: unknown[] = [];
  before(async () => {
    fixture = await openLocalFixture();
    other = await fixture.reopen();
  });
  after(() => fixture.cleanup());

  /** A clock for what the carried offsets remember (ms). */
  let clock = 0;
  /** A broker whose carried offsets wait `intervalMs` (an hour: only a flush, a read or a close writes them). */
  async function brokerWith(intervalMs = 3_600_000, maxPending = 4_096): Promise<Broker> {
    const broker = new Broker(fixture.storage, {
      brokers: [{ cluster: "C", brokerName: BROKER, brokerId: 0, address: "http://127.0.0.1:1" }],
      newMessageId,
      carriedOffsets: { intervalMs, maxPending, onError: (err) => errors.push(err), now: () => clock },
    });
    await broker.registerBrokers();
    return broker;
  }
  async function topicOn(broker: Broker): Promise<{ topic: string; group: string }> {
    seq++;
    const names = { topic: `Carried_${process.pid}_${seq}`, group: `CarriedG_${process.pid}_${seq}` };
    await broker.topics.upsert(names.topic, { readQueueNums: 4, writeQueueNums: 4 });
    // 64 messages in each queue: a commit past a queue's end is clamped to it.
    const messages = Array.from({ length: 64 }, (_, i) => ({ body: new TextEncoder().encode(`m${i}`) }));
    for (let queueId = 0; queueId < 4; queueId++)
      await broker.sender.send({ topic: names.topic, brokerName: BROKER, queueId, messages });
    return names;
  }
  const entry = (queueId: number, offset: number) => ({ brokerName: BROKER, queueId, offset });
  /** What another process reads of the group's offsets: a query of the offsets table through its own handle. */
  async function storedElsewhere(topic: string, group: string): Promise<Map<number, number>> {
    const { items } = await other.table(OFFSETS_TABLE).query(keys.offsets(topic, group), { consistent: true });
    return new Map(items.map((i) => [Number(i.queueId), Number(i.offset)]));
  }
  const writes = () => fixture.storage.counter.snapshot().tableWrites;

  it("holds a queue's carried offsets and writes the newest once, which this process reads at once", async () => {
    const broker = await brokerWith();
    const { topic, group } = await topicOn(broker);
    await broker.offsets.commit(group, topic, [entry(0, 0)], { clientId: "c1", released: false });
    const before = writes();
    for (let offset = 1; offset <= 32; offset++) await broker.offsets.carry(group, topic, entry(0, offset), "c1");
    assert.equal(writes(), before, "nothing written while they wait");
    assert.equal(broker.offsets.carried.pending, 1, "one offset waits: the newest");
    assert.equal((await storedElsewhere(topic, group)).get(0), 0, "another process still reads the old offset");
    assert.deepEqual(await broker.offsets.query(group, topic), [entry(0, 32)], "this process reads the newest");
    assert.equal(writes(), before + 1, "one write for 32 carried offsets");
    assert.equal((await storedElsewhere(topic, group)).get(0), 32);
    const [owner] = await broker.offsets.owners(group, topic);
    assert.equal(owner?.owner, "c1", "the carrying client owns the queue");
    assert.equal(owner?.released, false);
  });

  it("writes what waits once its interval is over", async () => {
    const broker = await brokerWith(20);
    const { topic, group } = await topicOn(broker);
    await broker.offsets.carry(group, topic, entry(1, 7), "c1");
    await waitUntil(async () => (await storedElsewhere(topic, group)).get(1) === 7, "the carried offset written");
    assert.equal(broker.offsets.carried.pending, 0);
  });

  it("a commit of the queue overtakes the offset waiting for it", async () => {
    const broker = await brokerWith();
    const { topic, group } = await topicOn(broker);
    await broker.offsets.carry(group, topic, entry(2, 50), "c1");
    await broker.offsets.carry(group, topic, entry(3, 60), "c1");
    await broker.offsets.commit(group, topic, [entry(2, 10)]);
    await broker.offsets.carried.flush();
    const stored = await storedElsewhere(topic, group);
    assert.equal(stored.get(2), 10, "the commit, not the older carried offset");
    assert.equal(stored.get(3), 60, "another queue's carried offset still written");
  });

  it("does not write an offset again that this process wrote for the same client", async () => {
    const broker = await brokerWith();
    const { topic, group } = await topicOn(broker);
    await broker.offsets.carry(group, topic, entry(0, 5), "c1");
    await broker.offsets.carried.flush();
    const before = writes();
    const skipped = broker.offsets.carried.stats.skippedUnchanged;
    await broker.offsets.carry(group, topic, entry(0, 5), "c1");
    await broker.offsets.carried.flush();
    assert.equal(writes(), before, "a waiting consumer's unchanged offset costs no write");
    assert.equal(broker.offsets.carried.stats.skippedUnchanged, skipped + 1);
    await broker.offsets.carry(group, topic, entry(0, 5), "c2");
    await broker.offsets.carried.flush();
    assert.equal(writes(), before + 1, "another client's is written: it names the queue's new owner");
    assert.equal((await broker.offsets.owners(group, topic))[0]?.owner, "c2");
  });

  it("a waiting consumer's pull after its own commit of the same offset costs no write", async () => {
    const broker = await brokerWith();
    const { topic, group } = await topicOn(broker);
    await broker.offsets.commit(group, topic, [entry(1, 9)], { clientId: "c1", released: false, claim: false });
    const before = writes();
    await broker.offsets.carry(group, topic, entry(1, 9), "c1");
    await broker.offsets.carried.flush();
    assert.equal(writes(), before, "UPDATE_CONSUMER_OFFSET wrote it: the suspended pull's offset is not written again");
    await broker.offsets.commit(group, topic, [{ ...entry(1, 9), successor: "c2" }], {
      clientId: "c1",
      released: true,
    });
    await broker.offsets.carry(group, topic, entry(1, 9), "c1");
    await broker.offsets.carried.flush();
    assert.equal(writes(), before + 2, "after a release the same offset is written: it names the owner again");
  });

  it("a client's periodic commit of offsets this process stored already costs no write", async () => {
    const broker = await brokerWith();
    const { topic, group } = await topicOn(broker);
    await broker.offsets.commitMoved(group, topic, [entry(0, 4), entry(1, 5)], "c1");
    const before = writes();
    await broker.offsets.commitMoved(group, topic, [entry(0, 4), entry(1, 5)], "c1");
    assert.equal(writes(), before, "neither moved");
    await broker.offsets.commitMoved(group, topic, [entry(0, 4), entry(1, 6)], "c1");
    assert.equal(writes(), before + 1, "only the queue that moved");
    await broker.offsets.carry(group, topic, entry(0, 8), "c1");
    await broker.offsets.commitMoved(group, topic, [entry(0, 4)], "c1");
    assert.equal(writes(), before + 2, "a newer carried offset is held: the commit is written (and wins)");
    await broker.offsets.carried.flush();
    assert.equal((await storedElsewhere(topic, group)).get(0), 4);
    await broker.offsets.commitMoved(group, topic, [entry(1, 6)], "c2");
    assert.equal(writes(), before + 3, "another client's is written: it names the queue's new owner");
    assert.equal(broker.offsets.carried.stats.skippedUnmoved, 3, "two queues once, one once");
  });

  it("trusts what it stored for a minute: another process may have written the record since", async () => {
    const broker = await brokerWith();
    const { topic, group } = await topicOn(broker);
    await broker.offsets.commitMoved(group, topic, [entry(2, 7)], "c1");
    await other.table(OFFSETS_TABLE).put({
      pk: keys.offsets(topic, group),
      sk: keys.offsetSk(BROKER, 2),
      brokerName: BROKER,
      queueId: 2,
      offset: 0,
      updatedAt: 0,
    });
    const before = writes();
    clock += 59_999;
    await broker.offsets.commitMoved(group, topic, [entry(2, 7)], "c1");
    await broker.offsets.carry(group, topic, entry(2, 7), "c1");
    await broker.offsets.carried.flush();
    assert.equal(writes(), before, "within the minute: not written again");
    assert.equal((await storedElsewhere(topic, group)).get(2), 0, "the other process's write stands meanwhile");
    clock += 2;
    await broker.offsets.commitMoved(group, topic, [entry(2, 7)], "c1");
    assert.equal(writes(), before + 1, "past the minute: written again");
    assert.equal((await storedElsewhere(topic, group)).get(2), 7, "and storage holds the client's offset again");
  });

  it("writes at once past its bound, and everything that waits on close", async () => {
    const broker = await brokerWith(3_600_000, 2);
    const { topic, group } = await topicOn(broker);
    await broker.offsets.carry(group, topic, entry(0, 1), "c1");
    await broker.offsets.carry(group, topic, entry(1, 2), "c1");
    await broker.offsets.carry(group, topic, entry(0, 3), "c1");
    assert.equal(broker.offsets.carried.pending, 2, "a newer offset of a waiting queue takes its place");
    const atOnce = broker.offsets.carried.stats.writtenAtOnce;
    await broker.offsets.carry(group, topic, entry(2, 4), "c1");
    assert.equal(broker.offsets.carried.stats.writtenAtOnce, atOnce + 1, "a third queue's is written at once");
    assert.equal((await storedElsewhere(topic, group)).get(2), 4);
    await broker.close();
    const stored = await storedElsewhere(topic, group);
    assert.deepEqual([stored.get(0), stored.get(1)], [3, 2], "close wrote what waited");
  });

  it("reports a write that fails and drops it alone", async () => {
    const broker = await brokerWith();
    const { topic, group } = await topicOn(broker);
    const before = errors.length;
    await broker.offsets.carry(group, topic, entry(9, 1), "c1");
    await broker.offsets.carry(group, topic, entry(1, 3), "c1");
    await broker.offsets.carried.flush();
    assert.equal(errors.length, before + 1);
    assert.ok(isNimbusError(errors.at(-1)), "the commit's own error (the topic has no queue 9)");
    assert.equal(broker.offsets.carried.pending, 0);
    assert.deepEqual([...(await storedElsewhere(topic, group))], [[1, 3]], "the other queue's offset written");
  });

  it("a read of the group's topics finds a topic only its held offsets name", async () => {
    const broker = await brokerWith();
    const { topic, group } = await topicOn(broker);
    await broker.offsets.carry(group, topic, entry(0, 2), "c1");
    assert.deepEqual(await broker.offsets.topicsOf(group), [topic]);
    assert.deepEqual(
      (await broker.offsets.progress(group)).map((r) => [r.queueId, r.consumerOffset]),
      [
        [0, 2],
        [1, 0],
        [2, 0],
        [3, 0],
      ],
    );
  });

  it("close waits for a write under way", async () => {
    const broker = await brokerWith();
    const { topic, group } = await topicOn(broker);
    await broker.offsets.carry(group, topic, entry(3, 11), "c1");
    const flushing = broker.offsets.carried.flush();
    await broker.close();
    assert.equal((await storedElsewhere(topic, group)).get(3), 11, "landed before close answered");
    await flushing;
  });

  it("compares a carried offset with what a commit stored, clamped to the queue's end", async () => {
    const broker = await brokerWith();
    const { topic, group } = await topicOn(broker);
    await broker.offsets.commit(group, topic, [entry(2, 1000)], { clientId: "c1", released: false, claim: false });
    assert.equal((await storedElsewhere(topic, group)).get(2), 64, "clamped to the queue's 64 messages");
    const before = writes();
    await broker.offsets.carry(group, topic, entry(2, 64), "c1");
    await broker.offsets.carried.flush();
    assert.equal(writes(), before, "64 is what is stored: not written again");
    await broker.offsets.carry(group, topic, entry(2, 1000), "c1");
    await broker.offsets.carried.flush();
    assert.equal(writes(), before + 1, "1000 is not what is stored: written (and clamped again)");
  });
});
