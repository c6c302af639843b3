/** @module Contract cases: get/put/delete, attribute round-trip, the 400 KB limit, DynamoDB's input rules. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode } from "../../lib/core/errors.js";
import { itemSize } from "../../lib/storage/item-size.js";
import {
  type AttrValue,
  type Condition,
  type Item,
  MAX_ITEM_BYTES,
  type SortKey,
  type SortKeyRange,
} from "../../lib/storage/table.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import {
  allBytes,
  assertItem,
  NUMBER_TABLE,
  numbersOfEveryShape,
  rejectsWith,
  STRING_TABLE,
  unique,
  useFixture,
} from "./storage-contract-helpers.js";

export function itemCases(open: OpenFixture): void {
  describe("items: get, put, delete", () => {
    const fx = useFixture(open);
    const numbers = () => fx().storage.table(NUMBER_TABLE);
    const strings = () => fx().storage.table(STRING_TABLE);

    it("get of a missing item is undefined", async () => {
      assert.equal(await numbers().get({ pk: unique("missing"), sk: 1 }), undefined);
      assert.equal(await strings().get({ pk: unique("missing"), sk: "a" }, { consistent: true }), undefined);
    });

    it("put then get returns the item, with both read modes", async () => {
      const item: Item = { pk: unique("put"), sk: 7, name: "seven", n: 7 };
      await numbers().put(item);
      assertItem(await numbers().get({ pk: item.pk, sk: 7 }, { consistent: true }), item);
      assertItem(await numbers().get({ pk: item.pk, sk: 7 }), item);
      assert.equal(await numbers().get({ pk: item.pk, sk: 8 }, { consistent: true }), undefined);
    });

    it("put replaces the whole item", async () => {
      const pk = unique("replace");
      await strings().put({ pk, sk: "x", a: 1, b: "two" });
      await strings().put({ pk, sk: "x", c: true });
      assertItem(await strings().get({ pk, sk: "x" }, { consistent: true }), { pk, sk: "x", c: true });
    });

    it("the same spec gives the same table, also from a second storage on the same data", async () => {
      const pk = unique("reopen");
      await numbers().put({ pk, sk: 1, v: "first" });
      assertItem(await fx().storage.table(NUMBER_TABLE).get({ pk, sk: 1 }, { consistent: true }), {
        pk,
        sk: 1,
        v: "first",
      });
      const other = await fx().reopen();
      assertItem(await other.table(NUMBER_TABLE).get({ pk, sk: 1 }, { consistent: true }), { pk, sk: 1, v: "first" });
    });

    it("delete removes the item; deleting a missing item is fine", async () => {
      const pk = unique("delete");
      await numbers().put({ pk, sk: 1 });
      await numbers().put({ pk, sk: 2 });
      await numbers().delete({ pk, sk: 1 });
      assert.equal(await numbers().get({ pk, sk: 1 }, { consistent: true }), undefined);
      assertItem(await numbers().get({ pk, sk: 2 }, { consistent: true }), { pk, sk: 2 });
      await numbers().delete({ pk, sk: 1 });
      await numbers().delete({ pk: unique("never"), sk: 3 });
    });

    it("round-trips every attribute type exactly", async () => {
      const nested: AttrValue = {
        list: [1, "two", null, true, false, [[]], {}, new Uint8Array([0, 255])],
        map: { deeper: { deepest: { value: -0.5, bytes: allBytes() } }, $b: "looks like a tag", $: "dollar" },
      };
      const item: Item = {
        pk: unique("roundtrip"),
        sk: "k",
        binary: allBytes(),
        empty: new Uint8Array(0),
        emptyString: "",
        unicode: "héllo wörld ✓ 日本語 😀 \u0000 nul",
        big: Number.MAX_SAFE_INTEGER,
        negative: -(2 ** 53 - 1),
        fraction: Math.PI,
        tiny: 1e-100,
        huge: 1.5e100,
        zero: 0,
        yes: true,
        no: false,
        nothing: null,
        emptyList: [],
        emptyMap: {},
        nested,
        "name with spaces & ünïcode": 1,
      };
      await strings().put(item);
      const back = await strings().get({ pk: item.pk, sk: "k" }, { consistent: true });
      assertItem(back, item);
      assert.ok(back?.binary instanceof Uint8Array, "binary comes back as Uint8Array");
      assert.equal((back.binary as Uint8Array).byteLength, 256);
      assert.ok(back.empty instanceof Uint8Array && back.empty.byteLength === 0, "empty binary stays binary");
    });

    it("stores an item of exactly 400 KB and reads it back intact", async () => {
      const pk = unique("limit");
      const base: Item = { pk, sk: "fits", data: "" };
      const item: Item = { ...base, data: "x".repeat(MAX_ITEM_BYTES - itemSize(base)) };
      assert.equal(itemSize(item), MAX_ITEM_BYTES);
      await strings().put(item);
      assertItem(await strings().get({ pk, sk: "fits" }, { consistent: true }), item);
      assertItem((await strings().query(pk, { consistent: true })).items, [item]);
    });

    it("stores an item of exactly 400 KB holding numbers of every shape: its size is DynamoDB's", async () => {
      const pk = unique("limit");
      const base: Item = { pk, sk: "fits", ...numbersOfEveryShape(100), data: "" };
      const item: Item = { ...base, data: "x".repeat(MAX_ITEM_BYTES - itemSize(base)) };
      assert.equal(itemSize(item), MAX_ITEM_BYTES);
      await strings().put(item);
      assertItem(await strings().get({ pk, sk: "fits" }, { consistent: true }), item);
      const over: Item = { ...item, sk: "over", data: `${item.data}x` };
      assert.equal(itemSize(over), MAX_ITEM_BYTES + 1);
      await rejectsWith(strings().put(over), ErrorCode.ITEM_TOO_LARGE);
    });

    it("rejects an item one byte over 400 KB with ITEM_TOO_LARGE and stores nothing", async () => {
      const pk = unique("limit");
      const base: Item = { pk, sk: "over", data: "" };
      const data = "x".repeat(MAX_ITEM_BYTES - itemSize(base) + 1);
      const item: Item = { ...base, data };
      assert.equal(itemSize(item), MAX_ITEM_BYTES + 1);
      await rejectsWith(strings().put(item), ErrorCode.ITEM_TOO_LARGE);
      assert.equal(await strings().get({ pk, sk: "over" }, { consistent: true }), undefined);
    });
  });

  describe("items: input rules (PARAMETER_ILLEGAL, nothing written)", () => {
    const fx = useFixture(open);
    const numbers = () => fx().storage.table(NUMBER_TABLE);
    const strings = () => fx().storage.table(STRING_TABLE);
    const illegal = (p: Promise<unknown>) => rejectsWith(p, ErrorCode.PARAMETER_ILLEGAL);

    it("rejects an empty or too long partition key", async () => {
      await illegal(numbers().put({ pk: "", sk: 1 }));
      await illegal(numbers().get({ pk: "", sk: 1 }));
      await illegal(numbers().delete({ pk: "", sk: 1 }));
      await illegal(numbers().query(""));
      await illegal(numbers().put({ pk: "p".repeat(2049), sk: 1 }));
    });

    it("rejects a BETWEEN range whose low end is above its high end, or of the wrong type", async () => {
      await illegal(numbers().query(unique("between"), { sk: { between: [5, 4] } }));
      await illegal(strings().query(unique("between"), { sk: { between: ["b", "a"] } }));
      await illegal(numbers().query(unique("between"), { sk: { between: ["a", "b"] } }));
    });

    it("rejects an empty, too long or wrongly typed sort key", async () => {
      const pk = unique("badsk");
      await illegal(strings().put({ pk, sk: "" }));
      await illegal(strings().get({ pk, sk: "" }));
      await illegal(strings().put({ pk, sk: "s".repeat(1025) }));
      await illegal(strings().put({ pk, sk: 5 }));
      await illegal(strings().get({ pk, sk: 5 }));
      await illegal(numbers().put({ pk, sk: "5" }));
      await illegal(numbers().delete({ pk, sk: "5" }));
      await strings().put({ pk, sk: "s".repeat(1024) });
      assert.deepEqual(
        (await strings().query(pk, { consistent: true })).items.map((i) => i.sk),
        ["s".repeat(1024)],
        "only the valid item was written",
      );
      assert.deepEqual((await numbers().query(pk, { consistent: true })).items, []);
    });

    it("rejects NaN and infinite numbers, in keys and in attributes at any depth", async () => {
      const pk = unique("nan");
      const bad: SortKey[] = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
      for (const sk of bad) await illegal(numbers().put({ pk, sk }));
      await illegal(numbers().put({ pk, sk: 1, n: Number.NaN }));
      await illegal(numbers().put({ pk, sk: 1, list: [1, Number.POSITIVE_INFINITY] }));
      await illegal(numbers().put({ pk, sk: 1, map: { inner: { n: Number.NEGATIVE_INFINITY } } }));
      await illegal(numbers().put({ pk, sk: 1, n: 1e126 }));
      assert.deepEqual((await numbers().query(pk, { consistent: true })).items, []);
    });

    it("rejects empty attribute names inside maps, at any depth (as DynamoDB does)", async () => {
      const pk = unique("emptyname");
      await illegal(strings().put({ pk, sk: "a", m: { "": 1 } }));
      await illegal(strings().put({ pk, sk: "b", m: { ok: { "": "deep" } } }));
      await illegal(strings().put({ pk, sk: "c", l: [1, { fine: 2, "": true }] }));
      assert.deepEqual((await strings().query(pk, { consistent: true })).items, [], "nothing was written");
      await strings().put({ pk, sk: "d", m: { " ": 1 } });
    });

    it("rejects any condition but { exists: false }", async () => {
      const pk = unique("condition");
      for (const condition of [{ exists: true }, { exists: false, equals: { v: 1 } }, {}]) {
        await illegal(numbers().put({ pk, sk: 1 }, { condition: condition as unknown as Condition }));
      }
      assert.deepEqual((await numbers().query(pk, { consistent: true })).items, []);
    });

    it("rejects a query limit below 1 and malformed sort-key ranges", async () => {
      const pk = unique("query");
      await illegal(numbers().query(pk, { limit: 0 }));
      await illegal(numbers().query(pk, { limit: -1 }));
      await illegal(numbers().query(pk, { limit: 1.5 }));
      await illegal(numbers().query(pk, { sk: { gt: "1" } }));
      await illegal(strings().query(pk, { sk: { lte: 1 } }));
      await illegal(strings().query(pk, { sk: { gt: "" } }));
      for (const sk of [{ eq: 1 }, { lte: 1, gt: 0 }, {}]) {
        await illegal(numbers().query(pk, { sk: sk as unknown as SortKeyRange }));
      }
      await illegal(numbers().query(pk, { startAfter: "1" }));
      await illegal(numbers().query(pk, { sk: { gt: 10 }, startAfter: 5 }));
      await illegal(numbers().query(pk, { sk: { lte: 3 }, startAfter: 5 }));
    });
  });
}
