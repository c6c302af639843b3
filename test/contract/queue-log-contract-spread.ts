/**
 * @module The queue log's contract for a hot queue spread over several partition keys (docs/queue-log.md, "Hot
 * queues"), run unchanged on every adapter: writers in many containers take offsets from leased ranges, each
 * item lands on the key its first offset hashes to, readers merge the keys by offset; every acknowledged message
 * is read once, in each writer's order; the unused tail of a range is sealed by its owner; a dead writer's hole is
 * passed through a seal once the hole lease is over (asserted by state, with an injectable clock, never by time);
 * a process configured for one key finds a spread queue spread, and an existing one-key queue stays one-key.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { counterKeyOf, LAYOUT_SK, shardOf } from "../../lib/broker/queue-log/layout.js";
import {
  COUNTER_ATTRIBUTE,
  QUEUE_INDEX_TABLE,
  type QueueRef,
  queuePk,
} from "../../lib/broker/queue-log/queue-index.js";
import { DEFAULT_RESERVATION_LEASE_MS, QueueLog, type QueueLogOptions } from "../../lib/broker/queue-log/queue-log.js";
import { queryAll } from "../../lib/broker/store/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { Item } from "../../lib/storage/table.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import { freshQueue, killableWriter, record, suiteFixture } from "./queue-log-helpers.js";

const KEYS = 4;
const LEASE = DEFAULT_RESERVATION_LEASE_MS;
const text = (body: Uint8Array) => new TextDecoder().decode(body);

/** Every item of the queue: its base key and each of its `KEYS` keys. */
async function itemsOf(storage: Storage, q: QueueRef): Promise<{ base: Item[]; spread: Item[] }> {
  const table = storage.table(QUEUE_INDEX_TABLE);
  const pk = queuePk(q);
  const base = await queryAll(table, pk, { consistent: true });
  const spread: Item[] = [];
  for (let k = 0; k < KEYS; k++) spread.push(...(await queryAll(table, `${pk}#${k}`, { consistent: true })));
  return { base, spread };
}

/** Every message from `offset` on, as a consumer reads it (bounded: at most `polls` pulls). */
async function readAll(log: QueueLog, q: QueueRef, polls = 10_000): Promise<{ offsets: number[]; bodies: string[] }> {
  const offsets: number[] = [];
  const bodies: string[] = [];
  for (let at = 0, n = 0; n < polls; n++) {
    const got = await log.read(q, at, { maxMessages: 64 });
    for (const m of got.messages) {
      offsets.push(m.queueOffset);
      bodies.push(text(m.body));
    }
    if (got.nextBeginOffset === at) return { offsets, bodies };
    at = got.nextBeginOffset;
  }
  throw new Error(`still reading after ${polls} pulls`);
}

