/**
 * @module Commits of one queue's offset land in the order they reached the process, and a query reads the commits
 * in flight before it: a 4.x consumer's periodic commit (offset 2) that reached the broker just before mqadmin's
 * reset committed 0 must not land after it (CI saw the reset undone under load), and a oneway commit followed by
 * a query on the same connection reads that commit. The first put is held (a real SQLite store behind it) so the
 * later commit is ready to write first.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Broker } from "../../lib/broker/broker.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { Item, Table } from "../../lib/storage/table.js";
import { waitUntil } from "../support/consumer-helpers.js";
import { openLocalFixture } from "../support/local-fixture.js";
import type { StorageFixture } from "../support/storage-fixture.js";
import { BROKER, popBroker, sendTo, topicWith } from "./pop-helpers.js";

/** `storage` whose offsets-table puts of `offset: held` wait until `release()`; every other call goes through. */
function holdingOffsetPuts(storage: Storage, held: number) {
  const waiting: (() => void)[] = [];
  const landed: number[] = [];
  const wrapped: Storage = {
    ...storage,
    table: (spec) => {
      const table = storage.table(spec);
      if (spec.name !== "offsets") return table;
      const holding: Table = {
        spec: table.spec,
        counter: table.counter,
        get: (key, options) => table.get(key, options),
        add: (key, attribute, delta, options) => table.add(key, attribute, delta, options),
        delete: (key) => table.delete(key),
        query: (pk, options) => table.query(pk, options),
        put: async (item: Item, options) => {
          if (item.offset === held) await new Promise<void>((resolve) => waiting.push(resolve));
          await table.put(item, options);
          if (typeof item.offset === "number") landed.push(item.offset);
        },
      };
      return holding;
    },
  };
  return {
    storage: wrapped,
    waiting,
    landed,
    release: () => {
      for (const go of waiting.splice(0)) go();
    },
  };
}

describe("offset commits of one queue land in arrival order", () => {
  let fixture: StorageFixture;
  before(async () => {
    fixture = await openLocalFixture();
  });
  after(() => fixture.cleanup());

  const setUp = async () => {
    const held = holdingOffsetPuts(fixture.storage, 2);
    const broker: Broker = await popBroker(held.storage);
    const { topic, group } = await topicWith(broker, 2);
    // Messages to commit past (a commit beyond a queue's end is clamped to it).
    await sendTo(broker, topic, 0, ["a", "b", "c"]);
    await sendTo(broker, topic, 1, ["d", "e"]);
    // The group's first commit (its group-topic record too), so the ones below write only offsets.
    await broker.offsets.commit(group, topic, [{ brokerName: BROKER, queueId: 0, offset: 0 }]);
    held.landed.length = 0;
    return { held, broker, topic, group };
  };

  it("a later commit of the queue waits for the earlier one; the last to arrive is the one stored", async () => {
    const { held, broker, topic, group } = await setUp();
    const first = broker.offsets.commit(group, topic, [{ brokerName: BROKER, queueId: 0, offset: 2 }]);
    const second = broker.offsets.commit(group, topic, [{ brokerName: BROKER, queueId: 0, offset: 0 }]);
    // Another queue of the group is not held up by it.
    await broker.offsets.commit(group, topic, [{ brokerName: BROKER, queueId: 1, offset: 1 }]);
    await waitUntil(() => held.waiting.length === 1, "the first commit's put is held");
    assert.deepEqual(held.landed, [1], "queue 0's second commit has not written before the first");
    held.release();
    await Promise.all([first, second]);
    assert.deepEqual(held.landed, [1, 2, 0]);
    const offsets = await broker.offsets.query(group, topic);
    assert.deepEqual(
      offsets.map((o) => [o.queueId, o.offset]),
      [
        [0, 0],
        [1, 1],
      ],
    );
  });

  it("a query waits for the commits in flight, and reads them", async () => {
    const { held, broker, topic, group } = await setUp();
    const commit = broker.offsets.commit(group, topic, [{ brokerName: BROKER, queueId: 0, offset: 2 }]);
    await waitUntil(() => held.waiting.length === 1, "the commit's put is held");
    let answered = false;
    const query = broker.offsets.query(group, topic).then((o) => {
      answered = true;
      return o;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(answered, false, "the query waits for the commit");
    held.release();
    await commit;
    assert.deepEqual(
      (await query).map((o) => [o.queueId, o.offset]),
      [[0, 2]],
    );
  });

  it("a commit that fails lets the next one of its queue go on", async () => {
    const { broker, topic, group } = await setUp();
    const refused = broker.offsets.commit(group, topic, [{ brokerName: BROKER, queueId: 7, offset: 1 }]);
    await assert.rejects(refused, /has no queue 7/);
    await broker.offsets.commit(group, topic, [{ brokerName: BROKER, queueId: 0, offset: 1 }]);
    assert.deepEqual(
      (await broker.offsets.query(group, topic)).map((o) => [o.queueId, o.offset]),
      [[0, 1]],
    );
  });
});
