/** @module Contract cases: the put condition `{ exists: false }` (pass, fail, nothing written), `existing`, races. */
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
  });
}
