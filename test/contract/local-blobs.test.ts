/**
 * @module The embedded store's blob table: a row's long bytes live in `"b_<name>"` and the row names them (`bref`).
 * Whatever replaces or removes a row (a put over it, with or without a condition, an add, a delete, the TTL sweep)
 * removes its blob; a put that does not land (its key taken) leaves none behind; a row written before blobs existed
 * (its bytes in the row) reads and is replaced as any other.
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
  /** The blob table's rows (their first byte each, in id order: an id may be used again) and how many rows name a blob. */
  const onDisk = (): { blobs: number[]; named: number } => {
    const db = new Database(path.join(dataDir, "tables.sqlite"), { readonly: true });
    try {
      const blobs = db.prepare('SELECT unicode(CAST(substr(bytes, 1, 1) AS TEXT)) FROM "b_blobs" ORDER BY id').pluck();
      const named = db.prepare('SELECT count(*) FROM "t_blobs" WHERE bref IS NOT NULL').pluck().get() as number;
      return { blobs: blobs.all() as number[], named };
    } finally {
      db.close();
    }
  };

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

  it("an add keeps the row's blob; addThenPut onto a taken key leaves no blob of its item", async () => {
    await table.put({ pk: "c", sk: 0, next: 0, d: long(8) });
    assert.equal(await table.add({ pk: "c", sk: 0 }, "next", 2), 2);
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
