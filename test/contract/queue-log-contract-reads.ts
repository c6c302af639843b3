/**
 * @module The queue log's read path, by the queries it sends and the index items they bring back, run unchanged
 * on every adapter: a pull reads the queue's newest item, then only the index items that hold the offsets it
 * wants (one bounded page), plus the item at or before its offset when that offset is inside a batch (unless this
 * process's last read of the queue stopped inside that batch, and it is young); a pull
 * standing in an unfilled range whose next batch lies past what it wants still finds that batch (to seal the
 * range once the lease is over). Asserted by counting the real table's queries, never by time.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { QUEUE_INDEX_TABLE, type QueueRef } from "../../lib/broker/queue-log/queue-index.js";
import { DEFAULT_RESERVATION_LEASE_MS, QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { QueryOptions, Table, TableSpec } from "../../lib/storage/table.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import { freshQueue, record, suiteFixture } from "./queue-log-helpers.js";

/** What the queue index's queries did: one entry per query, the number of items it returned. */
interface Seen {
  queries: number[];
  /** The queries for the item at or before an offset (`sk <= offset`, newest first), one per key asked. */
  atOrBefore?: number;
}

/** `storage`, its queue index table's queries counted into `seen` (the table itself answers them). */
function counted(storage: Storage, seen: Seen): Storage {
  const watch = (table: Table): Table =>
    new Proxy(table, {
      get(target, prop) {
        if (prop !== "query") {
          // The table's own methods, called on the table (its private fields are not the proxy's).
          const value: unknown = Reflect.get(target, prop, target);
          return typeof value === "function" ? value.bind(target) : value;
        }
        return async (pk: string, options?: QueryOptions) => {
          const page = await target.query(pk, options);
          seen.queries.push(page.items.length);
          if (options?.sk !== undefined && "lte" in options.sk) seen.atOrBefore = (seen.atOrBefore ?? 0) + 1;
          return page;
        };
      },
    });
  return {
    ...storage,
    table: (spec: TableSpec) =>
      spec.name === QUEUE_INDEX_TABLE.name ? watch(storage.table(spec)) : storage.table(spec),
  };
}

/** 20 batches of 3 messages: offsets 0..59, batches starting at 0, 3, …, 57. */
async function threes(log: QueueLog, q: QueueRef): Promise<void> {
  for (let b = 0; b < 20; b++)
    await log.append(
      q,
      [0, 1, 2].map((i) => record(`m${b * 3 + i}`)),
    );
}

