/**
 * @module The AWS adapter on dynalite and s3rver started in this process (see `test/support/emulators.ts`):
 * the storage and queue-log contracts and the AWS-only cases (`aws-contract.ts`), plus the translation of
 * SDK errors. The same contract runs on DynamoDB Local in `aws-dynamodb-local.test.ts`. Run with
 * `--openssl-legacy-provider` (`npm test` sets it).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { translateError } from "../../lib/storage/aws/sdk-errors.js";
import { awsContract } from "./aws-contract.js";

awsContract("dynalite");

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
