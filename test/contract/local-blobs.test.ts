/**
 * @module The embedded store's blob table: a row's long bytes live in `"b_<name>"` and the row names them (`bref`).
 * Whatever replaces or removes a row (a put over it, with or without a condition, an add, a delete, the TTL sweep)
 * removes its blob; a put that does not land (its key taken) leaves none behind; a row written before blobs existed
 * (its bytes in the row) reads and is replaced like the others.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import { createLocalStorage, OUT_OF_ROW_BYTES, type SqliteTable } from "../../lib/storage/local/index.js";
import { ConditionFailedError } from "../../lib/storage/table.js";

describe("embedded store: long bytes in the blob table", () => {
  let dataDir = "";
  let storage: ReturnType<typeof createLocalStorage>;
  let table: SqliteTable;
  before(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-blobs-"));
    storage = createLocalStorage({ dataDir });
    table = storage.table({ name: "blobs", sortKeyType: "number", ttlAttribute: "expires" }) as SqliteTable;
  });
  after(async () => {
    await storage.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const long = (fill: number) => new Uint8Array(OUT_OF_ROW_BYTES + 100).fill(fill);
  /** The file, read by a connection of its own. */
  const inFile = <T>(read: (db: Database.Database) => T): T => {
    const db = new Database(path.join(dataDir, "tables.sqlite"), { readonly: true });
    try {
      return read(db);
    } finally {
      db.close();
    }
  };
  /** The blob table's rows (their first byte each, in id order: an id may be used again) and how many rows name a blob. */
  const onDisk = (): { blobs: number[]; named: number } =>
    inFile((db) => {
      const blobs = db.prepare('SELECT unicode(CAST(substr(bytes, 1, 1) AS TEXT)) FROM "b_blobs" ORDER BY id').pluck();
      const named = db.prepare('SELECT count(*) FROM "t_blobs" WHERE bref IS NOT NULL').pluck().get() as number;
      return { blobs: blobs.all() as number[], named };
    });
  const brefAt = (pk: string, sk: number) =>
    inFile((db) => db.prepare('SELECT bref FROM "t_blobs" WHERE pk = ? AND sk = ?').pluck().get(pk, sk));

  it("bytes of OUT_OF_ROW_BYTES or more go to a blob, shorter ones stay in the row", async () => {
    await table.put({ pk: "edge", sk: 1, d: new Uint8Array(OUT_OF_ROW_BYTES).fill(1) });
    await table.put({ pk: "edge", sk: 2, d: new Uint8Array(OUT_OF_ROW_BYTES - 1).fill(2) });
    assert.equal(typeof brefAt("edge", 1), "number");
    assert.equal(brefAt("edge", 2), null);
    const page = await table.query("edge");
    assert.deepEqual(
      page.items.map((i) => (i.d as Uint8Array).length),
      [OUT_OF_ROW_BYTES, OUT_OF_ROW_BYTES - 1],
    );
    await table.delete({ pk: "edge", sk: 1 });
    await table.delete({ pk: "edge", sk: 2 });
    assert.deepEqual(onDisk(), { blobs: [], named: 0 });
  });

  it("a put over a row, with or without a condition, leaves only the new row's blob", async () => {
    await table.put({ pk: "p", sk: 1, version: 1, d: long(1) });
    await table.put({ pk: "p", sk: 1, version: 2, d: long(2) });
    assert.deepEqual(onDisk(), { blobs: [2], named: 1 });
    await table.put({ pk: "p", sk: 1, version: 3, d: long(3) }, { condition: { versionIs: 2 } });
    assert.deepEqual(onDisk(), { blobs: [3], named: 1 });
    await table.put({ pk: "p", sk: 1, version: 4, d: new Uint8Array([4]) });
    assert.deepEqual(onDisk(), { blobs: [], named: 0 }, "short bytes in the row: the long ones' blob is gone");
    assert.deepEqual(await table.get({ pk: "p", sk: 1 }), { pk: "p", sk: 1, version: 4, d: new Uint8Array([4]) });
  });

  it("a put that does not land leaves no blob: key taken, or a condition not met", async () => {
    await table.put({ pk: "q", sk: 1, version: 1, d: long(5) });
    const failed = (err: unknown) => err instanceof ConditionFailedError;
    await assert.rejects(table.put({ pk: "q", sk: 1, d: long(6) }, { condition: { exists: false } }), failed);
    await assert.rejects(table.put({ pk: "q", sk: 1, d: long(7) }, { condition: { versionIs: 9 } }), failed);
    assert.deepEqual(onDisk().blobs, [5]);
    assert.deepEqual((await table.get({ pk: "q", sk: 1 }))?.d, long(5));
    await table.delete({ pk: "q", sk: 1 });
    assert.deepEqual(onDisk(), { blobs: [], named: 0 });
  });

  it("an add keeps the row's blob (the same one); addThenPut onto a taken key leaves no blob of its item", async () => {
    await table.put({ pk: "c", sk: 0, next: 0, d: long(8) });
    const blob = brefAt("c", 0);
    assert.equal(await table.add({ pk: "c", sk: 0 }, "next", 2), 2);
    assert.equal(brefAt("c", 0), blob, "no blob written for an add");
    assert.deepEqual(onDisk().blobs, [8]);
    assert.deepEqual(await table.get({ pk: "c", sk: 0 }), { pk: "c", sk: 0, next: 2, d: long(8) });
    await table.put({ pk: "c", sk: 5, d: long(9) });
    const outcome = await table.addThenPut({
      counter: { pk: "c", sk: 0 },
      attribute: "next",
      delta: 3,
      item: (added) => ({ pk: "c", sk: added, d: long(10) }),
    });
    assert.equal(outcome.outcome, "taken");
    assert.deepEqual(onDisk().blobs.sort(), [8, 9]);
    await table.delete({ pk: "c", sk: 0 });
    await table.delete({ pk: "c", sk: 5 });
    assert.deepEqual(onDisk(), { blobs: [], named: 0 });
  });

  it("writes to one key in one transaction: each put's blob replaced by the next, the delete's gone", async () => {
    const before = table.writeBatcher.transactions;
    await Promise.all([
      table.put({ pk: "b", sk: 1, d: long(20) }),
      table.put({ pk: "b", sk: 1, d: long(21) }),
      table.put({ pk: "b", sk: 2, d: long(22) }),
      table.delete({ pk: "b", sk: 2 }),
    ]);
    assert.equal(table.writeBatcher.transactions - before, 1, "one group commit");
    assert.deepEqual(onDisk(), { blobs: [21], named: 1 });
    assert.deepEqual((await table.get({ pk: "b", sk: 1 }))?.d, long(21));
    await table.delete({ pk: "b", sk: 1 });
  });

  it("a query's page of blob rows ends after 1 MB read, as DynamoDB's", async () => {
    const big = (fill: number) => new Uint8Array(300 * 1024).fill(fill);
    for (let sk = 0; sk < 5; sk++) await table.put({ pk: "m", sk, d: big(sk) });
    const page = await table.query("m");
    assert.deepEqual(
      page.items.map((i) => i.sk),
      [0, 1, 2, 3],
    );
    assert.equal(page.lastSk, 3);
    assert.deepEqual(page.items[3]?.d, big(3));
    for (let sk = 0; sk < 5; sk++) await table.delete({ pk: "m", sk });
    assert.deepEqual(onDisk(), { blobs: [], named: 0 });
  });

  it("the TTL sweep removes the expired rows' blobs with them", async () => {
    const now = Math.floor(Date.now() / 1000);
    await table.put({ pk: "t", sk: 1, expires: now - 7200, d: long(11) });
    await table.put({ pk: "t", sk: 2, expires: now + 3600, d: long(12) });
    const other = createLocalStorage({ dataDir });
    try {
      other.table({ name: "blobs", sortKeyType: "number", ttlAttribute: "expires" });
      assert.deepEqual(onDisk(), { blobs: [12], named: 1 });
    } finally {
      await other.close();
    }
    await table.delete({ pk: "t", sk: 2 });
  });

  it("a row that holds its long bytes itself (written before blobs) reads, and a put over it replaces it", async () => {
    const db = new Database(path.join(dataDir, "tables.sqlite"));
    const bytes = Buffer.from(long(13));
    db.prepare('INSERT INTO "t_blobs" (pk, sk, attrs, bin) VALUES (?, ?, ?, ?)').run(
      "old",
      1,
      JSON.stringify({ d: { $r: [0, bytes.length] } }),
      bytes,
    );
    db.close();
    const page = await table.query("old");
    assert.deepEqual(page.items, [{ pk: "old", sk: 1, d: long(13) }]);
    await table.put({ pk: "old", sk: 1, d: long(14) });
    assert.deepEqual(onDisk(), { blobs: [14], named: 1 });
    assert.deepEqual((await table.get({ pk: "old", sk: 1 }))?.d, long(14));
  });
});
