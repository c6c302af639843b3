/**
 * @module The process's budget for the bytes of requests being served, as every door sees it (the local server's
 * `InFlightBytes`, lib/dev/server-guard.ts, is the one budget its HTTP, remoting and gRPC doors share).
 */

/** Bytes of requests being served: taken as they arrive, given back once the request is answered. */
export interface RequestBytes {
  /** Takes `size` bytes if they fit under the budget. */
  take(size: number): boolean;
  release(size: number): void;
}

/** What every door says when a request does not fit the budget (SYSTEM_BUSY, RESOURCE_EXHAUSTED). */
export const OVER_BUDGET = "the broker holds too many requests' bytes; retry";
