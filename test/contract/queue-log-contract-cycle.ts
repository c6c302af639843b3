/**
 * @module The queue log's contract for the flush cycle of one process's object writes, run on every adapter, by
 * path (the object puts held by the test): after an object that held a merged group, the senders' next sends
 * take their groups together at the turn and share one PUT, whatever queues they pick; nothing is lost; a failed
 * PUT fails every group in it and writes no index item for any of them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { QUEUE_INDEX_TABLE, type QueueRef, queuePk } from "../../lib/broker/queue-log/queue-index.js";
import { QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import type { Storage } from "../../lib/storage/storage.js";
import { type HeldPut, turns, until, withHeldObjects } from "../support/held-objects.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import { freshQueue, record, suiteFixture } from "./queue-log-helpers.js";

const text = (body: Uint8Array) => new TextDecoder().decode(body);

/**
 * Queue `a` through one merged group stored in an object: `a1` alone in the first object, `a2` and `a3` waiting
 * behind it and merged into the second. The cycle then awaits 2 senders.
 */
async function afterMergedObject(log: QueueLog, a: QueueRef, puts: HeldPut[]): Promise<void> {
  const a1 = log.append(a, [record("a1")]);
  const merged = [log.append(a, [record("a2")]), log.append(a, [record("a3")])];
  await until(() => puts.length === 1);
  puts[0]?.release();
  await a1;
  await until(() => puts.length === 2);
  puts[1]?.release();
  assert.deepEqual(
    (await Promise.all(merged)).map((r) => r.queueOffset),
    [1, 2],
  );
}

const items = async (storage: Storage, q: QueueRef) =>
  (await storage.table(QUEUE_INDEX_TABLE).query(queuePk(q), { consistent: true })).items.filter(
    (item) => typeof item.ok === "string",
  );

export function queueLogCycleContract(label: string, open: OpenFixture): void {
  describe(`queue log contract, the flush cycle of object writes: ${label}`, () => {
    const fixture = suiteFixture(open);
    /** Every batch to an object; the cycle's bound a minute (never reached: each step is taken by the path). */
    const openLog = () => {
      const held = withHeldObjects(fixture().storage);
      return { ...held, log: new QueueLog(held.storage, { inlineThresholdBytes: 0, flushCycleWaitMs: 60_000 }) };
    };

    it("the senders' next sends, on other queues, wait for each other and go in ONE PUT; nothing lost", async () => {
      const { storage, puts, log } = openLog();
      const [a, b, c] = [freshQueue("CycleA"), freshQueue("CycleB"), freshQueue("CycleC")] as const;
      await afterMergedObject(log, a, puts);
      const b1 = log.append(b, [record("b1")]);
      await turns(5);
      assert.equal(puts.length, 2, "b's group waits: one of the two senders is back");
      const c1 = log.append(c, [record("c1"), record("c2")]);
      await until(() => puts.length === 3);
      await turns(5);
      assert.equal(puts.length, 3, "one PUT for both");
      puts[2]?.release();
      assert.deepEqual([(await b1).queueOffset, (await c1).queueOffset], [0, 0]);
      const [ib, ic] = [await items(storage, b), await items(storage, c)];
      assert.equal(ib[0]?.ok, ic[0]?.ok, "b's and c's index items name one object");
      assert.equal(ib[0]?.ok, puts[2]?.key);
      for (const [q, bodies] of [
        [a, ["a1", "a2", "a3"]],
        [b, ["b1"]],
        [c, ["c1", "c2"]],
      ] as const) {
        assert.deepEqual(
          (await log.read(q, 0, { maxMessages: 10 })).messages.map((m) => text(m.body)),
          bodies,
        );
      }
    });

    it("a failed PUT fails every group in it: no index item for any; the queues append on afterwards", async () => {
      const { storage, puts, log } = openLog();
      const [a, b, c] = [freshQueue("CycleA"), freshQueue("CycleB"), freshQueue("CycleC")] as const;
      await afterMergedObject(log, a, puts);
      const failing = [log.append(b, [record("b1")]), log.append(c, [record("c1")])];
      await until(() => puts.length === 3);
      puts[2]?.release(new Error("S3 said no"));
      const settled = await Promise.allSettled(failing);
      assert.deepEqual(
        settled.map((s) => s.status),
        ["rejected", "rejected"],
      );
      assert.deepEqual([(await items(storage, b)).length, (await items(storage, c)).length], [0, 0]);
      const later = [log.append(b, [record("b2")]), log.append(c, [record("c2")])];
      // No cycle on (the failed object stored nothing): b2 goes at once, c2 in the next object.
      await until(() => puts.length === 4);
      puts[3]?.release();
      await until(() => puts.length === 5);
      puts[4]?.release();
      assert.deepEqual(
        (await Promise.all(later)).map((r) => r.queueOffset),
        [0, 0],
        "nothing reserved for the failed groups",
      );
      assert.deepEqual(
        (await log.read(b, 0)).messages.map((m) => text(m.body)),
        ["b2"],
      );
    });
  });
}
