/**
 * @module How long a gRPC signature is good for. RocketMQ 5's clients sign only `x-mq-date-time` (to the second)
 * with HMAC-SHA1: one signature serves every call a client makes in that second, whatever the call holds, so it
 * cannot be bound to a body or used once; and every client of one user signs the same second alike, so it cannot
 * be bound to an address either (two hosts of one app sending in the same second present the same header).
 * What this endpoint can bound is its life: a client stamps each call when it makes it, so a signature is in use
 * for about a second, and this process accepts it for `GRPC_SIGNATURE_REUSE_MS` after it first accepted it, from
 * any address, never again after that (a replay, or a client whose clock is that far behind another client's of
 * the same user). Per process and bounded.
 */
import { ErrorCode, NimbusError } from "../core/errors.js";

/** How far a call's `x-mq-date-time` may be from the server's clock (RocketMQ's own proxy checks none). */
export const GRPC_SIGNATURE_SKEW_MS = 5 * 60_000;
/**
 * How long after this process first accepts a signature it accepts it again: a client's calls of one second
 * arrive within its request timeout, and the hosts of one app that share a user must keep their clocks this close.
 */
export const GRPC_SIGNATURE_REUSE_MS = 60_000;
/** Signatures remembered per process at most (one per user and second in use). */
export const MAX_REMEMBERED_SIGNATURES = 100_000;

export class SignatureReuse {
  /** Signature -> when this process first accepted it; insertion order is age order. */
  readonly #firstUse = new Map<string, number>();

  constructor(private readonly max = MAX_REMEMBERED_SIGNATURES) {}

  get size(): number {
    return this.#firstUse.size;
  }

  /**
   * Records `signature` (a valid one: a forged one must not start a real one's clock) used at `now`;
   * UNAUTHENTICATED when this process first accepted it more than `GRPC_SIGNATURE_REUSE_MS` ago.
   */
  admit(signature: string, now: number): void {
    // Its date-time, within the skew of its first use, is refused by the clock check 2 × the skew after it: it is
    // kept that long. Past the bound the oldest go first (only a user's own valid signatures get in).
    for (const [old, at] of this.#firstUse) {
      if (now - at <= 2 * GRPC_SIGNATURE_SKEW_MS && this.#firstUse.size < this.max) break;
      this.#firstUse.delete(old);
    }
    const first = this.#firstUse.get(signature);
    if (first === undefined) this.#firstUse.set(signature, now);
    else if (now - first > GRPC_SIGNATURE_REUSE_MS)
      throw new NimbusError(
        ErrorCode.UNAUTHENTICATED,
        `this signature was first used more than ${GRPC_SIGNATURE_REUSE_MS / 1000} s ago: a replay, or a client ` +
          "whose clock is that far behind another client's of the same user",
      );
  }
}
