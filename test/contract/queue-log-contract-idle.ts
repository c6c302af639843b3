/**
 * @module The queue log's contract for idle polls of a hot queue spread over several keys (docs/queue-log.md, "Idle
 * polls of a hot queue"), on every adapter: a caught-up poll reads the queue's counter once instead of every key; a
 * message appended right after that read, or reserved before it and filled after, is found by the next poll; a
 * range reserved at the top and never filled is sealed by a reader that saw the counter there longer than the hole
 * lease (asserted by state, with an injected clock), after which idle polls are one read again; a writer's
 * `releaseRanges` answers only once every tail it let go of is stored, a seal already on its way included.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { counterKeyOf } from "../../lib/broker/queue-log/layout.js";
import { QUEUE_INDEX_TABLE, type QueueRef, queuePk } from "../../lib/broker/queue-log/queue-index.js";
import { DEFAULT_RESERVATION_LEASE_MS, QueueLog, type QueueLogOptions } from "../../lib/broker/queue-log/queue-log.js";
import { queryAll } from "../../lib/broker/store/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { Table, TableSpec } from "../../lib/storage/table.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import { freshQueue, killableWriter, record, suiteFixture } from "./queue-log-helpers.js";

const KEYS = 4;
const LEASE = DEFAULT_RESERVATION_LEASE_MS;
const text = (body: Uint8Array) => new TextDecoder().decode(body);

/** `storage`, whose queue-index table runs `hook` once right after the next read of `q`'s counter answered. */
function afterCounterRead(
  storage: Storage,
  q: QueueRef,
): { storage: Storage; arm: (hook: () => Promise<void>) => void } {
  const counter = counterKeyOf(queuePk(q), KEYS);
  let armed: (() => Promise<void>) | undefined;
  const wrap = (table: Table): Table => ({
    spec: table.spec,
    counter: table.counter,
    get: async (key, options) => {
      const item = await table.get(key, options);
      const hook = armed;
      if (hook !== undefined && key.pk === counter.pk && key.sk === counter.sk) {
        armed = undefined;
        await hook();
      }
      return item;
    },
    put: (item, options) => table.put(item, options),
    add: (key, attribute, delta, options) => table.add(key, attribute, delta, options),
    delete: (key) => table.delete(key),
    query: (pk, options) => table.query(pk, options),
  });
  const hooked: Storage = {
    table: (spec: TableSpec) =>
      spec.name === QUEUE_INDEX_TABLE.name ? wrap(storage.table(spec)) : storage.table(spec),
    objects: storage.objects,
    counter: storage.counter,
    close: () => Promise.resolve(),
  };
  return { storage: hooked, arm: (hook) => (armed = hook) };
}

/**
 * `storage`, whose queue-index table holds the first tail seal put at a gate until `open` is called (`held` answers
 * once it is there); `landed` answers once a later seal's put has answered.
 */
function holdingFirstSeal(storage: Storage): {
  storage: Storage;
  held: Promise<void>;
  landed: Promise<void>;
  open: () => void;
} {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let isHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (isHeld = resolve));
  let hasLanded: () => void = () => undefined;
  const landed = new Promise<void>((resolve) => (hasLanded = resolve));
  let seals = 0;
  const wrap = (table: Table): Table => ({
    spec: table.spec,
    counter: table.counter,
    get: (key, options) => table.get(key, options),
    put: async (item, options) => {
      if (item.e !== "sealed") return table.put(item, options);
      if (seals++ === 0) {
        isHeld();
        await gate;
        return table.put(item, options);
      }
      await table.put(item, options);
      hasLanded();
    },
    add: (key, attribute, delta, options) => table.add(key, attribute, delta, options),
    delete: (key) => table.delete(key),
    query: (pk, options) => table.query(pk, options),
  });
  const gated: Storage = {
    table: (spec: TableSpec) =>
      spec.name === QUEUE_INDEX_TABLE.name ? wrap(storage.table(spec)) : storage.table(spec),
    objects: storage.objects,
    counter: storage.counter,
    close: () => storage.close(),
  };
  return { storage: gated, held, landed, open };
}

