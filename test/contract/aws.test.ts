/**
 * @module The storage contract on the AWS adapter, against dynalite and s3rver started in this process
 * (see `test/support/emulators.ts`), plus what only the AWS adapter has: provisioning, table naming, and
 * the translation of SDK errors. Run with `--openssl-legacy-provider` (`npm test` sets it).
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import {
  type AwsStorageOptions,
  createAwsStorage,
  ensureBucket,
  ensureTables,
  physicalTableName,
} from "../../lib/storage/aws/index.js";
import { translateError } from "../../lib/storage/aws/sdk-errors.js";
import { ConditionFailedError, type TableSpec } from "../../lib/storage/table.js";
import { openAwsFixture } from "../support/aws-fixture.js";
import { EMULATOR_CREDENTIALS, type Emulators, startEmulators } from "../support/emulators.js";
import { queueLogContract } from "./queue-log-contract.js";
import { queueLogAppendersContract } from "./queue-log-contract-appenders.js";
import { storageContract } from "./storage-contract.js";
import { rejectsWith } from "./storage-contract-helpers.js";

storageContract("aws (dynalite + s3rver)", openAwsFixture);
queueLogContract("aws (dynalite + s3rver)", openAwsFixture);
queueLogAppendersContract("aws (dynalite + s3rver)", openAwsFixture);

const STRINGS: TableSpec = { name: "strings", sortKeyType: "string" };

describe("aws adapter: provisioning and configuration", () => {
  let emulators: Emulators;
  let options: AwsStorageOptions;
  before(async () => {
    emulators = await startEmulators();
    options = {
      region: "us-east-1",
      bucket: "nimbus-provision",
      tablePrefix: "p-",
      dynamoEndpoint: emulators.dynamoEndpoint,
      s3Endpoint: emulators.s3Endpoint,
      credentials: EMULATOR_CREDENTIALS,
      maxAttempts: 1,
    };
  });
  after(async () => emulators.stop());

  it("names tables by tablePrefix, or by tableNames when given", () => {
    assert.equal(physicalTableName(options, "queue-index"), "p-queue-index");
    assert.equal(
      physicalTableName({ ...options, tableNames: { "queue-index": "QueueIndex" } }, "queue-index"),
      "QueueIndex",
    );
  });

  it("ensureTables and ensureBucket are idempotent; an existing table with another sk type is refused", async () => {
    await ensureTables(options, [STRINGS]);
    await ensureTables(options, [STRINGS]);
    await ensureBucket(options);
    await ensureBucket(options);
    await rejectsWith(ensureTables(options, [{ name: "strings", sortKeyType: "number" }]), ErrorCode.SYSTEM_ERROR);
    const storage = createAwsStorage(options);
    try {
      await storage.table(STRINGS).put({ pk: "a", sk: "b" });
      await storage.objects.put("x/y", new Uint8Array([1]));
      assert.deepEqual((await storage.objects.list("x/")).objects, [{ key: "x/y", size: 1 }]);
    } finally {
      await storage.close();
    }
  });

  it("a missing table or bucket is SYSTEM_ERROR naming it", async () => {
    const storage = createAwsStorage({ ...options, tablePrefix: "missing-", bucket: "nimbus-missing" });
    try {
      const err = await rejectsWith(storage.table(STRINGS).get({ pk: "a", sk: "b" }), ErrorCode.SYSTEM_ERROR);
      assert.match(err.message, /missing-strings/);
      const objErr = await rejectsWith(storage.objects.get("a"), ErrorCode.SYSTEM_ERROR);
      assert.match(objErr.message, /nimbus-missing/);
    } finally {
      await storage.close();
    }
  });

  it("a failed condition reads the stored item with one consistent GetItem when DynamoDB does not return it", async () => {
    const storage = createAwsStorage(options);
    try {
      const table = storage.table(STRINGS);
      await table.put({ pk: "cond", sk: "1", v: 1 });
      const before = storage.counter.snapshot();
      const err = await rejectsWith(
        table.put({ pk: "cond", sk: "1", v: 2 }, { condition: { exists: false }, returnExistingOnFailure: true }),
        ErrorCode.CONDITION_FAILED,
      );
      assert.ok(err instanceof ConditionFailedError);
      assert.deepEqual(err.existing, { pk: "cond", sk: "1", v: 1 });
      const after = storage.counter.snapshot();
      assert.equal(after.tableWrites - before.tableWrites, 1, "the failed put is billed");
      assert.equal(after.tableReads - before.tableReads, 1, "plus one consistent read");
      assert.equal(after.readUnits - before.readUnits, 1);
    } finally {
      await storage.close();
    }
  });

  it("an unreachable endpoint is SYSTEM_BUSY (retryable)", async () => {
    const port = await freePort();
    const down = `http://127.0.0.1:${port}`;
    const storage = createAwsStorage({ ...options, dynamoEndpoint: down, s3Endpoint: down });
    try {
      const err = await rejectsWith(storage.table(STRINGS).get({ pk: "a", sk: "b" }), ErrorCode.SYSTEM_BUSY);
      assert.equal(err.retryable, true);
      await rejectsWith(storage.objects.get("a"), ErrorCode.SYSTEM_BUSY);
    } finally {
      await storage.close();
    }
  });
});

describe("aws adapter: SDK error translation", () => {
  const sdkError = (name: string, status: number, message = "m") =>
    Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });
  const cases: [unknown, ErrorCode][] = [
    [sdkError("ConditionalCheckFailedException", 400), ErrorCode.CONDITION_FAILED],
    [sdkError("ProvisionedThroughputExceededException", 400), ErrorCode.SYSTEM_BUSY],
    [sdkError("ThrottlingException", 400), ErrorCode.SYSTEM_BUSY],
    [sdkError("RequestLimitExceeded", 400), ErrorCode.SYSTEM_BUSY],
    [sdkError("SlowDown", 503), ErrorCode.SYSTEM_BUSY],
    [sdkError("InternalFailure", 503), ErrorCode.SYSTEM_BUSY],
    [Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), ErrorCode.SYSTEM_BUSY],
    [sdkError("ValidationException", 400, "Invalid KeyConditionExpression"), ErrorCode.PARAMETER_ILLEGAL],
    [sdkError("ValidationException", 400, "Item size has exceeded the maximum allowed size"), ErrorCode.ITEM_TOO_LARGE],
    [sdkError("ResourceNotFoundException", 400), ErrorCode.SYSTEM_ERROR],
    [sdkError("NoSuchKey", 404), ErrorCode.OBJECT_NOT_FOUND],
    [sdkError("InvalidRange", 416), ErrorCode.INVALID_RANGE],
    [sdkError("AccessDenied", 403), ErrorCode.SYSTEM_ERROR],
    ["not even an Error", ErrorCode.SYSTEM_ERROR],
  ];
  for (const [err, code] of cases) {
    it(`${(err as Error).name ?? String(err)} → ${code}`, () => {
      const out = translateError(err, 'Op on table "t"');
      assert.ok(isNimbusError(out, code), `got ${out.code}: ${out.message}`);
      assert.equal(out.cause, err);
      assert.match(out.message, /Op on table "t"/);
    });
  }
});

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
