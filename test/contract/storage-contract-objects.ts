/** @module Contract cases: the object store (put/get, ranges, errors, key rules, listing order, paging, delete). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode } from "../../lib/core/errors.js";
import type { ListOptions, ObjectInfo, ObjectStore } from "../../lib/storage/object-store.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import { allBytes, byUtf8, patternBytes, plain, rejectsWith, unique, useFixture } from "./storage-contract-helpers.js";

/** Lists every page under `prefix`; returns the pages. */
async function listAll(store: ObjectStore, prefix: string, options: ListOptions = {}): Promise<ObjectInfo[][]> {
  const out: ObjectInfo[][] = [];
  let continuation: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const page = await store.list(prefix, { ...options, continuation });
    out.push(page.objects);
    if (page.next === undefined) return out;
    continuation = page.next;
  }
  throw new Error("listing never ended");
}

const keysOf = async (store: ObjectStore, prefix: string): Promise<string[]> =>
  (await listAll(store, prefix)).flat().map((o) => o.key);

export function objectCases(open: OpenFixture): void {
  describe("objects", () => {
    const fx = useFixture(open);
    const store = () => fx().storage.objects;
    const bytes = (b: Uint8Array) => plain(b);

    it("put then get returns the same bytes as a Uint8Array", async () => {
      const key = `${unique("obj")}/data.bin`;
      await store().put(key, allBytes());
      const back = await store().get(key);
      assert.ok(back instanceof Uint8Array);
      assert.deepEqual(bytes(back), allBytes());
      const empty = `${unique("obj")}/empty`;
      await store().put(empty, new Uint8Array(0));
      assert.equal((await store().get(empty)).byteLength, 0);
    });

    it("put replaces an object; a second storage on the same data sees it", async () => {
      const key = `${unique("obj")}/over`;
      await store().put(key, patternBytes(1000));
      await store().put(key, new Uint8Array([9, 8, 7]));
      assert.deepEqual(bytes(await store().get(key)), new Uint8Array([9, 8, 7]));
      const other = await fx().reopen();
      assert.deepEqual(bytes(await other.objects.get(key)), new Uint8Array([9, 8, 7]));
    });

    it("reads byte ranges, cutting a range that runs past the end", async () => {
      const key = `${unique("obj")}/range`;
      const data = patternBytes(1000);
      await store().put(key, data);
      const cases: [number, number, Uint8Array][] = [
        [0, 1, data.slice(0, 1)],
        [0, 1000, data],
        [10, 90, data.slice(10, 100)],
        [999, 1, data.slice(999)],
        [998, 100, data.slice(998)],
        [500, 10_000, data.slice(500)],
      ];
      for (const [offset, length, expected] of cases) {
        assert.deepEqual(bytes(await store().get(key, { offset, length })), expected, `range ${offset}+${length}`);
      }
    });

    it("rejects a range at or past the end, or empty, or negative, with INVALID_RANGE", async () => {
      const key = `${unique("obj")}/bad-range`;
      await store().put(key, patternBytes(100));
      for (const range of [
        { offset: 100, length: 1 },
        { offset: 5000, length: 10 },
        { offset: 0, length: 0 },
        { offset: 10, length: -1 },
        { offset: -1, length: 10 },
      ]) {
        await rejectsWith(store().get(key, range), ErrorCode.INVALID_RANGE);
      }
      const empty = `${unique("obj")}/empty`;
      await store().put(empty, new Uint8Array(0));
      await rejectsWith(store().get(empty, { offset: 0, length: 1 }), ErrorCode.INVALID_RANGE);
    });

    it("a missing key is OBJECT_NOT_FOUND, with or without a range", async () => {
      const key = `${unique("obj")}/missing`;
      await rejectsWith(store().get(key), ErrorCode.OBJECT_NOT_FOUND);
      await rejectsWith(store().get(key, { offset: 0, length: 10 }), ErrorCode.OBJECT_NOT_FOUND);
    });

    it("rejects keys outside the portable pattern with PARAMETER_ILLEGAL", async () => {
      const bad = [
        "",
        "/a",
        "a/",
        "a//b",
        ".",
        "..",
        "a/./b",
        "a/../b",
        "../x",
        "a b",
        "a/é",
        "a\\b",
        "a?b",
        "k".repeat(1025),
      ];
      for (const key of bad) {
        await rejectsWith(store().put(key, new Uint8Array([1])), ErrorCode.PARAMETER_ILLEGAL);
        await rejectsWith(store().get(key), ErrorCode.PARAMETER_ILLEGAL);
        await rejectsWith(store().delete([key]), ErrorCode.PARAMETER_ILLEGAL);
      }
      const good = `${unique("obj")}/${"k".repeat(200)}/...x/(a)!_*'%-.b`;
      await store().put(good, new Uint8Array([1]));
      assert.deepEqual(bytes(await store().get(good)), new Uint8Array([1]));
    });

    it("a key can also be the prefix of other keys (a and a/b both exist)", async () => {
      const base = unique("nest");
      await store().put(base, new Uint8Array([1]));
      await store().put(`${base}/b`, new Uint8Array([2, 2]));
      await store().put(`${base}/b/c`, new Uint8Array([3, 3, 3]));
      assert.deepEqual(bytes(await store().get(base)), new Uint8Array([1]));
      assert.deepEqual(bytes(await store().get(`${base}/b`)), new Uint8Array([2, 2]));
      const page = await store().list(base);
      assert.deepEqual(page.objects, [
        { key: base, size: 1 },
        { key: `${base}/b`, size: 2 },
        { key: `${base}/b/c`, size: 3 },
      ]);
      assert.equal(page.next, undefined);
    });

    it("lists keys in UTF-8 byte order with their sizes", async () => {
      const p = `${unique("order")}/`;
      const names = ["a/b", "a/Z", "a/z", "a-b", "a", "a!x", "a%2F", "a(x", "a*x", "a.b", "a0", "aA", "a_x", "ab", "B"];
      for (const [i, name] of names.entries()) await store().put(p + name, new Uint8Array(i));
      const expected = byUtf8(names.map((n) => p + n));
      assert.deepEqual(expected.slice(0, 4), [`${p}B`, `${p}a`, `${p}a!x`, `${p}a%2F`]);
      const listed = (await listAll(store(), p)).flat();
      assert.deepEqual(
        listed.map((o) => o.key),
        expected,
      );
      for (const o of listed) assert.equal(o.size, names.indexOf(o.key.slice(p.length)));
    });

    it("filters by prefix, which need not be a whole segment", async () => {
      const p = unique("prefix");
      for (const k of ["p/x1", "p/x2", "p/y1", "pq", "q"]) await store().put(`${p}/${k}`, new Uint8Array([1]));
      assert.deepEqual(await keysOf(store(), `${p}/p/x`), [`${p}/p/x1`, `${p}/p/x2`]);
      assert.deepEqual(await keysOf(store(), `${p}/p/`), [`${p}/p/x1`, `${p}/p/x2`, `${p}/p/y1`]);
      assert.deepEqual(await keysOf(store(), `${p}/p`), [`${p}/p/x1`, `${p}/p/x2`, `${p}/p/y1`, `${p}/pq`]);
      assert.deepEqual(await keysOf(store(), `${p}/`), [`${p}/p/x1`, `${p}/p/x2`, `${p}/p/y1`, `${p}/pq`, `${p}/q`]);
      assert.deepEqual(await store().list(`${p}/zzz`), { objects: [] });
      assert.deepEqual(await store().list(`${p}//`), { objects: [] });
      assert.deepEqual(await store().list(`${p}/é`), { objects: [] });
    });

    it("pages through 25 keys with limit 10: 10, 10, 5, each key once, next only when more follow", async () => {
      const p = `${unique("pages")}/`;
      const keys = Array.from({ length: 25 }, (_, i) => `${p}k${String(i).padStart(2, "0")}`);
      for (const key of keys) await store().put(key, new Uint8Array([1]));
      const result = await listAll(store(), p, { limit: 10 });
      assert.deepEqual(
        result.map((page) => page.length),
        [10, 10, 5],
      );
      assert.deepEqual(
        result.flat().map((o) => o.key),
        keys,
      );
      const exact = await listAll(store(), `${p}k0`, { limit: 5 });
      assert.deepEqual(
        exact.map((page) => page.length),
        [5, 5],
        "S3 knows when nothing follows: no empty last page",
      );
      await rejectsWith(store().list(p, { limit: 0 }), ErrorCode.PARAMETER_ILLEGAL);
    });

    it("deletes keys; missing keys are fine", async () => {
      const p = unique("del");
      for (const k of ["a", "b/c", "b/d"]) await store().put(`${p}/${k}`, new Uint8Array([1]));
      await store().delete([`${p}/a`, `${p}/b/c`, `${p}/never`]);
      await rejectsWith(store().get(`${p}/a`), ErrorCode.OBJECT_NOT_FOUND);
      await rejectsWith(store().get(`${p}/b/c`), ErrorCode.OBJECT_NOT_FOUND);
      assert.deepEqual(await keysOf(store(), `${p}/`), [`${p}/b/d`]);
      await store().delete([]);
      await store().delete([`${p}/b/d`, `${p}/b/d`]);
      assert.deepEqual(await keysOf(store(), `${p}/`), []);
      await store().put(`${p}/b/d`, new Uint8Array([4]));
      assert.deepEqual(bytes(await store().get(`${p}/b/d`)), new Uint8Array([4]));
    });
  });
}
