/**
 * @module The AWS adapter's whole contract on one DynamoDB emulator (with s3rver for S3): the storage and
 * queue-log contracts every adapter passes, plus what only the AWS adapter has (provisioning, table
 * naming, an unreachable endpoint) and the checks of DynamoDB's own behaviour (`aws-fidelity-cases.ts`).
 * Registered by `aws.test.ts` (dynalite) and `aws-dynamodb-local.test.ts` (DynamoDB Local).
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { describe, it } from "node:test";
import { ErrorCode } from "../../lib/core/errors.js";
import { createAwsStorage, ensureBucket, ensureTables, physicalTableName } from "../../lib/storage/aws/index.js";
import type { TableSpec } from "../../lib/storage/table.js";
import { awsFixture } from "../support/aws-fixture.js";
import { dynamoDBLocalUnavailable } from "../support/dynamodb-local.js";
import { DYNAMO_BACKEND_LABEL, type DynamoBackend } from "../support/emulators.js";
import { holdEmulators, useEmulatorOptions } from "../support/shared-emulators.js";
import { fidelityCases } from "./aws-fidelity-cases.js";
import { queueLogContract } from "./queue-log-contract.js";
import { queueLogAppendersContract } from "./queue-log-contract-appenders.js";
import { queueLogCycleContract } from "./queue-log-contract-cycle.js";
import { queueLogIdleContract } from "./queue-log-contract-idle.js";
import { queueLogRangesContract } from "./queue-log-contract-ranges.js";
import { queueLogReadsContract } from "./queue-log-contract-reads.js";
import { queueLogSpreadContract } from "./queue-log-contract-spread.js";
import { storageContract } from "./storage-contract.js";
import { rejectsWith } from "./storage-contract-helpers.js";

const STRINGS: TableSpec = { name: "strings", sortKeyType: "string" };

/** Registers every AWS adapter case on `backend`; skipped, with the reason, only where it cannot run here. */
export function awsContract(backend: DynamoBackend): void {
  const label = `aws (${DYNAMO_BACKEND_LABEL[backend]} + s3rver)`;
  const skip = backend === "dynamodb-local" ? dynamoDBLocalUnavailable() : undefined;
  describe(label, { skip: skip ?? false }, () => {
    // One emulator set for the whole file: DynamoDB Local is a JVM, started once, not per `describe`.
    holdEmulators(backend);
    const open = awsFixture(backend);
    storageContract(label, open);
    queueLogContract(label, open);
    queueLogAppendersContract(label, open);
    queueLogCycleContract(label, open);
    queueLogRangesContract(label, open);
    queueLogReadsContract(label, open);
    queueLogSpreadContract(label, open);
    queueLogIdleContract(label, open);
    provisioningCases(backend);
    fidelityCases(backend);
  });
}

function provisioningCases(backend: DynamoBackend): void {
  describe("aws adapter: provisioning and configuration", () => {
    const options = useEmulatorOptions(backend, "p");

    it("names tables by tablePrefix, or by tableNames when given", () => {
      const prefix = options().tablePrefix;
      assert.equal(physicalTableName(options(), "queue-index"), `${prefix}queue-index`);
      assert.equal(
        physicalTableName({ ...options(), tableNames: { "queue-index": "QueueIndex" } }, "queue-index"),
        "QueueIndex",
      );
    });

    it("ensureTables and ensureBucket are idempotent; an existing table with another sk type is refused", async () => {
      await ensureTables(options(), [STRINGS]);
      await ensureTables(options(), [STRINGS]);
      await ensureBucket(options());
      await ensureBucket(options());
      await rejectsWith(ensureTables(options(), [{ name: "strings", sortKeyType: "number" }]), ErrorCode.SYSTEM_ERROR);
      const storage = createAwsStorage(options());
      try {
        await storage.table(STRINGS).put({ pk: "a", sk: "b" });
        await storage.objects.put("x/y", new Uint8Array([1]));
        assert.deepEqual((await storage.objects.list("x/")).objects, [{ key: "x/y", size: 1 }]);
      } finally {
        await storage.close();
      }
    });

    it("a missing table or bucket is SYSTEM_ERROR naming it", async () => {
      const storage = createAwsStorage({ ...options(), tablePrefix: "missing-", bucket: "nimbus-missing" });
      try {
        const err = await rejectsWith(storage.table(STRINGS).get({ pk: "a", sk: "b" }), ErrorCode.SYSTEM_ERROR);
        assert.match(err.message, /missing-strings/);
        const objErr = await rejectsWith(storage.objects.get("a"), ErrorCode.SYSTEM_ERROR);
        assert.match(objErr.message, /nimbus-missing/);
      } finally {
        await storage.close();
      }
    });

    it("an unreachable endpoint is SYSTEM_BUSY (retryable)", async () => {
      const port = await freePort();
      const down = `http://127.0.0.1:${port}`;
      const storage = createAwsStorage({ ...options(), dynamoEndpoint: down, s3Endpoint: down });
      try {
        const err = await rejectsWith(storage.table(STRINGS).get({ pk: "a", sk: "b" }), ErrorCode.SYSTEM_BUSY);
        assert.equal(err.retryable, true);
        await rejectsWith(storage.objects.get("a"), ErrorCode.SYSTEM_BUSY);
      } finally {
        await storage.close();
      }
    });
  });
}

/** A loopback port nothing listens on. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()));
    });
  });
}
