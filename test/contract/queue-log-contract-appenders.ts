/**
 * @module The queue log's contract for the writers of one process, run unchanged on every adapter:
 * appends to one queue through one `QueueLog` wait in line (and small ones merge) instead of racing
 * each other through conditional puts, and cached tails age on a monotonic clock, so a wall clock
 * stepped back cannot keep a stale tail trusted into trimmed space.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { QUEUE_INDEX_TABLE, queuePk } from "../../lib/broker/queue-log/queue-index.js";
import { DEFAULT_MERGE_LIMIT_BYTES, QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import { encodeBatch } from "../../lib/core/message-codec.js";
import { diffCounts } from "../../lib/storage/request-counter.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import { freshQueue, record, suiteFixture } from "./queue-log-helpers.js";

const HOUR = 3_600_000;
const text = (body: Uint8Array) => new TextDecoder().decode(body);

export function queueLogAppendersContract(label: string, open: OpenFixture): void {
  describe(`queue log contract, one process's writers: ${label}`, () => {
    const fixture = suiteFixture(open);

    it("24 concurrent appends through one QueueLog never lose a race, and each gets its own offsets", async () => {
      const { storage } = fixture();
      const log = new QueueLog(storage, { inlineThresholdBytes: 1024 });
      const q = freshQueue("Appenders");
      await log.append(q, [record("warm")]); // the tail is cached from here on
      const before = storage.counter.snapshot();
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) => log.append(q, [record(`c${i}-0`), record(`c${i}-1`)])),
      );
      const used = diffCounts(storage.counter.snapshot(), before);
      const items = (await storage.table(QUEUE_INDEX_TABLE).query(queuePk(q), { consistent: true })).items;
      assert.equal(
        used.tableWrites,
        2 * (items.length - 1),
        "one reservation and one conditional put per index item written: no put lost a race against its own process",
      );
      assert.ok(items.length - 1 < 24, `small batches waiting together were merged (${items.length - 1} items)`);
      assert.deepEqual(
        results.map((r) => r.queueOffset).sort((x, y) => x - y),
        Array.from({ length: 24 }, (_, i) => 1 + 2 * i),
      );
      const read = await log.read(q, 0, { maxMessages: 100 });
      assert.equal(read.messages.length, 49);
      for (const [i, r] of results.entries()) {
        const at = (offset: number) => text(read.messages[offset]?.body ?? new Uint8Array());
        assert.deepEqual([at(r.queueOffset), at(r.queueOffset + 1)], [`c${i}-0`, `c${i}-1`]);
      }
    });

    it("object batches waiting together are merged: one object and one index put per group", async () => {
      const { storage } = fixture();
      const log = new QueueLog(storage, { inlineThresholdBytes: 0 });
      const q = freshQueue("Appenders");
      const before = storage.counter.snapshot();
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => log.append(q, [record(`o${i}`)])));
      const used = diffCounts(storage.counter.snapshot(), before);
      const items = (await storage.table(QUEUE_INDEX_TABLE).query(queuePk(q), { consistent: true })).items;
      // A new queue: its first reservation finds no counter (a failed add) and creates it (one put).
      assert.equal(used.tableWrites, 2 + 2 * items.length, "one reservation and one put per index item, none lost");
      assert.equal(used.objectPuts, items.length, "one object per index item");
      // The first append found the line empty and went alone; the 5 behind it waited together.
      assert.equal(items.length, 2);
      assert.deepEqual(
        results.map((r) => r.queueOffset),
        [0, 1, 2, 3, 4, 5],
      );
      const read = await log.read(q, 0, { maxMessages: 10 });
      assert.deepEqual(
        read.messages.map((m) => [m.queueOffset, text(m.body)]),
        results.map((r, i) => [r.queueOffset, `o${i}`]),
      );
    });

    it("object batches of several queues waiting together share one object; trimming one queue keeps the rest", async () => {
      const { storage } = fixture();
      let clock = Date.now();
      const log = new QueueLog(storage, { inlineThresholdBytes: 0, now: () => clock });
      const queues = Array.from({ length: 6 }, () => freshQueue("Shared"));
      const before = storage.counter.snapshot();
      await Promise.all(queues.map((q, i) => log.append(q, [record(`s${i}`)])));
      // The first batch found no PUT in flight and went alone; the five behind it waited and went together.
      assert.equal(diffCounts(storage.counter.snapshot(), before).objectPuts, 2);
      const keyOf = async (q: (typeof queues)[number]) =>
        (await storage.table(QUEUE_INDEX_TABLE).query(queuePk(q), { consistent: true })).items.find(
          (item) => typeof item.ok === "string",
        )?.ok;
      const keys = await Promise.all(queues.map(keyOf));
      assert.equal(new Set(keys.slice(1)).size, 1, "the five waiting batches name one object");
      assert.notEqual(keys[0], keys[1]);
      for (const [i, q] of queues.entries()) {
        assert.deepEqual(
          (await log.read(q, 0)).messages.map((m) => text(m.body)),
          [`s${i}`],
        );
      }
      // Two hours on, the first two queues get a newer batch, so their shared-time batch may be trimmed.
      clock += 2 * HOUR;
      for (const q of queues.slice(0, 2)) await log.append(q, [record("newer")]);
      const beforeTrim = storage.counter.snapshot();
      for (const q of queues.slice(0, 2)) assert.equal((await log.trim(q, clock - HOUR)).deletedBatches, 1);
      assert.equal(
        diffCounts(storage.counter.snapshot(), beforeTrim).objectDeletes,
        1,
        "the lone batch's object is deleted, the shared one is not",
      );
      for (const [i, q] of queues.slice(2).entries()) {
        assert.deepEqual(
          (await log.read(q, 0)).messages.map((m) => text(m.body)),
          [`s${i + 2}`],
        );
      }
    });

    it("a merge stops at mergeLimitBytes: each group stays within it", async () => {
      const { storage } = fixture();
      const one = encodeBatch([record("m00")]).byteLength;
      const log = new QueueLog(storage, { inlineThresholdBytes: 0, mergeLimitBytes: 2 * one });
      const q = freshQueue("Appenders");
      const results = await Promise.all(
        Array.from({ length: 7 }, (_, i) => log.append(q, [record(`m${i}`.padEnd(3, "0"))])),
      );
      const items = (await storage.table(QUEUE_INDEX_TABLE).query(queuePk(q), { consistent: true })).items;
      assert.ok(
        items.every((item) => Number(item.n) <= 2),
        "no group over two batches",
      );
      assert.equal(items.length, 4, "1 alone, then 2 + 2 + 2");
      assert.deepEqual(
        results.map((r) => r.queueOffset),
        [0, 1, 2, 3, 4, 5, 6],
      );
    });

    it("merged objects stay small enough that a pull reads little more than it delivers", async () => {
      const { storage } = fixture();
      const log = new QueueLog(storage);
      const q = freshQueue("Appenders");
      const body = new Uint8Array(1024);
      // 100 producers sending 32 x 1 KiB at once to one queue (the benchmark's shape): merged in line.
      const sends = 100;
      const results = await Promise.all(
        Array.from({ length: sends }, () =>
          log.append(
            q,
            Array.from({ length: 32 }, () => record(body)),
          ),
        ),
      );
      const items = (await storage.table(QUEUE_INDEX_TABLE).query(queuePk(q), { consistent: true })).items;
      assert.ok(items.length < sends, `${items.length} index items for ${sends} sends: merged`);
      const oneBatch = encodeBatch(Array.from({ length: 32 }, () => record(body))).byteLength;
      const before = storage.counter.snapshot();
      let pulls = 0;
      let delivered = 0;
      for (let offset = 32; offset < results.length * 32; pulls++) {
        const read = await log.read(q, offset, { maxMessages: 32 });
        delivered += read.messages.length;
        offset = read.nextBeginOffset;
      }
      const used = diffCounts(storage.counter.snapshot(), before);
      assert.equal(delivered, (sends - 1) * 32);
      // A pull of 32 touches at most two merged batches, each at most the merge limit: 512 KiB at most, where
      // 4 MiB merges had a pull read up to 8 MiB to deliver 33 KiB.
      const perPull = used.objectBytesRead / pulls;
      assert.ok(perPull <= 2 * 256 * 1024, `${used.objectBytesRead} bytes read in ${pulls} pulls of 32`);
      assert.ok(DEFAULT_MERGE_LIMIT_BYTES <= 256 * 1024 && oneBatch * 2 <= DEFAULT_MERGE_LIMIT_BYTES);
      console.log(`merged reads: ${items.length} items, ${(perPull / 1024).toFixed(0)} KiB read per pull of 32`);
    });

    it("a wall clock stepped back does not keep a stale tail trusted: cache ages are monotonic", async () => {
      const { storage, reopen } = fixture();
      const q = freshQueue("Appenders");
      const start = 100_000_000;
      const wallA = start;
      let monotonicA = 0;
      let wallB = start;
      const a = new QueueLog(storage, { now: () => wallA, monotonicNow: () => monotonicA });
      const b = new QueueLog(await reopen(), { now: () => wallB });
      await a.append(q, [record("a0")]); // A caches the tail (1)
      for (const name of ["b1", "b2", "b3"]) {
        wallB += 1000;
        await b.append(q, [record(name)]);
      }
      // Two hours pass; retention trims what is older than an hour, all but the newest batch.
      wallB += 2 * HOUR;
      monotonicA += 2 * HOUR;
      const trimmed = await b.trim(q, wallB - HOUR);
      assert.equal(trimmed.deletedBatches, 3);
      // Meanwhile A's wall clock was stepped back by those two hours (wallA did not move).
      const appended = await a.append(q, [record("a1")]);
      assert.equal(appended.queueOffset, 4, "after the newest batch, not into the trimmed space at offset 1");
      const read = await b.read(q, 3);
      assert.deepEqual(
        read.messages.map((m) => [m.queueOffset, text(m.body)]),
        [
          [3, "b3"],
          [4, "a1"],
        ],
      );
    });

    it("property: concurrent appends in waves always chain: consecutive offsets, contiguous items, each read back in place", async () => {
      const { storage } = fixture();
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 12 }), {
            minLength: 1,
            maxLength: 3,
          }),
          fc.constantFrom(0, 64, 8 * 1024),
          fc.integer({ min: 1, max: 300 }),
          async (waves, inlineThresholdBytes, bodyBytes) => {
            const log = new QueueLog(storage, { inlineThresholdBytes });
            const q = freshQueue("Appenders");
            const expected = new Map<number, string>();
            let total = 0;
            for (const [w, wave] of waves.entries()) {
              const results = await Promise.all(
                wave.map((count, i) =>
                  log.append(
                    q,
                    Array.from({ length: count }, (_, j) => record(`${w}.${i}.${j}:${"p".repeat(bodyBytes)}`)),
                  ),
                ),
              );
              const spans = results
                .map((r, i) => ({ start: r.queueOffset, count: wave[i] ?? 0, i }))
                .sort((a, b) => a.start - b.start);
              for (const span of spans) {
                assert.equal(span.start, total, "each append starts where the one before it ended");
                for (let j = 0; j < span.count; j++) expected.set(span.start + j, `${w}.${span.i}.${j}`);
                total += span.count;
              }
            }
            const items = (await storage.table(QUEUE_INDEX_TABLE).query(queuePk(q), { consistent: true })).items;
            let end = 0;
            for (const item of items) {
              assert.equal(item.sk, end, "index items are contiguous: no gap, no overlap");
              end += Number(item.n);
            }
            assert.equal(end, total);
            const read = await log.read(q, 0, { maxMessages: total });
            assert.deepEqual(
              read.messages.map((m) => [m.queueOffset, text(m.body).split(":")[0]]),
              Array.from({ length: total }, (_, offset) => [offset, expected.get(offset)]),
            );
          },
        ),
        { numRuns: 12 },
      );
    });
  });
}
