/**
 * @module The DynamoDB client's retry back-off: full jitter (a delay drawn between 0 and base × 2^retry, as the
 * SDK's standard strategy has it), with DynamoDB's own bases by default rather than the SDK's: 50 ms after a
 * throttled request (DynamoDB's `ProvisionedThroughputExceededException`) as after a 5xx, 6 attempts. AWS's older
 * JavaScript SDK (v2) retried DynamoDB from a 50 ms base where every other service got 100 ms; the current SDK
 * applies 1 s to every throttle, which adds ~0.5 s to an append that met a hot key, while a key's units refill
 * within milliseconds (1 write unit per millisecond). Bounded three ways: attempts, the sum of the delays waited
 * (`maxWaitMs`), and the time since the first attempt (`maxElapsedMs`: a hung connection's 5 s request timeouts
 * retried are not retried past it). Client errors are never retried. The benchmark stretches every time here with
 * its clock.
 */

/** The retry back-off (ms). */
export interface RetryBackoff {
  /** Base of the delay after a throttled attempt. Default 50 ms. */
  throttlingBaseMs: number;
  /** Base of the delay after a 5xx or a connection error. Default 50 ms (the SDK's). */
  baseMs: number;
  /** At most this much waited between attempts, all retries of one request together. Default 2,000 ms. */
  maxWaitMs: number;
  /** No retry starts this long after the request's first attempt. Default 10,000 ms. */
  maxElapsedMs: number;
}

export const DEFAULT_RETRY_BACKOFF: RetryBackoff = {
  throttlingBaseMs: 50,
  baseMs: 50,
  maxWaitMs: 2_000,
  maxElapsedMs: 10_000,
};

/** The DynamoDB client's attempts per request by default (the first one and 5 retries). */
export const DEFAULT_DYNAMO_ATTEMPTS = 6;

/** The SDK's longest retry delay. */
const MAX_DELAY_MS = 20_000;

interface Token {
  getRetryCount(): number;
  getRetryDelay(): number;
  /** Delays handed out so far, this one included (ms). */
  waited: number;
  /** When the first attempt started (the clock's ms). */
  startedAt: number;
}

type ErrorType = "TRANSIENT" | "THROTTLING" | "SERVER_ERROR" | "CLIENT_ERROR";

/** What a retry strategy reads: the clock and the jitter's random draw (tests set them). */
export interface RetryEnvironment {
  now(): number;
  random(): number;
}

const REAL: RetryEnvironment = { now: () => Date.now(), random: Math.random };

/** A retry strategy (the SDK's `RetryStrategyV2` shape) of at most `maxAttempts` attempts per request. */
export function retryStrategy(maxAttempts: number, backoff: Partial<RetryBackoff> = {}, env: RetryEnvironment = REAL) {
  const b = { ...DEFAULT_RETRY_BACKOFF, ...backoff };
  const token = (count: number, delay: number, waited: number, startedAt: number): Token => ({
    getRetryCount: () => count,
    getRetryDelay: () => delay,
    waited,
    startedAt,
  });
  return {
    mode: "standard",
    acquireInitialRetryToken: async (_scope: string): Promise<Token> => token(0, 0, 0, env.now()),
    refreshRetryTokenForRetry: async (previous: Token, info: { errorType: ErrorType; error?: unknown }) => {
      const retries = previous.getRetryCount();
      const left = b.maxWaitMs - previous.waited;
      const giveUp =
        info.errorType === "CLIENT_ERROR" ||
        retries + 1 >= maxAttempts ||
        left <= 0 ||
        env.now() - previous.startedAt >= b.maxElapsedMs;
      if (giveUp) throw info.error ?? new Error("no retry");
      const base = info.errorType === "THROTTLING" ? b.throttlingBaseMs : b.baseMs;
      const delay = Math.min(Math.floor(env.random() * Math.min(base * 2 ** retries, MAX_DELAY_MS)), left);
      return token(retries + 1, delay, previous.waited + delay, previous.startedAt);
    },
    recordSuccess: (_token: Token): void => undefined,
  };
}
