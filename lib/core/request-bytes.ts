/**
 * @module The process's budget for the bytes of requests being served, as every door sees it (the local server's
 * `InFlightBytes`, lib/dev/server-guard.ts, is the one budget its HTTP, remoting and gRPC doors share).
 */

/**
 * Bytes of requests being served: taken as they arrive, given back once the request is answered. Of them, the bytes
 * of requests still arriving (a body, frame or message not yet whole) may hold only a share of the budget, so clients
 * that send slowly, or stop half-way, cannot take the room of the requests that arrive whole.
 */
export interface RequestBytes {
  /** Takes `size` bytes if they fit under the budget (and, `arriving`, its share for requests still arriving). */
  take(size: number, arriving?: boolean): boolean;
  /** Gives back `size` bytes taken (`arriving`: counted as still arriving). */
  release(size: number, arriving?: boolean): void;
  /** Counts `size` bytes already taken as still arriving, if the share for arriving bytes has room (else nothing). */
  markArriving(size: number): boolean;
  /** `size` bytes counted as arriving no longer are (their request is whole, or given up: release them then). */
  settleArriving(size: number): void;
}

/** What every door says when a request does not fit the budget (SYSTEM_BUSY, RESOURCE_EXHAUSTED). */
export const OVER_BUDGET = "the broker holds too many requests' bytes; retry";
