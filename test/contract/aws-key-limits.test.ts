/**
 * @module DynamoDB's per-partition-key limits as the AWS-adapter tests and the contention bench see them
 * (test/support/dynamo-key-limits.ts, in front of dynalite and DynamoDB Local): a key that used up its write units
 * is answered ProvisionedThroughputExceededException, which the adapter turns into a retryable SYSTEM_BUSY with
 * nothing written, while another key of the same table is served; with the SDK's retries on, the same put waits
 * out the throttle instead of failing (its back-off path runs). Limits are set low (a few units a second) so the
 * path taken does not depend on how fast the machine is.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ROUTES_TABLE } from "../../lib/broker/store/tables.js";
import { ErrorCode, NimbusError } from "../../lib/core/errors.js";
import {
  createAwsStorage,
  DEFAULT_DYNAMO_ATTEMPTS,
  ensureTables,
  type RetryBackoff,
} from "../../lib/storage/aws/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import { type KeyLimitedDynamo, startKeyLimitedDynamo } from "../support/dynamo-key-limits.js";
import { EMULATOR_CREDENTIALS, type Emulators, startEmulators } from "../support/emulators.js";

describe("DynamoDB's per-key limits in front of the emulator", { timeout: 120_000 }, () => {
  let emulators: Emulators;
  let limited: KeyLimitedDynamo;
  const storages: Storage[] = [];
  const storage = (endpoint: string, maxAttempts?: number, retryBackoff?: Partial<RetryBackoff>) => {
    const s = createAwsStorage({
      ...(retryBackoff === undefined ? {} : { retryBackoff }),
      ...(maxAttempts === undefined ? {} : { maxAttempts }),
      region: "us-east-1",
      bucket: "limits",
      tablePrefix: "limits-",
      dynamoEndpoint: endpoint,
      s3Endpoint: emulators.s3Endpoint,
      credentials: EMULATOR_CREDENTIALS,
    });
    storages.push(s);
    return s;
  };

  before(async () => {
    emulators = await startEmulators("dynalite", { keyLimits: false });
    // 1 write unit a second per key: a 100 KB item (100 units) leaves its key overdrawn for 99 s.
    limited = await startKeyLimitedDynamo(emulators.dynamoEndpoint, {
      writeUnitsPerSecond: 1,
      readUnitsPerSecond: 1000,
    });
    await ensureTables(
      {
        region: "us-east-1",
        bucket: "limits",
        tablePrefix: "limits-",
        dynamoEndpoint: emulators.dynamoEndpoint,
        credentials: EMULATOR_CREDENTIALS,
      },
      [ROUTES_TABLE],
    );
  });
  after(async () => {
    for (const s of storages) await s.close();
    await limited.stop();
    await emulators.stop();
  });

  it("a key past its write units is refused as SYSTEM_BUSY, nothing written; another key is served", async () => {
    const table = storage(limited.endpoint, 1).table(ROUTES_TABLE);
    await table.put({ pk: "hot", sk: "a", blob: "x".repeat(100 * 1024) });
    await assert.rejects(
      table.put({ pk: "hot", sk: "b", v: 1 }),
      (err: unknown) => err instanceof NimbusError && err.code === ErrorCode.SYSTEM_BUSY && err.retryable,
    );
    assert.equal(limited.throttled(), 1);
    const unlimited = storage(emulators.dynamoEndpoint, 1).table(ROUTES_TABLE);
    assert.equal(await unlimited.get({ pk: "hot", sk: "b" }, { consistent: true }), undefined, "nothing written");
    await table.put({ pk: "cold", sk: "a", v: 1 });
    assert.equal(limited.throttled(), 1, "another key has its own units");
    assert.ok(limited.charged().writeUnits >= 101);
  });

  it("reads are limited per key too, and the SDK's retries run on a throttle", async () => {
    const reads = await startKeyLimitedDynamo(emulators.dynamoEndpoint, {
      writeUnitsPerSecond: 1000,
      readUnitsPerSecond: 1,
    });
    try {
      const table = storage(reads.endpoint, 3).table(ROUTES_TABLE);
      await table.put({ pk: "wide", sk: "a", blob: "y".repeat(200 * 1024) });
      // 200 KB consistently read: 50 read units from a bucket of 1; every later read of the key is throttled.
      await table.get({ pk: "wide", sk: "a" }, { consistent: true });
      await assert.rejects(table.get({ pk: "wide", sk: "a" }, { consistent: true }), NimbusError);
      assert.equal(reads.throttled(), 3, "the SDK tried three times, each answered with the throttle");
    } finally {
      await reads.stop();
    }
  });

  it("a configured throttle back-off (dynamoThrottleRetry) retries as many times as it says, then SYSTEM_BUSY", async () => {
    const writes = await startKeyLimitedDynamo(emulators.dynamoEndpoint, {
      writeUnitsPerSecond: 1,
      readUnitsPerSecond: 1000,
    });
    try {
      const table = storage(writes.endpoint, 5, { throttlingBaseMs: 5 }).table(ROUTES_TABLE);
      await table.put({ pk: "backoff", sk: "a", blob: "z".repeat(100 * 1024) }); // the key overdrawn for 99 s
      await assert.rejects(
        table.put({ pk: "backoff", sk: "b", v: 1 }),
        (err: unknown) => err instanceof NimbusError && err.code === ErrorCode.SYSTEM_BUSY && err.retryable,
      );
      assert.equal(writes.throttled(), 5, "five attempts, each answered with the throttle");
      await table.put({ pk: "elsewhere", sk: "a", v: 1 });
      assert.equal(writes.throttled(), 5, "a request that succeeds is not retried");
    } finally {
      await writes.stop();
    }
  });

  it("by default a throttled put is retried on DynamoDB's schedule (50 ms base) and lands; 6 attempts at most", async () => {
    const writes = await startKeyLimitedDynamo(emulators.dynamoEndpoint, {
      writeUnitsPerSecond: 1000,
      readUnitsPerSecond: 1000,
    });
    try {
      const table = storage(writes.endpoint).table(ROUTES_TABLE); // no retry options: the adapter's defaults
      writes.throttleNext(3);
      await table.put({ pk: "default", sk: "a", v: 1 });
      assert.equal(writes.throttled(), 3, "three attempts throttled, the fourth served");
      assert.deepEqual(await table.get({ pk: "default", sk: "a" }, { consistent: true }), {
        pk: "default",
        sk: "a",
        v: 1,
      });
      writes.throttleNext(100);
      await assert.rejects(
        table.put({ pk: "default", sk: "b", v: 1 }),
        (err: unknown) => err instanceof NimbusError && err.code === ErrorCode.SYSTEM_BUSY && err.retryable,
      );
      assert.equal(writes.throttled(), 3 + DEFAULT_DYNAMO_ATTEMPTS, "then SYSTEM_BUSY after the default attempts");
      writes.throttleNext(0);
    } finally {
      await writes.stop();
    }
  });
});
