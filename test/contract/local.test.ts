/**
 * @module Runs the storage contract suite against the embedded adapter (SQLite + files), plus the few
 * behaviours only the embedded adapter has (its files, its lock timeout, its TTL sweep).
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import { ErrorCode } from "../../lib/core/errors.js";
import { createLocalStorage, NEW_DATABASE_PAGE_BYTES, OUT_OF_ROW_BYTES } from "../../lib/storage/local/index.js";
import { querySql } from "../../lib/storage/local/sqlite-table.js";
import { sqlNamesOf } from "../../lib/storage/local/sqlite-table-schema.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { QueryOptions } from "../../lib/storage/table.js";
import { makeStoreFile, openLocalFixture } from "../support/local-fixture.js";
import { queueLogContract } from "./queue-log-contract.js";
import { queueLogAppendersContract } from "./queue-log-contract-appenders.js";
import { queueLogCycleContract } from "./queue-log-contract-cycle.js";
import { queueLogIdleContract } from "./queue-log-contract-idle.js";
import { queueLogRangesContract } from "./queue-log-contract-ranges.js";
import { queueLogReadsContract } from "./queue-log-contract-reads.js";
import { queueLogSpreadContract } from "./queue-log-contract-spread.js";
import { storageContract } from "./storage-contract.js";
import { rejectsWith } from "./storage-contract-helpers.js";

storageContract("local (SQLite + files)", openLocalFixture);
queueLogContract("local (SQLite + files)", openLocalFixture);
queueLogAppendersContract("local (SQLite + files)", openLocalFixture);
queueLogCycleContract("local (SQLite + files)", openLocalFixture);
queueLogRangesContract("local (SQLite + files)", openLocalFixture);
queueLogReadsContract("local (SQLite + files)", openLocalFixture);
queueLogSpreadContract("local (SQLite + files)", openLocalFixture);
queueLogIdleContract("local (SQLite + files)", openLocalFixture);

describe("local storage specifics", () => {
  let dataDir = "";
  let storage: Storage;
  before(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-local-"));
    storage = createLocalStorage({ dataDir, busyTimeoutMs: 50 });
  });
  after(async () => {
    await storage.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("keeps keys that differ only in case apart on disk, and ignores stray files", async () => {
    await storage.objects.put("case/Z", new Uint8Array([1]));
    await storage.objects.put("case/z", new Uint8Array([2]));
    await storage.objects.put("case/*", new Uint8Array([3]));
    assert.deepEqual(readdirSync(path.join(dataDir, "objects", "case")).sort(), ["^+~", "^z~", "z~"]);
    writeFileSync(path.join(dataDir, "objects", "case", "z~1234.tmp"), "partial");
    writeFileSync(path.join(dataDir, "objects", "case", "notes.txt"), "not ours");
    mkdirSync(path.join(dataDir, "objects", "case", "Upper"));
    const page = await storage.objects.list("case/");
    assert.deepEqual(
      page.objects.map((o) => o.key),
      ["case/*", "case/Z", "case/z"],
    );
  });

  it("lists at most 1000 keys per page by default", async () => {
    const keys = Array.from({ length: 1001 }, (_, i) => `many/${String(i).padStart(4, "0")}`);
    for (let i = 0; i < keys.length; i += 100) {
      await Promise.all(keys.slice(i, i + 100).map((k) => storage.objects.put(k, new Uint8Array(0))));
    }
    const first = await storage.objects.list("many/");
    assert.equal(first.objects.length, 1000);
    assert.equal(first.next, keys[999]);
    const capped = await storage.objects.list("many/", { limit: 5000 });
    assert.equal(capped.objects.length, 1000);
    const rest = await storage.objects.list("many/", { continuation: first.next });
    assert.deepEqual(rest, { objects: [{ key: keys[1000], size: 0 }] });
  });

  it("reads a query's page in the primary key's order, with no sort and no LIMIT to compile again", async () => {
    for (const sortKeyType of ["number", "string"] as const) {
      const spec = { name: `plans_${sortKeyType}`, sortKeyType };
      storage.table(spec);
      const names = sqlNamesOf(spec);
      const joined = `${names.rows} AS r LEFT JOIN ${names.blobs} AS b ON b.id = r.bref`;
      const key = sortKeyType === "number" ? 5 : "e";
      const shapes: QueryOptions[] = [
        {},
        { descending: true, limit: 1 },
        { sk: { gt: key }, limit: 16 },
        { sk: { lte: key }, descending: true, startAfter: key },
        { sk: { between: [key, key] }, startAfter: key },
      ];
      const db = new Database(path.join(dataDir, "tables.sqlite"), { readonly: true });
      try {
        for (const options of shapes) {
          const { sql, params } = querySql(joined, "pk", options);
          assert.doesNotMatch(sql, /LIMIT/);
          const plan = db
            .prepare(`EXPLAIN QUERY PLAN ${sql}`)
            .all(...params)
            .map((row) => (row as { detail: string }).detail);
          assert.match(plan[0] ?? "", /^SEARCH r USING PRIMARY KEY \(pk=\?/, JSON.stringify(plan));
          assert.ok(!plan.some((d) => d.includes("TEMP B-TREE")), JSON.stringify(plan));
        }
      } finally {
        db.close();
      }
    }
  });

  it("a table name opens with one spec only", () => {
    storage.table({ name: "specs", sortKeyType: "number" });
    assert.throws(() => storage.table({ name: "specs", sortKeyType: "string" }), { code: ErrorCode.PARAMETER_ILLEGAL });
    const other = createLocalStorage({ dataDir });
    assert.throws(() => other.table({ name: "specs", sortKeyType: "string" }), { code: ErrorCode.PARAMETER_ILLEGAL });
    assert.throws(() => other.table({ name: 'bad"name', sortKeyType: "string" }), {
      code: ErrorCode.PARAMETER_ILLEGAL,
    });
    return other.close();
  });

  it("a new store's pages are 8 KiB, a 1 KiB message's bytes in the blob table, no page spilled; an old store keeps 4 KiB pages", async () => {
    const table = storage.table({ name: "pages", sortKeyType: "number" });
    // A row the size of an inline batch item of one 1 KiB message (its bytes and header), put directly.
    const d = new Uint8Array(1100).fill(7);
    for (let sk = 0; sk < 20; sk++) await table.put({ pk: "q", sk, n: 1, t: Date.now(), d });
    const overflowOf = (file: string) => {
      const db = new Database(file, { readonly: true });
      try {
        const size = db.pragma("page_size", { simple: true });
        const overflow = db.prepare("SELECT count(*) FROM dbstat WHERE name = ? AND pagetype = 'overflow'").pluck();
        const blobs = db.prepare('SELECT count(*) FROM "b_pages" WHERE length(bytes) = 1100').pluck().get();
        return { size, rowsOverflow: overflow.get("t_pages"), blobsOverflow: overflow.get("b_pages"), blobs };
      } finally {
        db.close();
      }
    };
    assert.equal(NEW_DATABASE_PAGE_BYTES, 8192);
    const expected = { rowsOverflow: 0, blobsOverflow: 0, blobs: 20 };
    assert.deepEqual(overflowOf(path.join(dataDir, "tables.sqlite")), { size: 8192, ...expected });

    // A store made before (4 KiB pages): it opens and keeps its page size; the bytes fit a blob table's page too.
    const oldDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-local-4k-"));
    try {
      makeStoreFile(oldDir, 4096);
      const old = createLocalStorage({ dataDir: oldDir });
      try {
        const oldTable = old.table({ name: "pages", sortKeyType: "number" });
        for (let sk = 0; sk < 20; sk++) await oldTable.put({ pk: "q", sk, n: 1, t: Date.now(), d });
        assert.deepEqual((await oldTable.get({ pk: "q", sk: 19 }))?.d, d);
      } finally {
        await old.close();
      }
      assert.deepEqual(overflowOf(path.join(oldDir, "tables.sqlite")), { size: 4096, ...expected });
    } finally {
      rmSync(oldDir, { recursive: true, force: true });
    }
  });

  it("a write that cannot get the lock within busyTimeoutMs fails with SYSTEM_BUSY and writes nothing", async () => {
    const table = storage.table({ name: "busy", sortKeyType: "number" });
    const holder = new Database(path.join(dataDir, "tables.sqlite"));
    holder.exec("BEGIN IMMEDIATE");
    try {
      const err = await rejectsWith(table.put({ pk: "p", sk: 1 }), ErrorCode.SYSTEM_BUSY);
      assert.equal(err.retryable, true);
      assert.equal(await table.get({ pk: "p", sk: 1 }), undefined, "reads still work beside a writer");
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    await table.put({ pk: "p", sk: 1 });
  });

  it("sweeps items whose TTL passed over an hour ago when a table opens", async () => {
    const spec = { name: "ttl", sortKeyType: "string", ttlAttribute: "expires" } as const;
    const now = Math.floor(Date.now() / 1000);
    const table = storage.table(spec);
    await table.put({ pk: "p", sk: "long-expired", expires: now - 7200 });
    await table.put({ pk: "p", sk: "just-expired", expires: now - 60 });
    await table.put({ pk: "p", sk: "live", expires: now + 3600 });
    await table.put({ pk: "p", sk: "no-ttl" });
    await table.put({ pk: "p", sk: "not-a-number", expires: "0" });
    const other = createLocalStorage({ dataDir });
    const page = await other.table(spec).query("p");
    assert.deepEqual(
      page.items.map((i) => i.sk),
      ["just-expired", "live", "no-ttl", "not-a-number"],
    );
    await other.close();
  });

  it("keeps short bytes in the row's BLOB and long ones in the blob table; reads a table written before either", async () => {
    // A table as the store wrote it before: no `bin` column, binary attributes as base64 in the JSON.
    const old = new Database(path.join(dataDir, "tables.sqlite"));
    old.exec(
      'CREATE TABLE "t_older" (pk TEXT NOT NULL, sk REAL NOT NULL, attrs TEXT NOT NULL, PRIMARY KEY (pk, sk)) WITHOUT ROWID',
    );
    old.prepare('INSERT INTO "t_older" (pk, sk, attrs) VALUES (?, ?, ?)').run("q", 0, '{"body":{"$b":"AQID"},"n":1}');
    old.close();
    const table = storage.table({ name: "older", sortKeyType: "number" });
    assert.deepEqual(await table.get({ pk: "q", sk: 0 }), { pk: "q", sk: 0, body: new Uint8Array([1, 2, 3]), n: 1 });
    const body = Uint8Array.from({ length: 1024 }, (_, i) => i & 0xff);
    await table.put({ pk: "q", sk: 1, body, parts: [new Uint8Array([9]), { inner: new Uint8Array([7, 8]) }] });
    const page = await table.query("q");
    assert.deepEqual(
      page.items.map((i) => i.sk),
      [0, 1],
    );
    assert.deepEqual(page.items[1], {
      pk: "q",
      sk: 1,
      body,
      parts: [new Uint8Array([9]), { inner: new Uint8Array([7, 8]) }],
    });
    await table.put({ pk: "q", sk: 2, small: new Uint8Array(OUT_OF_ROW_BYTES - 1).fill(3) });
    assert.deepEqual((await table.get({ pk: "q", sk: 2 }))?.small, new Uint8Array(OUT_OF_ROW_BYTES - 1).fill(3));
    const reader = new Database(path.join(dataDir, "tables.sqlite"), { readonly: true });
    const rowAt = (sk: number) =>
      reader.prepare('SELECT attrs, bin, bref FROM "t_older" WHERE pk = ? AND sk = ?').get("q", sk) as {
        attrs: string;
        bin: Buffer | null;
        bref: number | null;
      };
    const large = rowAt(1);
    const small = rowAt(2);
    const blob = reader.prepare('SELECT bytes FROM "b_older" WHERE id = ?').pluck().get(large.bref) as Buffer;
    reader.close();
    assert.equal(large.bin, null);
    assert.equal(blob.length, 1024 + 1 + 2, "every binary value's bytes in one blob, one after another");
    assert.ok(large.attrs.length < 100, `the JSON holds ranges, not base64: ${large.attrs}`);
    assert.equal(small.bref, null);
    assert.equal(small.bin?.length, OUT_OF_ROW_BYTES - 1, "short bytes stay in the row");
  });
});
