/** @module Contract cases: query by sort-key range in both directions, limit, pagination, the 1 MB page. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { QueryOptions, SortKey, SortKeyRange, Table } from "../../lib/storage/table.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import { byUtf8, NUMBER_TABLE, STRING_TABLE, unique, useFixture } from "./storage-contract-helpers.js";

/** Reads every page of a query and returns the pages' sort keys and `lastSk`s. */
async function pages(table: Table, pk: string, options: QueryOptions): Promise<{ sks: SortKey[]; last?: SortKey }[]> {
  const out: { sks: SortKey[]; last?: SortKey }[] = [];
  let startAfter: SortKey | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const page = await table.query(pk, {
      ...options,
      consistent: true,
      startAfter,
    });
    out.push({ sks: page.items.map((i) => i.sk), ...(page.lastSk === undefined ? {} : { last: page.lastSk }) });
    if (page.lastSk === undefined) return out;
    startAfter = page.lastSk;
  }
  throw new Error("query never ended");
}

const sksOf = async (table: Table, pk: string, options: QueryOptions = {}): Promise<SortKey[]> => {
  const page = await table.query(pk, { ...options, consistent: true });
  assert.equal(page.lastSk, undefined, "no limit reached, so no lastSk");
  for (const item of page.items) assert.equal(item.pk, pk);
  return page.items.map((i) => i.sk);
};