export function queueLogReadsContract(label: string, open: OpenFixture): void {
  describe(`queue log contract, the read path: ${label}`, () => {
    const fixture = suiteFixture(open);

    it("a pull of 32 from a batch's start: the newest item, then one page of the 11 items that hold 0..31", async () => {
      const seen: Seen = { queries: [] };
      const log = new QueueLog(counted(fixture().storage, seen));
      const q = freshQueue("Reads");
      await threes(log, q);
      await log.read(q, 0, { maxMessages: 1 }); // warms the min-offset cache, as a consumer's first pull does
      seen.queries = [];
      const got = await log.read(q, 0, { maxMessages: 32 });
      assert.deepEqual(
        got.messages.map((m) => m.queueOffset),
        Array.from({ length: 32 }, (_, i) => i),
      );
      assert.equal(got.nextBeginOffset, 32);
      assert.deepEqual(seen.queries, [1, 11], "the newest item, then the items starting at 0..31 only");
    });

    it("a pull from inside a batch: the item at or before its offset is read once more, nothing past the tail", async () => {
      const seen: Seen = { queries: [] };
      const log = new QueueLog(counted(fixture().storage, seen));
      const q = freshQueue("Reads");
      await threes(log, q);
      await log.read(q, 0, { maxMessages: 1 });
      seen.queries = [];
      const got = await log.read(q, 32, { maxMessages: 32 });
      assert.deepEqual(
        got.messages.map((m) => m.queueOffset),
        Array.from({ length: 28 }, (_, i) => 32 + i),
      );
      assert.equal(got.nextBeginOffset, 60);
      assert.deepEqual(
        seen.queries,
        [1, 9, 1],
        "the newest item; the items starting at 33..57 (the tail); the batch at 30 that holds 32",
      );
      seen.queries = [];
      const one = await log.read(q, 31, { maxMessages: 1 });
      assert.deepEqual(
        one.messages.map((m) => m.queueOffset),
        [31],
      );
      assert.deepEqual(seen.queries, [1, 1], "a read of one: the newest item, then the batch at 30 that holds 31");
    });

    it("a pull from inside the batch the last pull stopped in: that batch is not asked again, unless it is old", async () => {
      const seen: Seen = { queries: [] };
      let now = 500_000_000;
      const log = new QueueLog(counted(fixture().storage, seen), { now: () => now });
      const q = freshQueue("Reads");
      await threes(log, q);
      await log.read(q, 0, { maxMessages: 1 });
      const first = await log.read(q, 1, { maxMessages: 31 });
      assert.equal(first.nextBeginOffset, 32, "stopped inside the batch at 30 (30, 31, 32)");
      seen.queries = [];
      const next = await log.read(q, 32, { maxMessages: 32 });
      assert.deepEqual(
        next.messages.map((m) => m.queueOffset),
        Array.from({ length: 28 }, (_, i) => 32 + i),
      );
      assert.deepEqual(seen.queries, [1, 9], "the newest item; the items starting at 33..57; not the batch at 30");

      // Another process (no read of its own yet) asks for the batch at 30.
      const other = new QueueLog(counted(fixture().storage, seen), { now: () => now });
      await other.read(q, 0, { maxMessages: 1 });
      seen.queries = [];
      await other.read(q, 32, { maxMessages: 32 });
      assert.deepEqual(seen.queries, [1, 9, 1], "a process that did not stop inside the batch reads it");

      // A batch older than half the shortest retention is asked again (retention may have trimmed it).
      await log.read(q, 1, { maxMessages: 31 });
      now += 3_600_000;
      seen.queries = [];
      await log.read(q, 32, { maxMessages: 32 });
      assert.deepEqual(seen.queries, [1, 9, 1], "an old batch is read again");
    });

    it("on a queue spread over 4 keys too: no key is asked for the batch the last pull stopped inside", async () => {
      const seen: Seen = { queries: [] };
      const options = { indexKeys: 4, now: () => 700_000_000 };
      const log = new QueueLog(counted(fixture().storage, seen), options);
      const q = freshQueue("Reads");
      await threes(log, q);
      await log.read(q, 0, { maxMessages: 1 });
      assert.equal((await log.read(q, 1, { maxMessages: 31 })).nextBeginOffset, 32);
      seen.atOrBefore = 0;
      const next = await log.read(q, 32, { maxMessages: 32 });
      assert.deepEqual(
        next.messages.map((m) => m.queueOffset),
        Array.from({ length: 28 }, (_, i) => 32 + i),
      );
      assert.equal(seen.atOrBefore, 0, "the batch at 30 came from the read that stopped in it");
      const other = new QueueLog(counted(fixture().storage, seen), options);
      await other.read(q, 0, { maxMessages: 1 });
      seen.atOrBefore = 0;
      const again = await other.read(q, 32, { maxMessages: 32 });
      assert.deepEqual(again.messages, next.messages);
      assert.ok((seen.atOrBefore ?? 0) > 0, "a process that did not stop inside the batch asks the keys for it");
    });

    it("a pull of one standing in an unfilled range finds the batch past it, and passes it once it is sealed", async () => {
      const q = freshQueue("Reads");
      let now = 300_000_000;
      const clock = { now: () => now };
      let dead = false;
      const doomed = new QueueLog(await fixture().reopen(), {
        ...clock,
        afterReserve: () => {
          if (dead) throw new Error("killed after reserving");
        },
      });
      const writer = new QueueLog(await fixture().reopen(), clock);
      const reader = new QueueLog(fixture().storage, clock);
      await doomed.append(q, [record("d0"), record("d1")]); // offsets 0, 1
      dead = true;
      await assert.rejects(doomed.append(q, [record("x2"), record("x3"), record("x4")])); // 2..4, never filled
      await writer.append(q, [record("w5")]);
      await writer.append(q, [record("w6")]);
      const waiting = await reader.read(q, 2, { maxMessages: 1 });
      assert.equal(waiting.status, "NO_NEW_MSG", "within the lease the pull waits at the range");
      assert.equal(waiting.nextBeginOffset, 2);
      now += DEFAULT_RESERVATION_LEASE_MS;
      const passed = await reader.read(q, 2, { maxMessages: 1 });
      assert.deepEqual(
        passed.messages.map((m) => [m.queueOffset, new TextDecoder().decode(m.body)]),
        [[5, "w5"]],
        "the range 2..4 is sealed and the batch past it read, though a pull of one wants offset 2 only",
      );
      assert.equal(passed.nextBeginOffset, 6);
    });
  });
}
