/** @module Contract cases: write conditions (pass, fail, nothing written), `existing`, update, atomic adds. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { type Condition, ConditionFailedError, type Item, type Table } from "../../lib/storage/table.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import { assertItem, NUMBER_TABLE, rejectsWith, unique, useFixture } from "./storage-contract-helpers.js";

type Write = "put" | "update" | "delete";

/** Runs one conditional write of each kind on `{pk, sk: 1}`. */
function write(table: Table, kind: Write, pk: string, condition: Condition, returnExisting = false): Promise<unknown> {
  const options = { condition, returnExistingOnFailure: returnExisting };
  if (kind === "put") return table.put({ pk, sk: 1, v: 1, written: "put" }, options);
  if (kind === "update") return table.update({ pk, sk: 1 }, { set: { written: "update" } }, options);
  return table.delete({ pk, sk: 1 }, options);
}

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
    /** A fresh partition holding `stored` (or nothing). */
    const seed = async (present: boolean): Promise<string> => {
      const pk = unique("cond");
      if (present) await table().put({ ...stored, pk });
      return pk;
    };

    // [condition, holds when the item is absent, holds when `stored` is present]
    const cases: [string, Condition, boolean, boolean][] = [
      ["exists: false", { exists: false }, true, false],
      ["exists: true", { exists: true }, false, true],
      ["equals (one attribute)", { equals: { v: 5 } }, false, true],
      ["equals (several attributes)", { equals: { v: 5, s: "text", flag: true } }, false, true],
      ["equals (binary)", { equals: { bytes: new Uint8Array([1, 2, 3]) } }, false, true],
      ["equals (other value)", { equals: { v: 6 } }, false, false],
      ["equals (one of several differs)", { equals: { v: 5, s: "other" } }, false, false],
      ["equals (other type)", { equals: { v: "5" } }, false, false],
      ["equals (missing attribute)", { equals: { missing: 1 } }, false, false],
      ["absentOrLessThan (less)", { absentOrLessThan: ["v", 6] }, true, true],
      ["absentOrLessThan (equal)", { absentOrLessThan: ["v", 5] }, true, false],
      ["absentOrLessThan (greater)", { absentOrLessThan: ["v", 4] }, true, false],
      ["absentOrLessThan (attribute missing)", { absentOrLessThan: ["missing", 0] }, true, true],
      ["absentOrLessThan (not a number)", { absentOrLessThan: ["s", 100] }, true, false],
    ];

    for (const [name, condition, whenAbsent, whenPresent] of cases) {
      for (const kind of ["put", "update", "delete"] as const) {
        it(`${kind} with ${name}`, async () => {
          for (const present of [false, true]) {
            const pk = await seed(present);
            const before = await table().get({ pk, sk: 1 }, { consistent: true });
            const holds = present ? whenPresent : whenAbsent;
            const p = write(table(), kind, pk, condition);
            if (holds) {
              await p;
              const after = await table().get({ pk, sk: 1 }, { consistent: true });
              if (kind === "delete") assert.equal(after, undefined);
              else assert.equal(after?.written, kind);
            } else {
              const err = await failsWith(p);
              assert.equal(err.existing, undefined, "no existing item unless asked for");
              assertItem(
                await table().get({ pk, sk: 1 }, { consistent: true }),
                before,
                "a failed write changes nothing",
              );
            }
          }
        });
      }
    }

    it("a failed write returns the stored item when asked (put, update, delete)", async () => {
      for (const kind of ["put", "update", "delete"] as const) {
        const pk = await seed(true);
        const err = await failsWith(write(table(), kind, pk, { exists: false }, true));
        assertItem(err.existing, { ...stored, pk });
        assertItem(await table().get({ pk, sk: 1 }, { consistent: true }), { ...stored, pk });
      }
    });

    it("a failed write on a missing item has existing undefined", async () => {
      for (const kind of ["put", "update", "delete"] as const) {
        const pk = await seed(false);
        const err = await failsWith(write(table(), kind, pk, { exists: true }, true));
        assert.equal(err.existing, undefined);
        assert.equal(await table().get({ pk, sk: 1 }, { consistent: true }), undefined);
      }
    });

    it("concurrent creates with exists: false: exactly one wins, from two storages", async () => {
      const pk = unique("race");
      const other = (await fx().reopen()).table(NUMBER_TABLE);
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? other : table()).put({ pk, sk: 1, writer: i }, { condition: { exists: false } }),
        ),
      );
      const won = results.filter((r) => r.status === "fulfilled");
      assert.equal(won.length, 1);
      for (const r of results) {
        if (r.status === "rejected") assert.ok(isNimbusError(r.reason, ErrorCode.CONDITION_FAILED));
      }
    });
  });

  describe("writes: update", () => {
    const fx = useFixture(open);
    const table = () => fx().storage.table(NUMBER_TABLE);

    it("creates the item when absent (add counts from 0) and returns it", async () => {
      const pk = unique("create");
      const out = await table().update({ pk, sk: 1 }, { set: { name: "new" }, add: { n: 5 }, remove: ["gone"] });
      assertItem(out, { pk, sk: 1, name: "new", n: 5 });
      assertItem(await table().get({ pk, sk: 1 }, { consistent: true }), out);
    });

    it("creates a key-only item when there is nothing to change", async () => {
      const pk = unique("empty");
      assertItem(await table().update({ pk, sk: 2 }, {}), { pk, sk: 2 });
      assertItem(await table().get({ pk, sk: 2 }, { consistent: true }), { pk, sk: 2 });
    });

    it("sets, adds and removes in one call and keeps other attributes", async () => {
      const pk = unique("mix");
      await table().put({ pk, sk: 1, keep: "me", n: 10, old: "x", over: 1 });
      const out = await table().update(
        { pk, sk: 1 },
        { set: { over: { now: ["a", "map"] }, fresh: null }, add: { n: -3, m: 2 }, remove: ["old", "absent"] },
      );
      const expected = { pk, sk: 1, keep: "me", n: 7, m: 2, over: { now: ["a", "map"] }, fresh: null };
      assertItem(out, expected);
      assertItem(await table().get({ pk, sk: 1 }, { consistent: true }), expected);
    });

    it("adds decimals exactly, as DynamoDB's decimal numbers do", async () => {
      const pk = unique("decimal");
      await table().update({ pk, sk: 1 }, { add: { n: 0.1 } });
      const out = await table().update({ pk, sk: 1 }, { add: { n: 0.2 } });
      assert.equal(out.n, 0.3);
    });

    it("add on a non-number attribute is PARAMETER_ILLEGAL and writes nothing", async () => {
      const pk = unique("addstr");
      await table().put({ pk, sk: 1, s: "text", n: 1 });
      await rejectsWith(table().update({ pk, sk: 1 }, { add: { s: 1, n: 1 } }), ErrorCode.PARAMETER_ILLEGAL);
      await rejectsWith(table().update({ pk, sk: 1 }, { add: { s: 1 }, set: { t: 2 } }), ErrorCode.PARAMETER_ILLEGAL);
      assertItem(await table().get({ pk, sk: 1 }, { consistent: true }), { pk, sk: 1, s: "text", n: 1 });
    });

    it("a conditional update that fails creates nothing", async () => {
      const pk = unique("nocreate");
      await failsWith(table().update({ pk, sk: 1 }, { add: { n: 1 } }, { condition: { exists: true } }));
      assert.equal(await table().get({ pk, sk: 1 }, { consistent: true }), undefined);
    });

    it("a version check lets exactly one of two writers with the same version win", async () => {
      const pk = unique("version");
      await table().put({ pk, sk: 1, version: 1, owner: "none" });
      const attempt = (owner: string) =>
        table().update(
          { pk, sk: 1 },
          { set: { owner }, add: { version: 1 } },
          { condition: { equals: { version: 1 } } },
        );
      const results = await Promise.allSettled([attempt("a"), attempt("b")]);
      assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
      const item = await table().get({ pk, sk: 1 }, { consistent: true });
      assert.equal(item?.version, 2);
      assert.ok(item?.owner === "a" || item?.owner === "b");
    });

    it("20 concurrent adds from two storages give exactly 20, each seeing its own result", async () => {
      const pk = unique("adds");
      const other = (await fx().reopen()).table(NUMBER_TABLE);
      const outs = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? other : table()).update({ pk, sk: 1 }, { add: { n: 1 } })),
      );
      assert.deepEqual(
        outs.map((o) => o.n).sort((a, b) => Number(a) - Number(b)),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      assert.equal((await table().get({ pk, sk: 1 }, { consistent: true }))?.n, 20);
    });
  });
}
