/**
 * @module The embedded store's `addThenPut` (an `ADD` and a put built from its result, in one transaction and one
 * commit) and the queue log's one-key append through it: one SQLite transaction per send instead of two.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { QUEUE_INDEX_TABLE } from "../../lib/broker/queue-log/index.js";
import { QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import { ErrorCode, NimbusError } from "../../lib/core/errors.js";
import type { SqliteTable } from "../../lib/storage/local/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import { openLocalFixture } from "../support/local-fixture.js";
import type { StorageFixture } from "../support/storage-fixture.js";
import { record } from "./queue-log-helpers.js";

describe("embedded store: addThenPut", () => {
  let fixture: StorageFixture;
  let other: Storage;
  let table: SqliteTable;
  before(async () => {
    fixture = await openLocalFixture();
    other = await fixture.reopen();
    table = fixture.storage.table({ name: "atp_index", sortKeyType: "number" }) as SqliteTable;
  });
  after(() => fixture.cleanup());
  const counter = (pk: string) => ({ pk: `${pk}#seq`, sk: 0 });
  const write = (pk: string, delta: number, extra: Record<string, string> = {}) =>
    table.addThenPut({
      counter: counter(pk),
      attribute: "next",
      delta,
      item: (added) => ({ pk, sk: added - delta, n: delta, ...extra }),
    });

  it("adds and puts in one commit, both visible to another connection when answered", async () => {
    await table.put({ ...counter("q1"), next: 5 });
    const before = table.writeBatcher.transactions;
    assert.deepEqual(await write("q1", 3), { outcome: "stored", added: 8 });
    assert.equal(table.writeBatcher.transactions - before, 1, "one transaction");
    const seen = other.table({ name: "atp_index", sortKeyType: "number" });
    assert.equal((await seen.get(counter("q1")))?.next, 8);
    assert.deepEqual(await seen.get({ pk: "q1", sk: 5 }), { pk: "q1", sk: 5, n: 3 });
  });

  it("a missing counter writes nothing and builds no item", async () => {
    let built = 0;
    const outcome = await table.addThenPut({
      counter: counter("q2"),
      attribute: "next",
      delta: 1,
      item: (added) => {
        built++;
        return { pk: "q2", sk: added - 1 };
      },
    });
    assert.deepEqual(outcome, { outcome: "noCounter" });
    assert.equal(built, 0);
    assert.equal(await table.get(counter("q2")), undefined);
    assert.deepEqual((await table.query("q2")).items, []);
  });

  it("a taken key keeps the add, as two calls would, and answers the item there", async () => {
    await table.put({ ...counter("q3"), next: 0 });
    await table.put({ pk: "q3", sk: 0, e: "sealed" });
    const outcome = await write("q3", 2, { v: "mine" });
    assert.deepEqual(outcome, { outcome: "taken", added: 2, existing: { pk: "q3", sk: 0, e: "sealed" } });
    assert.equal((await table.get(counter("q3")))?.next, 2, "the range stays reserved");
    assert.deepEqual((await table.query("q3")).items, [{ pk: "q3", sk: 0, e: "sealed" }]);
  });

  it("an item that fails validation rolls both back", async () => {
    await table.put({ ...counter("q4"), next: 7 });
    await assert.rejects(
      table.addThenPut({
        counter: counter("q4"),
        attribute: "next",
        delta: 1,
        item: () => ({ pk: "q4", sk: "not a number" }),
      }),
      (err: unknown) => err instanceof NimbusError && err.code === ErrorCode.PARAMETER_ILLEGAL,
    );
    assert.equal((await table.get(counter("q4")))?.next, 7);
    assert.deepEqual((await table.query("q4")).items, []);
  });
});

describe("embedded store: a one-key queue's append is one transaction", () => {
  let fixture: StorageFixture;
  before(async () => {
    fixture = await openLocalFixture();
  });
  after(() => fixture.cleanup());

  it("reserve and fill share one commit; offsets follow one another; reads see every message", async () => {
    const { storage } = fixture;
    const log = new QueueLog(storage);
    const q = { topic: "AddPut", brokerName: "broker-a", queueId: 0 };
    await log.append(q, [record("first")]); // creates the queue's counter
    const batcher = (storage.table(QUEUE_INDEX_TABLE) as SqliteTable).writeBatcher;
    const before = batcher.transactions;
    const offsets: number[] = [];
    for (let i = 0; i < 5; i++) offsets.push((await log.append(q, [record(`m${i}`), record(`n${i}`)])).queueOffset);
    assert.equal(batcher.transactions - before, 5, "one transaction per append");
    assert.deepEqual(offsets, [1, 3, 5, 7, 9]);
    const read = await log.read(q, 0, { maxMessages: 32 });
    assert.deepEqual(
      read.messages.map((m) => new TextDecoder().decode(m.body)),
      ["first", ...[0, 1, 2, 3, 4].flatMap((i) => [`m${i}`, `n${i}`])],
    );
  });
});
