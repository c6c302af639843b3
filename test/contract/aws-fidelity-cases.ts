/**
 * @module What the AWS adapter relies on DynamoDB itself for, checked on each emulator every run: its
 * item size count (the 400 KB limit and the capacity units follow from it), and the stored item returned
 * with a failed condition (`ALL_OLD`: DynamoDB and DynamoDB Local return it, dynalite
 * does not, and the adapter then reads it), so the path production takes is proven on DynamoDB Local and
 * the fallback on dynalite.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { createAwsStorage, ensureTables, physicalTableName } from "../../lib/storage/aws/index.js";
import { toAttrMap } from "../../lib/storage/aws/marshal.js";
import { createDynamoClient } from "../../lib/storage/aws/provision.js";
import { conditionFailedItem } from "../../lib/storage/aws/sdk-errors.js";
import { itemSize } from "../../lib/storage/item-size.js";
import { ConditionFailedError, type Item, MAX_ITEM_BYTES, type TableSpec } from "../../lib/storage/table.js";
import type { DynamoBackend } from "../support/emulators.js";
import { useEmulatorOptions } from "../support/shared-emulators.js";
import { numbersOfEveryShape, rejectsWith } from "./storage-contract-helpers.js";

const STRINGS: TableSpec = { name: "strings", sortKeyType: "string" };

/** Whether the backend returns the stored item with a failed condition: DynamoDB does, dynalite does not. */
const RETURNS_ALL_OLD: Record<DynamoBackend, boolean> = { dynalite: false, "dynamodb-local": true };

export function fidelityCases(backend: DynamoBackend): void {
  describe("aws adapter: DynamoDB's own answers", () => {
    const options = useEmulatorOptions(backend, "f");
    const create = { condition: { exists: false }, returnExistingOnFailure: true } as const;

    /** Asks the backend itself (no adapter in between) whether a failed condition comes with the stored item. */
    async function backendReturnsItem(): Promise<boolean> {
      const client = createDynamoClient(options());
      const TableName = physicalTableName(options(), STRINGS.name);
      const Item = { pk: { S: "raw" }, sk: { S: "1" } };
      let returned = false;
      try {
        await client.send(new PutItemCommand({ TableName, Item }));
        // `attribute_not_exists(pk)`: the put creates, never overwrites; here it must fail (the item is stored).
        await assert.rejects(
          client.send(
            new PutItemCommand({
              TableName,
              Item,
              ConditionExpression: "attribute_not_exists(pk)",
              ReturnValuesOnConditionCheckFailure: "ALL_OLD",
            }),
          ),
          (err: unknown) => {
            assert.equal((err as { name?: unknown }).name, "ConditionalCheckFailedException");
            returned = conditionFailedItem(err) !== undefined;
            return true;
          },
        );
        return returned;
      } finally {
        client.destroy();
      }
    }

    it("itemSize is DynamoDB's count to the byte: exactly 400 KB is stored, one byte more is refused by DynamoDB", async () => {
      await ensureTables(options(), [STRINGS]);
      const client = createDynamoClient(options());
      const TableName = physicalTableName(options(), STRINGS.name);
      const base: Item = { pk: "size", sk: "1", ...numbersOfEveryShape(100), data: "" };
      const fits: Item = { ...base, data: "x".repeat(MAX_ITEM_BYTES - itemSize(base)) };
      const over: Item = { ...fits, data: `${fits.data}x` };
      assert.equal(itemSize(over), MAX_ITEM_BYTES + 1);
      try {
        // Sent as they are, past the adapter's own check: DynamoDB's answer is what is tested.
        await client.send(new PutItemCommand({ TableName, Item: toAttrMap(fits) }));
        await assert.rejects(client.send(new PutItemCommand({ TableName, Item: toAttrMap(over) })), (err: unknown) => {
          assert.equal((err as { name?: unknown }).name, "ValidationException");
          assert.match((err as Error).message, /size/i);
          return true;
        });
      } finally {
        client.destroy();
      }
    });

    it("a failed condition returns the stored item: DynamoDB's own (ALL_OLD), else one consistent GetItem", async () => {
      await ensureTables(options(), [STRINGS]);
      const returned = await backendReturnsItem();
      assert.equal(returned, RETURNS_ALL_OLD[backend], `${backend} returns the item with a failed condition`);
      const storage = createAwsStorage(options());
      try {
        const table = storage.table(STRINGS);
        await table.put({ pk: "cond", sk: "1", v: 1 });
        const before = storage.counter.snapshot();
        const err = await rejectsWith(table.put({ pk: "cond", sk: "1", v: 2 }, create), ErrorCode.CONDITION_FAILED);
        assert.ok(err instanceof ConditionFailedError);
        assert.deepEqual(err.existing, { pk: "cond", sk: "1", v: 1 });
        const after = storage.counter.snapshot();
        assert.equal(after.tableWrites - before.tableWrites, 1, "the failed put is billed");
        assert.equal(after.tableReads - before.tableReads, returned ? 0 : 1, "a read only where nothing came back");
        assert.equal(after.readUnits - before.readUnits, returned ? 0 : 1);
      } finally {
        await storage.close();
      }
    });

    it("racing creates: every loser gets the winner's item, read back only where DynamoDB did not return it", async () => {
      await ensureTables(options(), [STRINGS]);
      // Two storages (two clients), as two processes racing for one key.
      const storages = [createAwsStorage(options()), createAwsStorage(options())] as const;
      const readsSoFar = () => storages[0].counter.snapshot().tableReads + storages[1].counter.snapshot().tableReads;
      try {
        const readsBefore = readsSoFar();
        const results = await Promise.allSettled(
          Array.from({ length: 12 }, (_, i) =>
            storages[i % 2 === 0 ? 0 : 1].table(STRINGS).put({ pk: "race", sk: "1", writer: i }, create),
          ),
        );
        const won = results.flatMap((r, i) => (r.status === "fulfilled" ? [i] : []));
        assert.equal(won.length, 1, "exactly one create wins");
        const winner: Item = { pk: "race", sk: "1", writer: won[0] ?? -1 };
        for (const r of results) {
          if (r.status === "fulfilled") continue;
          assert.ok(r.reason instanceof ConditionFailedError && isNimbusError(r.reason, ErrorCode.CONDITION_FAILED));
          assert.deepEqual(r.reason.existing, winner, "each loser sees the item that won");
        }
        assert.equal(
          readsSoFar() - readsBefore,
          RETURNS_ALL_OLD[backend] ? 0 : 11,
          "fallback reads: none where DynamoDB returns the item, one per loser on dynalite",
        );
      } finally {
        await Promise.all(storages.map((s) => s.close()));
      }
    });
  });
}
