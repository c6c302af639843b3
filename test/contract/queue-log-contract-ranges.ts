/**
 * @module The queue log's contract for writers in many containers, run unchanged on every adapter: offsets
 * come from ranges reserved on the queue's counter, so independent writers (each its own storage client and
 * `QueueLog`, one append at a time: no group commit between them) never conflict; a range whose writer died
 * between reserving and filling is sealed after the lease, and a pull waits for it, never skips it; a late
 * writer that finds its range sealed reserves again. Asserted by state, with an injectable clock.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BACKLOG_PAGE_ITEMS } from "../../lib/broker/queue-log/backlog.js";
import { QUEUE_INDEX_TABLE, type QueueRef, queuePk } from "../../lib/broker/queue-log/queue-index.js";
import { DEFAULT_RESERVATION_LEASE_MS, QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import { OBJECT_REPLICATION_GRACE_MS } from "../../lib/broker/queue-log/read.js";
import { queryAll } from "../../lib/broker/store/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import {
  type AppendedBatch,
  appendConcurrently,
  assertChainAndReadBack,
  freshQueue,
  record,
  suiteFixture,
} from "./queue-log-helpers.js";

const text = (body: Uint8Array) => new TextDecoder().decode(body);
const LEASE = DEFAULT_RESERVATION_LEASE_MS;
const HOUR = 3_600_000;

/** A writer that stops after reserving: the `afterReserve` hook of the append it dies in. */
class Died extends Error {}

/** A writer whose appends, once killed, stop right after reserving (its container died there). */
function doomedWriter(storage: Storage, clock: { now: () => number }): { log: QueueLog; kill: () => void } {
  let dead = false;
  const log = new QueueLog(storage, {
    ...clock,
    afterReserve: () => {
      if (dead) throw new Died("killed after reserving");
    },
  });
  return {
    log,
    kill: () => {
      dead = true;
    },
  };
}

/**
 * A queue whose writer died between reserving and filling: "d0", "d1" at offsets 0 and 1, then offsets 2..4
 * reserved and never filled; a live writer and a reader, all on `clock`, which `advance` moves on.
 */
async function withDeadRange(fx: { storage: Storage; reopen: () => Promise<Storage> }) {
  const q = freshQueue("Ranges");
  let now = 200_000_000;
  const clock = { now: () => now };
  const advance = (ms: number) => {
    now += ms;
  };
  const doomed = doomedWriter(await fx.reopen(), clock);
  const writer = new QueueLog(await fx.reopen(), clock);
  const reader = new QueueLog(fx.storage, clock);
  await doomed.log.append(q, [record("d0"), record("d1")]); // offsets 0, 1
  doomed.kill();
  await assert.rejects(doomed.log.append(q, [record("lost0"), record("lost1"), record("lost2")]), Died); // 2..4, never acked
  return { q, clock, advance, writer, reader };
}

/** Every message from `offset` on, as a consumer reads it: offsets in order, none twice. */
async function readAll(log: QueueLog, q: QueueRef, offset = 0): Promise<{ offsets: number[]; bodies: string[] }> {
  const offsets: number[] = [];
  const bodies: string[] = [];
  for (let at = offset; ; ) {
    const got = await log.read(q, at, { maxMessages: 256 });
    for (const m of got.messages) {
      offsets.push(m.queueOffset);
      bodies.push(text(m.body));
    }
    if (got.nextBeginOffset === at) return { offsets, bodies };
    at = got.nextBeginOffset;
  }
}

