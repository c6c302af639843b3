/**
 * @module The AWS SDK clients' retry back-off, as the SDK's standard strategy has it (full jitter: a delay drawn
 * between 0 and base × 2^retry, at most 20 s), with its bases as options: `throttlingBaseMs` for throttled
 * requests (DynamoDB's `ProvisionedThroughputExceededException`), `baseMs` for the others it retries (5xx,
 * connection errors). The SDK's own defaults (50 ms, 1 s) are the defaults here. A per-partition throttle
 * refills within milliseconds (a key regains 1 write unit per millisecond), so a hot queue's writers may want a
 * shorter throttling base than the SDK's (docs/queue-log.md, "Hot queues"); the benchmark stretches both with its
 * clock. Client errors are never retried.
 */

/** The retry back-off bases (ms). */
export interface RetryBackoff {
  /** Base of the delay after a throttled attempt. Default 1,000 ms (the SDK's). */
  throttlingBaseMs: number;
  /** Base of the delay after a 5xx or a connection error. Default 50 ms (the SDK's). */
  baseMs: number;
}

export const DEFAULT_RETRY_BACKOFF: RetryBackoff = { throttlingBaseMs: 1_000, baseMs: 50 };

/** The SDK's longest retry delay. */
const MAX_DELAY_MS = 20_000;

interface Token {
  getRetryCount(): number;
  getRetryDelay(): number;
}

type ErrorType = "TRANSIENT" | "THROTTLING" | "SERVER_ERROR" | "CLIENT_ERROR";

/** A retry strategy (the SDK's `RetryStrategyV2` shape) of at most `maxAttempts` attempts per request. */
export function retryStrategy(maxAttempts: number, backoff: Partial<RetryBackoff> = {}) {
  const bases = { ...DEFAULT_RETRY_BACKOFF, ...backoff };
  const token = (count: number, delay: number): Token => ({ getRetryCount: () => count, getRetryDelay: () => delay });
  return {
    mode: "standard",
    acquireInitialRetryToken: async (_scope: string): Promise<Token> => token(0, 0),
    refreshRetryTokenForRetry: async (previous: Token, info: { errorType: ErrorType; error?: unknown }) => {
      const retries = previous.getRetryCount();
      if (info.errorType === "CLIENT_ERROR" || retries + 1 >= maxAttempts) throw info.error ?? new Error("no retry");
      const base = info.errorType === "THROTTLING" ? bases.throttlingBaseMs : bases.baseMs;
      return token(retries + 1, Math.floor(Math.random() * Math.min(base * 2 ** retries, MAX_DELAY_MS)));
    },
    recordSuccess: (_token: Token): void => undefined,
  };
}
