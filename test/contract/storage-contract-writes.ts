/**
 * @module Contract cases: the put conditions `{ exists: false }` (pass, fail, nothing written), `existing`, races,
 * and `{ absentOrUntilBefore }` (a marker's claim);
 * the atomic `add` (new values, `{ exists: true }`, concurrent adds from two storages never lost).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { ConditionFailedError, type Item } from "../../lib/storage/table.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import { assertItem, NUMBER_TABLE, rejectsWith, unique, useFixture } from "./storage-contract-helpers.js";

async function failsWith(p: Promise<unknown>): Promise<ConditionFailedError> {
  const err = await rejectsWith(p, ErrorCode.CONDITION_FAILED);
  assert.ok(err instanceof ConditionFailedError, "a failed condition throws ConditionFailedError");
  return err;
}

export function writeCases(open: OpenFixture): void {
  describe("writes: conditions", () => {
    const fx = useFixture(open);
    const table = () => fx().storage.table(NUMBER_TABLE);
    const stored: Item = { pk: "", sk: 1, v: 5, s: "text", flag: true, bytes: new Uint8Array([1, 2, 3]) };
    const create = { condition: { exists: false } } as const;

    it("put with exists: false creates an absent item", async () => {
      const pk = unique("cond");
      await table().put({ pk, sk: 1, written: "put" }, create);
      assertItem(await table().get({ pk, sk: 1 }, { consistent: true }), { pk, sk: 1, written: "put" });
    });

    it("put with exists: false on a stored item fails, changes nothing, and returns no item unless asked", async () => {
      const pk = unique("cond");
      await table().put({ ...stored, pk });
      const err = await failsWith(table().put({ pk, sk: 1, written: "put" }, create));
      assert.equal(err.existing, undefined, "no existing item unless asked for");
      assertItem(
        await table().get({ pk, sk: 1 }, { consistent: true }),
        { ...stored, pk },
        "a failed put changes nothing",
      );
    });

    it("a failed put returns the stored item when asked", async () => {
      const pk = unique("cond");
      await table().put({ ...stored, pk });
      const err = await failsWith(
        table().put({ pk, sk: 1, written: "put" }, { ...create, returnExistingOnFailure: true }),
      );
      assertItem(err.existing, { ...stored, pk });
      assertItem(await table().get({ pk, sk: 1 }, { consistent: true }), { ...stored, pk });
    });

    it("concurrent creates with exists: false: exactly one wins, from two storages", async () => {
      const pk = unique("race");
      const other = (await fx().reopen()).table(NUMBER_TABLE);
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? other : table()).put({ pk, sk: 1, writer: i }, create)),
      );
      const won = results.filter((r) => r.status === "fulfilled");
      assert.equal(won.length, 1);
      for (const r of results) {
        if (r.status === "rejected") assert.ok(isNimbusError(r.reason, ErrorCode.CONDITION_FAILED));
      }
    });

    it("put with absentOrUntilBefore: creates, never takes over a live item, takes over one run out; races: one wins", async () => {
      const pk = unique("until");
      const claim = (until: number, at: number, t = table()) =>
        t.put({ pk, sk: 1, until }, { condition: { absentOrUntilBefore: at } });
      await claim(1000, 500);
      await failsWith(claim(2000, 900));
      await failsWith(claim(2000, 1000));
      assertItem(await table().get({ pk, sk: 1 }, { consistent: true }), { pk, sk: 1, until: 1000 }, "nothing changed");
      const other = (await fx().reopen()).table(NUMBER_TABLE);
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => claim(5000 + i, 1001, i % 2 ? other : table())),
      );
      assert.equal(results.filter((r) => r.status === "fulfilled").length, 1, "one claim after the end wins");
    });
  });

  describe("writes: atomic add", () => {
    const fx = useFixture(open);
    const table = () => fx().storage.table(NUMBER_TABLE);

    it("add creates a missing item at 0, answers the new value, and keeps the other attributes", async () => {
      const pk = unique("add");
      assert.equal(await table().add({ pk, sk: 0 }, "next", 3), 3);
      await table().put({ pk, sk: 1, next: 10, keep: "yes" });
      assert.equal(await table().add({ pk, sk: 1 }, "next", 5), 15);
      assert.equal(await table().add({ pk, sk: 1 }, "other", 2), 2, "a missing attribute counts as 0");
      assertItem(await table().get({ pk, sk: 1 }, { consistent: true }), {
        pk,
        sk: 1,
        next: 15,
        other: 2,
        keep: "yes",
      });
    });

    it("add with exists: true on a missing item fails and creates nothing", async () => {
      const pk = unique("add");
      await failsWith(table().add({ pk, sk: 0 }, "next", 1, { condition: { exists: true } }));
      assert.equal(await table().get({ pk, sk: 0 }, { consistent: true }), undefined);
      await table().put({ pk, sk: 0, next: 7 });
      assert.equal(await table().add({ pk, sk: 0 }, "next", 1, { condition: { exists: true } }), 8);
    });

    it("concurrent adds from two storages: every caller owns a disjoint range, none is lost", async () => {
      const pk = unique("add-race");
      const other = (await fx().reopen()).table(NUMBER_TABLE);
      const deltas = Array.from({ length: 24 }, (_, i) => 1 + (i % 3));
      const ends = await Promise.all(deltas.map((d, i) => (i % 2 ? other : table()).add({ pk, sk: 0 }, "next", d)));
      const ranges = ends.map((end, i) => [end - (deltas[i] as number), end] as const).sort((a, b) => a[0] - b[0]);
      let expected = 0;
      for (const [start, end] of ranges) {
        assert.equal(start, expected, "ranges tile [0, total) with no overlap");
        expected = end;
      }
      assert.equal(
        expected,
        deltas.reduce((a, b) => a + b, 0),
      );
    });

    it("refuses a bad add and writes nothing", async () => {
      const pk = unique("add");
      await rejectsWith(table().add({ pk, sk: 0 }, "sk", 1), ErrorCode.PARAMETER_ILLEGAL);
      await rejectsWith(table().add({ pk, sk: 0 }, "n", 0.5), ErrorCode.PARAMETER_ILLEGAL);
      await table().put({ pk, sk: 0, s: "text" });
      await rejectsWith(table().add({ pk, sk: 0 }, "s", 1), ErrorCode.PARAMETER_ILLEGAL);
      assertItem(await table().get({ pk, sk: 0 }, { consistent: true }), { pk, sk: 0, s: "text" });
    });
  });
}
