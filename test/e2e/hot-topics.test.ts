/**
 * @module Hot topics (`hotTopics`: a queue's index spread over K keys, offsets from leased ranges) through the
 * server, on the embedded store, dynalite and DynamoDB Local: a server that closes seals the unused tail of the
 * range it leased itself (one item over the whole tail: only the owner may), so readers never wait the hole lease
 * for a clean stop; a hot topic deleted and created again goes on at the next offsets in its spread layout (the
 * chain is kept, as for every topic: docs/design.md), whatever the setting says by then; `topicStatus?load=true`
 * measures a queue's write rate against its keys' ceiling. Paths are asserted by the items stored, never by time.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { QUEUE_INDEX_TABLE, queuePk } from "../../lib/broker/queue-log/queue-index.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { Item } from "../../lib/storage/table.js";
import { ok, type StatusRow, text } from "../support/http.js";
import { MODE_LABEL, modeUnavailable, type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { pullFrom, sendTo } from "./queues-suite.js";

const KEYS = 4;
/** Ranges stay the writer's for ten minutes: the one taken is still held when the server closes. */
const RANGE_USE_MS = 600_000;

/** The queue's items: its base key, its spread keys, and its counters (`#ranges` for a spread queue, `#seq` one-key). */
async function itemsOf(storage: Storage, topic: string) {
  const table = storage.table(QUEUE_INDEX_TABLE);
  const pk = queuePk({ topic, brokerName: "broker-a", queueId: 0 });
  const all = async (key: string) => (await table.query(key, { consistent: true, limit: 1000 })).items;
  const spread: Item[] = [];
  for (let k = 0; k < KEYS; k++) spread.push(...(await all(`${pk}#${k}`)));
  spread.sort((a, b) => Number(a.sk) - Number(b.sk));
  return {
    base: await all(pk),
    spread,
    ranges: await table.get({ pk: `${pk}#ranges`, sk: 0 }, { consistent: true }),
    seq: await table.get({ pk: `${pk}#seq`, sk: 0 }, { consistent: true }),
  };
}

function hotTopicCases(mode: ServerMode): void {
  describe(`hot topics through the server: ${MODE_LABEL[mode]}`, { skip: modeUnavailable(mode) ?? false }, () => {
    const topic = uniqueName("Hot");
    const ctx = useTestServer(mode, { hotTopics: { [topic]: KEYS } }, { rangeUseMs: RANGE_USE_MS });
    const storage = () => ctx.server.server.storage;
    const create = () =>
      ctx.http.put(`/topics/${topic}`, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });

    it("a server that closes seals the unused tail of its leased range itself, in one item", async () => {
      ok(await create());
      const offsets: number[] = [];
      for (const body of ["m0", "m1", "m2"])
        offsets.push(ok(await sendTo(ctx.http, topic, "broker-a", 0, body)).queueOffset);
      assert.deepEqual(offsets, [0, 1, 2], "one writer's appends take its range's offsets in order");
      const held = await itemsOf(storage(), topic);
      const end = Number(held.ranges?.next);
      // The first append reserved its own offset; the second a range sized to the writer's pace, the third used it.
      assert.ok(end > 3, `a range beyond the appends is leased (counter at ${end})`);
      assert.deepEqual(
        held.spread.map((i) => [i.sk, i.e ?? "batch"]),
        [
          [0, "batch"],
          [1, "batch"],
          [2, "batch"],
        ],
        "its tail is unsealed while the server runs",
      );

      await ctx.restart({ hotTopics: { [topic]: KEYS } });
      const after = await itemsOf(storage(), topic);
      assert.deepEqual(
        after.spread.filter((i) => i.e === "sealed").map((i) => [i.sk, i.n]),
        [[3, end - 3]],
        "the closing server sealed the whole tail with one item (a reader seals one offset at a time)",
      );
      const read = ok(await pullFrom(ctx.http, topic, "broker-a", 0, 0));
      assert.deepEqual(
        read.messages.map((m) => text(m.body)),
        ["m0", "m1", "m2"],
      );
      assert.equal(read.maxOffset, end, "nothing left for a reader to wait for: the queue ends past the sealed tail");
    });

    it("a hot topic deleted and created again goes on at the next offsets, in its spread layout", async () => {
      const before = await itemsOf(storage(), topic);
      const end = Number(before.ranges?.next);
      ok(await ctx.http.delete(`/topics/${topic}`));
      // The setting changed meanwhile (no hot topics): the queue keeps the layout it was created with.
      await ctx.restart({});
      ok(await create());
      const sent = ok(await sendTo(ctx.http, topic, "broker-a", 0, "again")).queueOffset;
      assert.ok(sent >= end, `no offset is handed out twice (${sent} after ${end})`);
      const items = await itemsOf(storage(), topic);
      assert.deepEqual(
        items.base.map((i) => [i.sk, i.k]),
        [[-1, KEYS]],
        "the base key holds the layout item only",
      );
      assert.equal(items.seq, undefined, "no one-key counter was made for the recreated topic");
      assert.ok(
        items.spread.some((i) => Number(i.sk) === sent && i.e === undefined),
        "the new batch on a spread key",
      );
      const read = ok(await pullFrom(ctx.http, topic, "broker-a", 0, 0, { maxMsgNums: 32 }));
      assert.deepEqual(
        read.messages.map((m) => [m.queueOffset, text(m.body)]),
        [
          [0, "m0"],
          [1, "m1"],
          [2, "m2"],
          [sent, "again"],
        ],
        "the messages before the deletion stay until retention; the new one follows them",
      );
    });

    it("topicStatus?load=true: a queue's appends per second and its busiest key's share of the write ceiling", async () => {
      const status = ok(await ctx.http.get<{ queues: StatusRow[] }>(`/topics/${topic}/status?load=true`)).queues;
      const load = status[0]?.load;
      assert.ok(load !== undefined, "the load is measured when asked");
      assert.equal(load.indexKeys, KEYS);
      assert.ok(load.sampledAppends >= 2, `it read the newest items of the queue (${load.sampledAppends})`);
      assert.ok(load.busiestKeyShare >= 0 && load.busiestKeyShare < 1, "far below the ceiling");
      const plain = ok(await ctx.http.get<{ queues: StatusRow[] }>(`/topics/${topic}/status`)).queues;
      assert.equal(plain[0]?.load, undefined, "not measured unless asked");
    });
  });
}

for (const mode of ["local", "aws", "aws-dynamodb-local"] as const) hotTopicCases(mode);