export function queryCases(open: OpenFixture): void {
  describe("query", () => {
    const fx = useFixture(open);
    const numbers = () => fx().storage.table(NUMBER_TABLE);
    const strings = () => fx().storage.table(STRING_TABLE);

    it("an empty partition gives no items and no lastSk", async () => {
      const page = await numbers().query(unique("empty"));
      assert.deepEqual(page.items, []);
      assert.equal(page.lastSk, undefined);
    });

    it("number sort keys: every range operator, both directions, numeric order", async () => {
      const pk = unique("numbers");
      const all = [-5, 0, 1, 2, 2.5, 10, 100, 1000];
      for (const sk of [100, 2, 1000, -5, 10, 1, 2.5, 0]) await numbers().put({ pk, sk, v: `n${sk}` });
      await numbers().put({ pk: unique("neighbour"), sk: 10 });
      const cases: [SortKeyRange | undefined, number[]][] = [
        [undefined, all],
        [{ lte: 10 }, [-5, 0, 1, 2, 2.5, 10]],
        [{ lte: 9 }, [-5, 0, 1, 2, 2.5]],
        [{ lte: -6 }, []],
        [{ gt: 2 }, [2.5, 10, 100, 1000]],
        [{ gt: -5.5 }, all],
        [{ gt: 1000 }, []],
        [{ between: [0, 10] }, [0, 1, 2, 2.5, 10]],
        [{ between: [2.5, 2.5] }, [2.5]],
        [{ between: [3, 9] }, []],
      ];
      for (const [sk, expected] of cases) {
        const options = sk === undefined ? {} : { sk };
        assert.deepEqual(await sksOf(numbers(), pk, options), expected, `ascending ${JSON.stringify(sk)}`);
        const down = await sksOf(numbers(), pk, { ...options, descending: true });
        assert.deepEqual(down, [...expected].reverse(), `descending ${JSON.stringify(sk)}`);
      }
      const holder = await numbers().query(pk, { sk: { lte: 12 }, descending: true, limit: 1 });
      assert.deepEqual(holder.items, [{ pk, sk: 10, v: "n10" }]);
    });

    it("string sort keys: every range operator, both directions, UTF-8 byte order", async () => {
      const pk = unique("strings");
      const keys = ["a", "a/b", "a/é", "a/Z", "a/z", "a-b", "ab", "b", "B", "é", "😀", "\uFFFD", "a/", "a0"];
      const all = byUtf8(keys);
      // UTF-8 byte order, spelled out: "-" < "/" < "0", upper case before lower, U+FFFD before U+1F600.
      assert.deepEqual(all, ["B", "a", "a-b", "a/", "a/Z", "a/b", "a/z", "a/é", "a0", "ab", "b", "é", "\uFFFD", "😀"]);
      for (const sk of keys) await strings().put({ pk, sk });
      const cases: [SortKeyRange | undefined, string[]][] = [
        [undefined, all],
        [{ lte: "a/b" }, ["B", "a", "a-b", "a/", "a/Z", "a/b"]],
        [{ lte: "\uFFFD" }, all.slice(0, -1)],
        [{ gt: "b" }, ["é", "\uFFFD", "😀"]],
        [{ gt: "a/" }, ["a/Z", "a/b", "a/z", "a/é", "a0", "ab", "b", "é", "\uFFFD", "😀"]],
        [{ gt: "😀" }, []],
        [{ between: ["a/", "a0"] }, ["a/", "a/Z", "a/b", "a/z", "a/é", "a0"]],
      ];
      for (const [sk, expected] of cases) {
        const options = sk === undefined ? {} : { sk };
        assert.deepEqual(await sksOf(strings(), pk, options), expected, `ascending ${JSON.stringify(sk)}`);
        const down = await sksOf(strings(), pk, { ...options, descending: true });
        assert.deepEqual(down, [...expected].reverse(), `descending ${JSON.stringify(sk)}`);
      }
    });

    it("pages through 25 items with limit 10: 10, 10, 5, each item once, lastSk only on full pages", async () => {
      const pk = unique("pages");
      for (let sk = 0; sk < 25; sk++) await numbers().put({ pk, sk });
      const up = await pages(numbers(), pk, { limit: 10 });
      assert.deepEqual(
        up.map((p) => p.sks.length),
        [10, 10, 5],
      );
      assert.deepEqual(
        up.map((p) => p.last),
        [9, 19, undefined],
      );
      assert.deepEqual(
        up.flatMap((p) => p.sks),
        Array.from({ length: 25 }, (_, i) => i),
      );
      const down = await pages(numbers(), pk, { limit: 10, descending: true });
      assert.deepEqual(
        down.map((p) => p.last),
        [15, 5, undefined],
      );
      assert.deepEqual(
        down.flatMap((p) => p.sks),
        Array.from({ length: 25 }, (_, i) => 24 - i),
      );
    });

    it("a page that ends exactly at the limit has lastSk, and the next page is empty", async () => {
      const pk = unique("exact");
      for (let sk = 1; sk <= 4; sk++) await numbers().put({ pk, sk });
      const result = await pages(numbers(), pk, { limit: 2 });
      assert.deepEqual(result, [{ sks: [1, 2], last: 2 }, { sks: [3, 4], last: 4 }, { sks: [] }]);
      const one = await numbers().query(pk, { sk: { lte: 3 }, descending: true, limit: 1 });
      assert.equal(one.lastSk, 3);
    });

    it("limit and startAfter combine with a range, in both directions", async () => {
      const pk = unique("window");
      for (let sk = 0; sk < 12; sk++) await numbers().put({ pk, sk });
      const up = await pages(numbers(), pk, { sk: { gt: 2 }, limit: 3 });
      assert.deepEqual(
        up.map((p) => p.sks),
        [[3, 4, 5], [6, 7, 8], [9, 10, 11], []],
      );
      const down = await pages(numbers(), pk, { sk: { lte: 6 }, limit: 4, descending: true });
      assert.deepEqual(
        down.map((p) => p.sks),
        [
          [6, 5, 4, 3],
          [2, 1, 0],
        ],
      );
      const after = await numbers().query(pk, { startAfter: 9, consistent: true });
      assert.deepEqual(
        after.items.map((i) => i.sk),
        [10, 11],
      );
      const before = await numbers().query(pk, { startAfter: 2, descending: true });
      assert.deepEqual(
        before.items.map((i) => i.sk),
        [1, 0],
      );
    });

    it("a page stops after about 1 MB of items with lastSk, and paging reads every item once", async () => {
      const pk = unique("megabyte");
      const data = "m".repeat(390 * 1024);
      for (const sk of ["a", "b", "c", "d"]) await strings().put({ pk, sk, data });
      const first = await strings().query(pk, { consistent: true });
      assert.ok(first.items.length < 4, `a page holds at most about 1 MB, got ${first.items.length} items`);
      assert.ok(first.lastSk !== undefined, "a page cut at 1 MB has lastSk");
      const result = await pages(strings(), pk, {});
      assert.deepEqual(
        result.flatMap((p) => p.sks),
        ["a", "b", "c", "d"],
      );
      for (const item of first.items) assert.equal(item.data, data);
    });
  });
}