export function queueLogRangesContract(label: string, open: OpenFixture): void {
  describe(`queue log contract, writers in many containers: ${label}`, () => {
    const fixture = suiteFixture(open);

    it("32 independent writers, one append at a time each: every acked message once, gap-free, no conflicts", async () => {
      const { storage, reopen } = fixture();
      const q = freshQueue("Ranges");
      const storages: Storage[] = [storage, await reopen(), await reopen(), await reopen()];
      const before = storages.map((s) => s.counter.snapshot());
      const batches: AppendedBatch[] = await appendConcurrently(storages, q, { appenders: 32, batchesEach: 8 });
      const writes = storages.reduce(
        (n, s, i) => n + s.counter.snapshot().tableWrites - (before[i]?.tableWrites ?? 0),
        0,
      );
      await assertChainAndReadBack(new QueueLog(storage), q, batches, 32 * 8);
      // Every page: the object batches' items carry their ids and keys (these keys hold the 12 KB bodies), past 1 MB.
      const items = await queryAll(storage.table(QUEUE_INDEX_TABLE), queuePk(q), { consistent: true });
      assert.equal(items.length, 32 * 8, "one index item per append: nothing sealed, nothing merged");
      // Each append: one add and one put. The first appends of a new queue also race to create its counter
      // (a failed add and a create each, at most): that is all. No append ever lost a conditional put.
      assert.ok(writes >= 2 * 32 * 8 && writes <= 2 * 32 * 8 + 2 * 32, `${writes} table writes for ${32 * 8} appends`);
      for (const s of storages.slice(1)) await s.close();
    });

    it("a writer killed between reserving and filling: a pull waits, passes the range once it is sealed, loses nothing", async () => {
      const { storage } = fixture();
      const { q, clock, advance, writer, reader } = await withDeadRange(fixture());
      const acked = [];
      for (const name of ["w5", "w6"]) acked.push(await writer.append(q, [record(name)]));
      assert.deepEqual(
        acked.map((a) => a.queueOffset),
        [5, 6],
        "later writers are not held up by the dead range",
      );

      const first = await reader.read(q, 0);
      assert.deepEqual(
        first.messages.map((m) => m.queueOffset),
        [0, 1],
      );
      assert.equal(first.nextBeginOffset, 2, "the read stops at the unfilled range");
      const waiting = await reader.read(q, 2);
      assert.equal(waiting.status, "NO_NEW_MSG", "within the lease a pull waits at the range");
      assert.equal(waiting.nextBeginOffset, 2);
      assert.equal(waiting.maxOffset, 7);

      advance(LEASE - 1);
      assert.equal((await reader.read(q, 2)).nextBeginOffset, 2, "still waiting one ms before the lease ends");
      advance(1);
      const passed = await reader.read(q, 2);
      assert.equal(passed.status, "FOUND");
      assert.deepEqual(
        passed.messages.map((m) => [m.queueOffset, text(m.body)]),
        [
          [5, "w5"],
          [6, "w6"],
        ],
      );
      const items = (await storage.table(QUEUE_INDEX_TABLE).query(queuePk(q), { consistent: true })).items;
      assert.deepEqual(
        items.filter((i) => i.e === "sealed").map((i) => i.sk),
        [2, 3, 4],
        "the dead range is sealed, one offset at a time",
      );
      assert.deepEqual(await readAll(new QueueLog(storage, clock), q), {
        offsets: [0, 1, 5, 6],
        bodies: ["d0", "d1", "w5", "w6"],
      });
    });

    it("a backlog counts messages, not offsets: sealed and unfilled ranges are no lag; past one page, an upper bound", async () => {
      const { q, advance, writer, reader } = await withDeadRange(fixture());
      await writer.append(q, [record("b5")]);
      await writer.append(q, [record("b6"), record("b7")]); // max offset 8, 5 messages
      assert.equal((await reader.status(q)).maxOffset, 8);
      const count = async (from: number, to = 8) => reader.backlog(q, from, to);
      // Within the lease the range is unfilled: not a message (yet).
      assert.deepEqual(await count(0), { messages: 5, exact: true });
      advance(LEASE);
      assert.equal((await reader.read(q, 2)).messages[0]?.queueOffset, 5, "the pull sealed the range and passed it");
      assert.deepEqual(await count(0), { messages: 5, exact: true }, "8 offsets, 3 of them sealed");
      assert.deepEqual(await count(1), { messages: 4, exact: true }, "from inside a batch: its rest counts");
      assert.deepEqual(await count(2), { messages: 3, exact: true }, "from the sealed range");
      assert.deepEqual(await count(7), { messages: 1, exact: true });
      assert.deepEqual(await count(8), { messages: 0, exact: true });
      assert.deepEqual(await count(0, 6), { messages: 3, exact: true }, "a span ending inside the log");
      // More items than one page: exact over the page, the offsets beyond it counted as messages.
      for (let i = 0; i < BACKLOG_PAGE_ITEMS + 8; i++) await writer.append(q, [record(`m${i}`)]);
      const tail = (await reader.status(q)).maxOffset;
      assert.equal(tail, 8 + BACKLOG_PAGE_ITEMS + 8);
      const long = await count(0, tail);
      assert.equal(long.exact, false);
      assert.equal(long.messages, tail - 3, "upper bound: the page saw the seals, the rest are all messages here");
      assert.ok(long.messages <= tail, "never above the offsets");
      assert.deepEqual(await count(tail - 8, tail), { messages: 8, exact: true });
    });

    it("a late writer that finds its range sealed reserves again; its message is acked once, after the seal", async () => {
      const { storage, reopen } = fixture();
      const q = freshQueue("Ranges");
      let now = 300_000_000;
      const clock = { now: () => now };
      let release: () => void = () => undefined;
      let hold = false;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const late = new QueueLog(await reopen(), {
        ...clock,
        afterReserve: async () => {
          if (hold) {
            hold = false;
            await held;
          }
        },
      });
      const writer = new QueueLog(await reopen(), clock);
      const reader = new QueueLog(storage, clock);
      await writer.append(q, [record("a0")]);
      hold = true;
      const lateAppend = late.append(q, [record("late")]); // reserves offset 1, then stalls past the lease
      while (hold) await new Promise((resolve) => setImmediate(resolve));
      await writer.append(q, [record("a2")]);
      now += LEASE;
      const passed = await reader.read(q, 1);
      assert.deepEqual(
        passed.messages.map((m) => m.queueOffset),
        [2],
        "offset 1 was sealed",
      );
      release();
      const acked = await lateAppend;
      assert.equal(acked.queueOffset, 3, "a new range, after everything the reader passed");
      assert.deepEqual(await readAll(reader, q), { offsets: [0, 2, 3], bodies: ["a0", "a2", "late"] });
    });

    it("readers racing writers never skip: every offset read in order, each acked message once", async () => {
      const { storage, reopen } = fixture();
      const q = freshQueue("Ranges");
      const clock = { now: () => 400_000_000 }; // frozen: no lease ever ends, so nothing can be sealed
      const storages = [await reopen(), await reopen()];
      const writers = Array.from({ length: 12 }, (_, i) => new QueueLog(storages[i % 2] as Storage, clock));
      const acked = new Map<number, string>();
      let writing = true;
      const writes = Promise.all(
        writers.map(async (log, w) => {
          for (let b = 0; b < 10; b++) {
            const body = `w${w}.${b}`;
            const { queueOffset } = await log.append(q, [record(body)]);
            acked.set(queueOffset, body);
          }
        }),
      ).finally(() => {
        writing = false;
      });
      const reader = new QueueLog(storage, clock);
      const seen: [number, string][] = [];
      let at = 0;
      for (let polls = 0; writing || at < 120; polls++) {
        assert.ok(polls < 100_000, `the reader is stuck at ${at}`);
        const got = await reader.read(q, at, { maxMessages: 7 });
        for (const m of got.messages) {
          assert.equal(m.queueOffset, seen.length, "the next offset, nothing skipped");
          seen.push([m.queueOffset, text(m.body)]);
        }
        at = got.nextBeginOffset;
        if (got.messages.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await writes;
      assert.deepEqual(
        seen.map(([offset]) => offset),
        Array.from({ length: 120 }, (_, i) => i),
        "no offset skipped, none twice",
      );
      assert.deepEqual(new Map(seen), acked);
      for (const s of storages) await s.close();
    });

    it("retention seals an old unfilled range and trims past it; a replica never seals", async () => {
      const { storage, reopen } = fixture();
      const q = freshQueue("Ranges");
      let now = 500_000_000;
      const clock = { now: () => now };
      const doomed = doomedWriter(await reopen(), clock);
      const writer = new QueueLog(storage, clock);
      await writer.append(q, [record("o0")]);
      doomed.kill();
      await assert.rejects(doomed.log.append(q, [record("never")]), Died); // offset 1
      await writer.append(q, [record("o2")]);
      await writer.append(q, [record("o3")]);
      now += LEASE;
      const replica = new QueueLog(storage, { ...clock, objectReplicationGraceMs: OBJECT_REPLICATION_GRACE_MS });
      const onReplica = await replica.read(q, 1);
      assert.equal(onReplica.status, "NO_NEW_MSG", "a replica waits for the master's seal");
      now += 2 * HOUR;
      const trimmed = await writer.trim(q, now - HOUR);
      assert.equal(trimmed.deletedBatches, 2, "o0 and o2; o3 is the newest");
      assert.equal(trimmed.minOffset, 3);
      assert.deepEqual(await readAll(writer, q, 3), { offsets: [3], bodies: ["o3"] });
      assert.equal((await writer.read(q, 0)).status, "OFFSET_ILLEGAL");
      const appended = await writer.append(q, [record("o4")]);
      assert.equal(appended.queueOffset, 4);
      assert.equal((await writer.status(q)).minOffset, 3);
    });
  });
}
