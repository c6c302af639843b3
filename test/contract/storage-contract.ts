/**
 * @module The one contract suite of the storage ports. Every adapter runs it (`local.test.ts`, the AWS
 * adapter's test) and must pass it unchanged: same results, same errors, same order, same counts.
 * It only uses the port interfaces; each `describe` opens its own fixture and uses unique keys.
 *
 * @example
 * storageContract("local (SQLite + files)", openLocalFixture);
 */
import { describe } from "node:test";
import type { OpenFixture } from "../support/storage-fixture.js";
import { countingCases } from "./storage-contract-counting.js";
import { itemCases } from "./storage-contract-items.js";
import { objectCases } from "./storage-contract-objects.js";
import { queryCases } from "./storage-contract-query.js";
import { writeCases } from "./storage-contract-writes.js";

export type { OpenFixture } from "../support/storage-fixture.js";
export { CONTRACT_TABLES } from "./storage-contract-helpers.js";

/** Registers the whole suite under `label`; `open` makes a fresh fixture for each group of cases. */
export function storageContract(label: string, open: OpenFixture): void {
  describe(`storage contract: ${label}`, () => {
    itemCases(open);
    writeCases(open);
    queryCases(open);
    objectCases(open);
    countingCases(open);
  });
}