export function queueLogIdleContract(label: string, open: OpenFixture): void {
  describe(`queue log contract, idle polls of a hot queue spread over ${KEYS} keys: ${label}`, () => {
    const fixture = suiteFixture(open);
    const spread: QueueLogOptions = { indexKeys: KEYS };
    const reads = (storage: Storage) => storage.counter.snapshot().tableReads;

    it("a caught-up poll is one read (the counter); the first poll of a process learns the layout and the tail", async () => {
      const { storage } = fixture();
      const q = freshQueue("Idle");
      const log = new QueueLog(storage, spread);
      await log.append(q, [record("i0")]);
      await log.releaseRanges();
      const end = (await log.status(q)).maxOffset; // past the tail its writer sealed
      const reader = new QueueLog(storage, spread);
      const before = reads(storage);
      assert.equal((await reader.read(q, end)).status, "NO_NEW_MSG");
      const first = reads(storage);
      // The base key (the layout item), each key for the newest item, and each key once for the min offset (cached).
      assert.equal(first - before, 1 + 2 * KEYS);
      const idle = await reader.read(q, end);
      assert.deepEqual([idle.status, idle.nextBeginOffset, idle.maxOffset], ["NO_NEW_MSG", end, end]);
      assert.equal(reads(storage) - first, 1, "then the counter only");
      const lagging = await reader.read(q, 0);
      assert.deepEqual(
        lagging.messages.map((m) => text(m.body)),
        ["i0"],
        "an offset below the tail is read as before",
      );
    });

    it("a message appended right after the counter was read is found by the next poll", async () => {
      const { storage, reopen } = fixture();
      const q = freshQueue("Idle");
      const writer = new QueueLog(await reopen(), spread);
      await writer.append(q, [record("a0")]);
      await writer.releaseRanges();
      const hooked = afterCounterRead(storage, q);
      const reader = new QueueLog(hooked.storage, spread);
      const end = (await reader.read(q, 0)).nextBeginOffset;
      assert.equal((await reader.read(q, end)).status, "NO_NEW_MSG", "caught up");
      let appended = -1;
      hooked.arm(async () => {
        appended = (await writer.append(q, [record("a1")])).queueOffset;
      });
      const stale = await reader.read(q, end);
      assert.ok(appended >= end, "the append ran between the counter's read and the answer");
      assert.deepEqual([stale.status, stale.nextBeginOffset], ["NO_NEW_MSG", end], "the reader did not move");
      await writer.releaseRanges();
      const next = await reader.read(q, end);
      assert.deepEqual(
        next.messages.map((m) => [m.queueOffset, text(m.body)]),
        [[appended, "a1"]],
      );
    });

    it("a range reserved before the counter was read and filled after it: the poll reads the keys, the next finds it", async () => {
      const { storage, reopen } = fixture();
      const q = freshQueue("Idle");
      let release: (() => void) | undefined;
      let reserved: (() => void) | undefined;
      const isReserved = new Promise<void>((resolve) => (reserved = resolve));
      const writer = new QueueLog(await reopen(), {
        ...spread,
        afterReserve: async (_pk, start) => {
          if (start === 0) return;
          reserved?.();
          await new Promise<void>((resolve) => (release = resolve));
        },
      });
      await writer.append(q, [record("r0")]);
      const reader = new QueueLog(storage, spread);
      const end = (await reader.read(q, 0)).nextBeginOffset;
      const slow = writer.append(q, [record("r1")]);
      await isReserved;
      const before = reads(storage);
      const waiting = await reader.read(q, end);
      assert.deepEqual([waiting.status, waiting.nextBeginOffset, waiting.maxOffset], ["NO_NEW_MSG", end, end]);
      assert.equal(reads(storage) - before, 1 + KEYS, "the counter is past the offset: every key is read");
      release?.();
      const { queueOffset } = await slow;
      await writer.releaseRanges();
      const next = await reader.read(q, end);
      assert.deepEqual(
        next.messages.map((m) => [m.queueOffset, text(m.body)]),
        [[queueOffset, "r1"]],
      );
    });

    it("releaseRanges answers once every tail its writer let go of is sealed, one sent before it too; then one read", async () => {
      const { storage, reopen } = fixture();
      const q = freshQueue("Idle");
      const gated = holdingFirstSeal(await reopen());
      const writer = new QueueLog(gated.storage, { ...spread, rangeUseMs: 600_000 });
      await writer.append(q, [record("t0")]); // offset 0: the first append reserves what it needs
      await writer.append(q, [record("t1")]); // offset 1, and a range up to 17 for the next appends
      const batch = Array.from({ length: 17 }, (_, i) => record(`t2.${i}`));
      // More than the range has left: its tail (2..17) is let go of, its seal sent (held at the gate).
      assert.equal((await writer.append(q, batch)).queueOffset, 18);
      await gated.held;
      let released = false;
      const releasing = writer.releaseRanges().then(() => {
        released = true;
      });
      await gated.landed; // the range it held at the stop (35..51) is sealed
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(released, false, "the seal sent before the stop is still on its way: releaseRanges waits for it");
      gated.open();
      await releasing;
      const table = storage.table(QUEUE_INDEX_TABLE);
      const sealed = [];
      for (let k = 0; k < KEYS; k++)
        sealed.push(...(await queryAll(table, `${queuePk(q)}#${k}`, { consistent: true })));
      assert.deepEqual(
        sealed
          .filter((i) => i.e === "sealed")
          .map((i) => Number(i.sk))
          .sort((a, b) => a - b),
        [2, 35],
        "both tails are stored when releaseRanges answers",
      );
      const reader = new QueueLog(storage, spread);
      let at = 0;
      for (let got = await reader.read(q, at); got.nextBeginOffset !== at; got = await reader.read(q, at))
        at = got.nextBeginOffset;
      assert.equal(at, 52, "a reader passes both seals to the counter");
      const before = reads(storage);
      assert.equal((await reader.read(q, at)).status, "NO_NEW_MSG");
      assert.equal(reads(storage) - before, 1, "a caught-up poll is the counter only");
    });

    it("a dead writer's range at the top is sealed by a reader that saw the counter there a lease ago; then one read", async () => {
      const { storage, reopen } = fixture();
      const q = freshQueue("Idle");
      let now = 900_000_000;
      const clock = { now: () => now };
      const { log: doomed, kill } = killableWriter(await reopen(), { ...spread, ...clock, rangeUseMs: 60_000 });
      await doomed.append(q, [record("d0")]); // offset 0
      kill();
      await assert.rejects(doomed.append(q, [record("lost")]), /killed/); // offset 1 (and its range): never filled
      const reader = new QueueLog(storage, { ...spread, ...clock });
      assert.equal((await reader.read(q, 0)).nextBeginOffset, 1);
      const before = reads(storage);
      assert.equal((await reader.read(q, 1)).status, "NO_NEW_MSG");
      assert.equal(reads(storage) - before, 1 + KEYS, "the counter is past the newest item: every key is read");
      now += LEASE - 1;
      assert.equal((await reader.read(q, 1)).status, "NO_NEW_MSG", "within the lease nothing is sealed");
      const table = storage.table(QUEUE_INDEX_TABLE);
      const seals = async () => {
        const all = [];
        for (let k = 0; k < KEYS; k++) all.push(...(await queryAll(table, `${queuePk(q)}#${k}`, { consistent: true })));
        return all.filter((i) => i.e === "sealed").map((i) => Number(i.sk));
      };
      assert.deepEqual(await seals(), []);
      now += 1;
      await reader.read(q, 1);
      const sealed = (await seals()).sort((a, b) => a - b);
      assert.ok(sealed.length >= 1 && sealed[0] === 1, `sealed from the newest item's end (${sealed.join(",")})`);
      const passed = await reader.read(q, 1);
      assert.deepEqual([passed.status, passed.messages.length], ["NO_MATCHED_MSG", 0]);
      const top = passed.nextBeginOffset;
      assert.equal(top, 1 + sealed.length, "every sealed offset is passed, one seal each");
      const after = reads(storage);
      assert.equal((await reader.read(q, top)).status, "NO_NEW_MSG");
      assert.equal(reads(storage) - after, 1, "idle again: the counter only");
      const writer = new QueueLog(await reopen(), { ...spread, ...clock });
      const { queueOffset } = await writer.append(q, [record("w")]);
      await writer.releaseRanges();
      const got = await reader.read(q, top);
      assert.deepEqual(
        got.messages.map((m) => [m.queueOffset, text(m.body)]),
        [[queueOffset, "w"]],
      );
    });
  });
}
