/** @module Contract cases: a known sequence of calls gives known request counts and capacity units. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode } from "../../lib/core/errors.js";
import { diffCounts, NO_REQUESTS as NONE, type RequestCounts } from "../../lib/storage/request-counter.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import { NUMBER_TABLE, rejectsWith, unique, useFixture } from "./storage-contract-helpers.js";

/** Runs `fn` and returns what it added to the storage's counter. */
async function counted(storage: Storage, fn: () => Promise<unknown>): Promise<RequestCounts> {
  const before = storage.counter.snapshot();
  await fn();
  return diffCounts(storage.counter.snapshot(), before);
}

export function countingCases(open: OpenFixture): void {
  describe("request counting", () => {
    const fx = useFixture(open);
    const table = () => fx().storage.table(NUMBER_TABLE);
    const expect = async (fn: () => Promise<unknown>, counts: Partial<RequestCounts>, what: string) => {
      assert.deepEqual(await counted(fx().storage, fn), { ...NONE, ...counts }, what);
    };

    it("counts table reads and writes with DynamoDB's capacity units", async () => {
      const pk = unique("count");
      const big = "b".repeat(5000); // item of ~5 KB: 5 write units, 2 consistent read units
      await expect(() => table().put({ pk, sk: 1, v: 1 }), { tableWrites: 1, writeUnits: 1 }, "small put");
      await expect(() => table().put({ pk, sk: 2, big }), { tableWrites: 1, writeUnits: 5 }, "5 KB put");
      await expect(() => table().get({ pk, sk: 1 }, { consistent: true }), { tableReads: 1, readUnits: 1 }, "get");
      await expect(() => table().get({ pk, sk: 1 }), { tableReads: 1, readUnits: 0.5 }, "eventual get");
      await expect(() => table().get({ pk, sk: 9 }), { tableReads: 1, readUnits: 0.5 }, "get of nothing");
      await expect(() => table().get({ pk, sk: 2 }, { consistent: true }), { tableReads: 1, readUnits: 2 }, "5 KB get");
      await expect(() => table().query(pk), { tableReads: 1, readUnits: 1 }, "query of ~5 KB, eventual");
      await expect(() => table().query(pk, { consistent: true, limit: 1 }), { tableReads: 1, readUnits: 1 }, "query");
      await expect(() => table().query(unique("none")), { tableReads: 1, readUnits: 0.5 }, "query of nothing");
      await expect(() => table().delete({ pk, sk: 1 }), { tableWrites: 1, writeUnits: 1 }, "delete");
      await expect(() => table().delete({ pk, sk: 3 }), { tableWrites: 1, writeUnits: 1 }, "delete of nothing");
    });

    it("counts failed conditional puts (DynamoDB bills them) but not rejected input", async () => {
      const pk = unique("count");
      await table().put({ pk, sk: 1, v: 1 });
      const create = { condition: { exists: false } } as const;
      const failedPut = () =>
        rejectsWith(table().put({ pk, sk: 1, big: "b".repeat(3000) }, create), ErrorCode.CONDITION_FAILED);
      await expect(failedPut, { tableWrites: 1, writeUnits: 3 }, "failed put counts its item size");
      const illegal = () => rejectsWith(table().put({ pk: "", sk: 1 }), ErrorCode.PARAMETER_ILLEGAL);
      await expect(illegal, {}, "rejected input is not a request");
      const badLimit = () => rejectsWith(table().query(pk, { limit: 0 }), ErrorCode.PARAMETER_ILLEGAL);
      await expect(badLimit, {}, "rejected query is not a request");
    });

    it("counts object requests: one per put, get, list; one delete per 1000 keys", async () => {
      const p = unique("count");
      const objects = () => fx().storage.objects;
      await expect(() => objects().put(`${p}/a`, new Uint8Array(10)), { objectPuts: 1 }, "put");
      await expect(() => objects().get(`${p}/a`), { objectGets: 1, objectBytesRead: 10 }, "get");
      await expect(
        () => objects().get(`${p}/a`, { offset: 2, length: 3 }),
        { objectGets: 1, objectBytesRead: 3 },
        "ranged get",
      );
      const missing = () => rejectsWith(objects().get(`${p}/missing`), ErrorCode.OBJECT_NOT_FOUND);
      await expect(missing, { objectGets: 1 }, "get of a missing key is a request");
      await expect(() => objects().list(`${p}/`), { objectLists: 1 }, "list");
      await expect(() => objects().list(`${p}/`, { limit: 1 }), { objectLists: 1 }, "list page");
      const keys = Array.from({ length: 1001 }, (_, i) => `${p}/gone/${i}`);
      await expect(() => objects().delete(keys), { objectDeletes: 2 }, "1001 keys: two deletes");
      await expect(() => objects().delete(keys.slice(0, 1000)), { objectDeletes: 1 }, "1000 keys: one delete");
      await expect(() => objects().delete([]), {}, "no keys: no request");
      const badKey = () => rejectsWith(objects().put("bad key", new Uint8Array(1)), ErrorCode.PARAMETER_ILLEGAL);
      await expect(badKey, {}, "rejected key is not a request");
    });
  });
}
