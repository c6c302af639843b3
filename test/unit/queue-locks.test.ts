/**
 * The broker's queue locks (lib/broker/consume/queue-locks.ts) on both storage adapters (the embedded store, and
 * DynamoDB through dynalite), with a fake clock: a lease refuses other clients until its end plus the
 * skew margin, renews and re-locks say whether the lease continued, an unlock frees the queue at once, a
 * late unlock or renewal of a former holder changes nothing, and of clients racing for a free queue
 * exactly one gets it.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { QueueLockService } from "../../lib/broker/consume/queue-locks.js";
import { CLIENTS_TABLE } from "../../lib/broker/store/tables.js";
import { diffCounts } from "../../lib/storage/request-counter.js";
import { openAwsFixture } from "../support/aws-fixture.js";
import { openLocalFixture } from "../support/local-fixture.js";
import type { OpenFixture, StorageFixture } from "../support/storage-fixture.js";

const Q0 = { brokerName: "broker-a", queueId: 0 };
const Q1 = { brokerName: "broker-a", queueId: 1 };

for (const [label, open] of [
  ["local", openLocalFixture],
  ["aws: dynalite", openAwsFixture],
] as [string, OpenFixture][]) {
  describe(`${label}: queue locks`, () => {
    let fixture: StorageFixture;
    let clock = 1_000_000;
    const service = () =>
      new QueueLockService(fixture.storage.table(CLIENTS_TABLE), { leaseMs: 60_000, skewMarginMs: 5000 }, () => clock);
    before(async () => {
      fixture = await open();
    });
    after(() => fixture.cleanup());

    it("refuses another client until the lease's end plus the margin; then the lock is new, not continued", async () => {
      const locks = service();
      const [a] = await locks.lock("g1", "T", "A", [Q0]);
      assert.deepEqual(a, { ...Q0, locked: true, holder: "A", epoch: 1, leaseMillis: 60_000, continued: false });
      clock += 60_000 + 5000;
      const [refused] = await locks.lock("g1", "T", "B", [Q0]);
      assert.equal(refused?.locked, false);
      assert.equal(refused?.holder, "A");
      clock += 1;
      const [b] = await locks.lock("g1", "T", "B", [Q0]);
      assert.deepEqual(b, { ...Q0, locked: true, holder: "B", epoch: 2, leaseMillis: 60_000, continued: false });
      // A comes back: refused, and its renewal changed nothing.
      const [late] = await locks.lock("g1", "T", "A", [Q0]);
      assert.equal(late?.locked, false);
      assert.equal(late?.holder, "B");
      assert.equal((await locks.holders("g1", "T", [Q0]))[0]?.holder, "B");
    });

    it("a renewal continues the lease, even after it ran out while nobody took it", async () => {
      const locks = service();
      await locks.lock("g2", "T", "A", [Q0, Q1]);
      clock += 20_000;
      const renewed = await locks.lock("g2", "T", "A", [Q0, Q1]);
      assert.deepEqual(
        renewed.map((r) => [r.locked, r.epoch, r.continued]),
        [
          [true, 2, true],
          [true, 2, true],
        ],
      );
      clock += 3_600_000;
      const [again] = await locks.lock("g2", "T", "A", [Q0]);
      assert.equal(again?.continued, true, "nobody held it in between");
    });

    it("an unlock frees the queue at once; a late unlock of a former holder does nothing", async () => {
      const locks = service();
      await locks.lock("g3", "T", "A", [Q0]);
      assert.deepEqual(await locks.unlock("g3", "T", "A", [Q0, Q1]), [Q0], "A held only queue 0");
      const [b] = await locks.lock("g3", "T", "B", [Q0]);
      assert.equal(b?.locked, true);
      assert.equal(b?.epoch, 3);
      assert.deepEqual(await locks.unlock("g3", "T", "A", [Q0]), [], "A no longer holds it");
      assert.equal((await locks.holders("g3", "T", [Q0]))[0]?.holder, "B");
      // A locking again after its own unlock starts a new lease (its cache is gone).
      await locks.unlock("g3", "T", "B", [Q0]);
      const [a] = await locks.lock("g3", "T", "A", [Q0]);
      assert.equal(a?.continued, false);
    });

    it("costs one consistent query and one conditional put per queue to lock, renew or unlock", async () => {
      const locks = service();
      const queues = [0, 1, 2, 3].map((queueId) => ({ brokerName: "broker-a", queueId }));
      for (const step of [
        () => locks.lock("g5", "T", "A", queues),
        () => locks.lock("g5", "T", "A", queues),
        () => locks.unlock("g5", "T", "A", queues),
      ]) {
        const before = fixture.storage.counter.snapshot();
        await step();
        const used = diffCounts(fixture.storage.counter.snapshot(), before);
        assert.deepEqual([used.tableReads, used.readUnits, used.tableWrites, used.writeUnits], [4, 4, 4, 4]);
      }
    });

    it("of clients racing for a free queue, exactly one gets it (the conditional create)", async () => {
      // Separate service instances on separate storages: API instances in separate processes.
      const others = await Promise.all([fixture.reopen(), fixture.reopen(), fixture.reopen()]);
      const services = [fixture.storage, ...others].map(
        (s) => new QueueLockService(s.table(CLIENTS_TABLE), { leaseMs: 60_000, skewMarginMs: 5000 }, () => clock),
      );
      const answers = await Promise.all(services.map((s, i) => s.lock("g4", "T", `C${i}`, [Q0])));
      const winners = answers.flat().filter((a) => a.locked);
      assert.equal(winners.length, 1, JSON.stringify(answers));
      const holder = (await services[0]?.holders("g4", "T", [Q0]))?.[0]?.holder;
      assert.equal(holder, winners[0]?.holder);
    });
  });
}