export function queueLogSpreadContract(label: string, open: OpenFixture): void {
  describe(`queue log contract, a hot queue spread over ${KEYS} keys: ${label}`, () => {
    const fixture = suiteFixture(open);
    const spread: QueueLogOptions = { indexKeys: KEYS };

    it("16 writers on leased ranges: every acked message once, in each writer's order, items on every key", async () => {
      const { storage, reopen } = fixture();
      const q = freshQueue("Spread");
      const clock = { now: () => 600_000_000 }; // frozen: readers never seal; only owners seal their tails
      const storages = [storage, await reopen(), await reopen()];
      const writers = Array.from(
        { length: 16 },
        (_, i) => new QueueLog(storages[i % storages.length] as Storage, { ...spread, ...clock, rangeUseMs: 60_000 }),
      );
      const acked = new Map<number, string>();
      await Promise.all(
        writers.map(async (log, w) => {
          for (let b = 0; b < 12; b++) {
            const body = `w${w}.${b}`;
            const { queueOffset } = await log.append(q, [record(body)]);
            acked.set(queueOffset, body);
          }
        }),
      );
      // The writers stop: each seals the unused tail of the range it holds, in one item.
      for (const log of writers) await log.releaseRanges();
      const sealedByOwners = writers.reduce((n, log) => n + log.tailsSealed, 0);

      const { base, spread: items } = await itemsOf(storage, q);
      assert.deepEqual(
        base.map((i) => [i.sk, i.k]),
        [[LAYOUT_SK, KEYS]],
        "the base key holds the layout item only",
      );
      const keysUsed = new Set(items.filter((i) => i.e === undefined).map((i) => String(i.pk)));
      assert.equal(keysUsed.size, KEYS, "batches on every key");
      for (const item of items) {
        assert.equal(item.pk, `${queuePk(q)}#${shardOf(Number(item.sk), KEYS)}`, "each item on its offset's key");
      }
      const seals = items.filter((i) => i.e === "sealed");
      assert.equal(seals.length, sealedByOwners, "every unused tail sealed by its owner, nothing else sealed");
      assert.ok(
        items.length - seals.length === 16 * 12,
        `one item per append (${items.length - seals.length} batches for ${16 * 12} appends)`,
      );

      const read = await readAll(new QueueLog(storage, { ...spread, ...clock }), q);
      assert.equal(new Set(read.offsets).size, read.offsets.length, "no offset twice");
      assert.deepEqual(
        read.offsets,
        [...read.offsets].sort((a, b) => a - b),
      );
      assert.deepEqual(new Map(read.offsets.map((o, i) => [o, read.bodies[i]])), acked, "every acked message once");
      for (let w = 0; w < 16; w++) {
        const mine = read.bodies.filter((b) => b.startsWith(`w${w}.`));
        assert.deepEqual(
          mine,
          Array.from({ length: 12 }, (_, b) => `w${w}.${b}`),
          `writer ${w}'s messages in its order`,
        );
      }
      for (const s of storages.slice(1)) await s.close();
    });

    it("batches of 32 lease a slot for the next batch: one counter ADD per two appends, dense offsets, tails sealed by owners", async () => {
      const { storage, reopen } = fixture();
      const q = freshQueue("SpreadBatch");
      const clock = { now: () => 650_000_000 }; // frozen: readers never seal; only owners seal their tails
      const storages = [storage, await reopen()];
      const writers = Array.from(
        { length: 4 },
        (_, w) =>
          new QueueLog(storages[w % storages.length] as Storage, {
            ...spread,
            ...clock,
            rangeUseMs: 60_000,
          }),
      );
      const acked = new Map<number, string>();
      await Promise.all(
        writers.map(async (log, w) => {
          for (let b = 0; b < 8; b++) {
            const bodies = Array.from({ length: 32 }, (_, i) => `w${w}.${b}.${i}`);
            const { queueOffset } = await log.append(
              q,
              bodies.map((body) => record(body)),
            );
            for (const [i, body] of bodies.entries()) acked.set(queueOffset + i, body);
          }
        }),
      );
      for (const log of writers) await log.releaseRanges();
      // The first batch reserves its own 32 (no pace yet); then each ADD takes 64, this batch and the next: 5 ADDs
      // for 8 batches (a range of 32 spare offsets at most would leave each batch its own ADD, and a wasted tail).
      const counter = await storage.table(QUEUE_INDEX_TABLE).get(counterKeyOf(queuePk(q), KEYS), { consistent: true });
      assert.equal(counter?.[COUNTER_ATTRIBUTE], 4 * (32 + 4 * 64), "each writer reserved 32, then 4 × 64");
      assert.deepEqual(
        writers.map((log) => log.tailsSealed),
        [1, 1, 1, 1],
        "each writer seals its last slot, unused",
      );
      const { spread: items } = await itemsOf(storage, q);
      const seals = items.filter((i) => i.e === "sealed");
      assert.deepEqual(
        seals.map((i) => i.n),
        [32, 32, 32, 32],
        "one seal item over each unused slot",
      );
      const read = await readAll(new QueueLog(storage, { ...spread, ...clock }), q);
      assert.equal(read.offsets.length, 4 * 8 * 32, "every message read");
      assert.deepEqual(new Map(read.offsets.map((o, i) => [o, read.bodies[i]])), acked, "every acked message once");
      const ends = Math.max(...read.offsets) + 1;
      assert.equal(
        ends,
        4 * 8 * 32 + 3 * 32,
        "dense: messages and the owners' sealed slots (the last one's past the end)",
      );
      for (let w = 0; w < 4; w++) {
        const mine = read.bodies.filter((b) => b.startsWith(`w${w}.`));
        assert.deepEqual(
          mine,
          Array.from({ length: 8 * 32 }, (_, n) => `w${w}.${Math.floor(n / 32)}.${n % 32}`),
        );
      }
      for (const s of storages.slice(1)) await s.close();
    });

    it("a dead writer's hole: a pull waits within the hole lease, then seals it and passes, nothing lost or twice", async () => {
      const { storage, reopen } = fixture();
      const q = freshQueue("Spread");
      let now = 700_000_000;
      const clock = { now: () => now };
      // Its ranges last a minute: when it dies, the rest of its leased range dies with it (no owner seals it).
      const { log: doomed, kill } = killableWriter(await reopen(), { ...spread, ...clock, rangeUseMs: 60_000 });
      const writer = new QueueLog(await reopen(), { ...spread, ...clock });
      const reader = new QueueLog(storage, { ...spread, ...clock });
      await doomed.append(q, [record("d0")]); // offset 0
      kill();
      // 1..2 handed to this append, and the rest of its range after them: never filled.
      await assert.rejects(doomed.append(q, [record("lost1"), record("lost2")]), /killed/);
      const w3 = (await writer.append(q, [record("w3")])).queueOffset;
      const w4 = (await writer.append(q, [record("w4")])).queueOffset;
      assert.ok(w3 >= 3 && w4 > w3, `later writers are not held up (${w3}, ${w4})`);
      await writer.releaseRanges();

      const first = await reader.read(q, 0);
      assert.deepEqual(
        first.messages.map((m) => m.queueOffset),
        [0],
      );
      assert.equal(first.nextBeginOffset, 1, "the read stops at the hole");
      now += LEASE - 1;
      const waiting = await reader.read(q, 1);
      assert.equal(waiting.status, "NO_NEW_MSG", "within the hole lease a pull waits at the hole");
      assert.equal(waiting.nextBeginOffset, 1);
      now += 1;
      const passed = await reader.read(q, 1);
      assert.deepEqual(
        passed.messages.map((m) => [m.queueOffset, text(m.body)]),
        [
          [w3, "w3"],
          [w4, "w4"],
        ],
        "the pull sealed the hole and passed it",
      );
      const { spread: items } = await itemsOf(storage, q);
      assert.deepEqual(
        items
          .filter((i) => i.e === "sealed" && Number(i.sk) < w3)
          .map((i) => [i.sk, i.n])
          .sort((a, b) => Number(a[0]) - Number(b[0])),
        Array.from({ length: w3 - 1 }, (_, i) => [i + 1, 1]),
        "the hole is sealed, one offset at a time, each on its offset's key",
      );
      assert.deepEqual(await readAll(new QueueLog(storage, { ...spread, ...clock }), q), {
        offsets: [0, w3, w4],
        bodies: ["d0", "w3", "w4"],
      });
    });

    it("a process set to one key finds a spread queue spread; an existing one-key queue stays one-key", async () => {
      const { storage, reopen } = fixture();
      const hot = freshQueue("Spread");
      await new QueueLog(await reopen(), spread).append(hot, [record("s0")]);
      const oneKey = new QueueLog(await reopen());
      const { queueOffset } = await oneKey.append(hot, [record("s1")]);
      assert.equal(queueOffset, 1);
      const { base } = await itemsOf(storage, hot);
      assert.equal(base.length, 1, "nothing written on the base key but the layout item");
      assert.deepEqual((await readAll(oneKey, hot)).bodies, ["s0", "s1"]);

      const cold = freshQueue("Spread");
      await new QueueLog(await reopen()).append(cold, [record("c0")]);
      await new QueueLog(await reopen(), spread).append(cold, [record("c1")]);
      const items = await itemsOf(storage, cold);
      assert.deepEqual(
        items.base.map((i) => i.sk),
        [0, 1],
        "both on the base key",
      );
      assert.equal(items.spread.length, 0);
    });

    it("retention trims a spread queue over all its keys, up to its newest item", async () => {
      const { storage } = fixture();
      const q = freshQueue("Spread");
      let now = 800_000_000;
      const log = new QueueLog(storage, { ...spread, now: () => now, rangeUseMs: 60_000 });
      for (let i = 0; i < 12; i++) await log.append(q, [record(`old${i}`)]);
      now += 60_000;
      const last = await log.append(q, [record("newest")]);
      await log.releaseRanges();
      now += 2 * 3_600_000;
      const trimmed = await log.trim(q, now - 3_600_000);
      // The newest item is the tail its owner sealed after "newest": it keeps the max offset, every batch goes.
      assert.equal(trimmed.deletedMessages, 13, "every batch, whichever key it is on (pages cut per key included)");
      assert.equal(trimmed.minOffset, last.queueOffset + 1);
      const { spread: items } = await itemsOf(storage, q);
      assert.deepEqual(
        items.filter((i) => i.e === undefined),
        [],
      );
    });

    it("a poll reading up to a range not filled yet and one standing at it read two rounds of the keys (newest, the page after), three when the item before is not known", async () => {
      const { storage, reopen } = fixture();
      const q = freshQueue("Spread");
      const clock = { now: () => 800_000_000 }; // frozen: within the hole lease, nothing is sealed
      const { log: doomed, kill } = killableWriter(await reopen(), { ...spread, ...clock });
      await doomed.append(q, [record("d0")]); // offset 0
      kill();
      await assert.rejects(doomed.append(q, [record("lost")]), /killed/); // offset 1: not filled (yet)
      const writer = new QueueLog(storage, { ...spread, ...clock });
      await writer.append(q, [record("w2")]);
      await writer.releaseRanges();
      const reader = new QueueLog(storage, { ...spread, ...clock });
      assert.equal((await reader.read(q, 0)).nextBeginOffset, 1, "the first read stops at the range not filled");
      const again = storage.counter.snapshot().tableReads;
      const read = await reader.read(q, 0);
      assert.deepEqual([read.messages.length, read.nextBeginOffset], [1, 1]);
      // The newest item, and the page from the offset: it shows the gap after the batch, which is not asked again.
      assert.equal(storage.counter.snapshot().tableReads - again, 2 * KEYS);
      const before = storage.counter.snapshot().tableReads;
      const waiting = await reader.read(q, 1);
      assert.equal(waiting.status, "NO_NEW_MSG");
      assert.equal(waiting.nextBeginOffset, 1);
      // The newest item and the page after the offset, once: the item before the gap is the one this process's last
      // read walked last (not asked again), and the min offset is not asked (an item lies before the gap).
      assert.equal(storage.counter.snapshot().tableReads - before, 2 * KEYS);
      const other = new QueueLog(storage, { ...spread, ...clock });
      await other.read(q, 2); // another process: its last read did not walk the item before offset 1
      const fresh = storage.counter.snapshot().tableReads;
      assert.equal((await other.read(q, 1)).status, "NO_NEW_MSG");
      assert.equal(storage.counter.snapshot().tableReads - fresh, 3 * KEYS, "else the item before: a third round");
    });
  });
}
