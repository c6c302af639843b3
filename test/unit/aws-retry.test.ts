/**
 * @module The DynamoDB client's retry back-off (lib/storage/aws/retry.ts) on a set clock and jitter: the schedule
 * (50 ms × 2^retry by default, full jitter), and its three bounds (attempts, the sum waited, the time since the
 * first attempt). Client errors are never retried.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_DYNAMO_ATTEMPTS, DEFAULT_RETRY_BACKOFF } from "../../lib/storage/aws/index.js";
import { retryStrategy } from "../../lib/storage/aws/retry.js";

/** Every delay the strategy hands out for `errorType` until it gives up (the clock advancing by each delay). */
async function schedule(
  errorType: "THROTTLING" | "TRANSIENT" | "CLIENT_ERROR",
  attempts = DEFAULT_DYNAMO_ATTEMPTS,
  backoff = {},
  stepMs = 0,
): Promise<number[]> {
  let now = 0;
  const strategy = retryStrategy(attempts, backoff, { now: () => now, random: () => 0.999999 });
  let token = await strategy.acquireInitialRetryToken("dynamodb");
  const delays: number[] = [];
  for (let i = 0; i < 100; i++) {
    try {
      token = await strategy.refreshRetryTokenForRetry(token, { errorType, error: new Error("throttled") });
    } catch {
      return delays;
    }
    delays.push(token.getRetryDelay());
    now += token.getRetryDelay() + stepMs;
  }
  throw new Error("never gave up");
}

describe("the DynamoDB retry back-off", () => {
  it("defaults to DynamoDB's own schedule: 50 ms × 2^retry, 6 attempts", async () => {
    assert.equal(DEFAULT_RETRY_BACKOFF.throttlingBaseMs, 50);
    assert.equal(DEFAULT_DYNAMO_ATTEMPTS, 6);
    assert.deepEqual(await schedule("THROTTLING"), [49, 99, 199, 399, 799]);
  });

  it("bounds the sum of the delays (maxWaitMs): the last one is cut, then no retry", async () => {
    assert.deepEqual(await schedule("THROTTLING", 10, { maxWaitMs: 500 }), [49, 99, 199, 153]);
  });

  it("starts no retry past maxElapsedMs after the first attempt (slow attempts count)", async () => {
    // Each attempt takes 1 s of the clock: the third retry would start 3 s after the first attempt.
    assert.deepEqual(await schedule("TRANSIENT", 10, { maxElapsedMs: 2_500 }, 1_000), [49, 99, 199]);
  });

  it("never retries a client error; the configured base and attempts are used", async () => {
    assert.deepEqual(await schedule("CLIENT_ERROR"), []);
    assert.deepEqual(
      await schedule("THROTTLING", 3, { throttlingBaseMs: 1_000 }),
      [999, 1001], // 1,999 cut to what is left of the 2 s waited in all
    );
  });
});
