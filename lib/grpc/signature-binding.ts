/**
 * @module What a captured gRPC signature is good for. RocketMQ 5's clients sign only `x-mq-date-time` (to the
 * second) with HMAC-SHA1: one signature serves every call a client makes in that second, whatever the call holds,
 * so it cannot be bound to a body or used once. What this endpoint can bind it to is where it came from: the first
 * peer address (IP, not port: a producer and a consumer of one app share their user's signature) that presented
 * a signature owns it for as long as its date-time is accepted (`GRPC_SIGNATURE_SKEW_MS`); the same signature from
 * another address is refused. Per process and bounded; off behind a load balancer that terminates TLS (every call
 * then comes from its addresses), where TLS between client and balancer is what keeps a signature from being seen.
 */
import { ErrorCode, NimbusError } from "../core/errors.js";

/** How far a call's `x-mq-date-time` may be from the server's clock (RocketMQ's own proxy checks none). */
export const GRPC_SIGNATURE_SKEW_MS = 5 * 60_000;
/** Signatures remembered per process at most (one per user and second in use: about 600 per busy user). */
export const MAX_BOUND_SIGNATURES = 100_000;

export class SignatureBinding {
  /** Signature -> the address that first presented it and when; insertion order is age order. */
  readonly #owners = new Map<string, { address: string; at: number }>();

  constructor(private readonly max = MAX_BOUND_SIGNATURES) {}

  get size(): number {
    return this.#owners.size;
  }

  /** UNAUTHENTICATED when `signature` was first presented from another address within its lifetime. */
  admit(signature: string, address: string, now: number): void {
    for (const [old, owner] of this.#owners) {
      if (now - owner.at <= 2 * GRPC_SIGNATURE_SKEW_MS && this.#owners.size < this.max) break;
      this.#owners.delete(old);
    }
    const owner = this.#owners.get(signature);
    if (owner === undefined) this.#owners.set(signature, { address, at: now });
    else if (owner.address !== address)
      throw new NimbusError(ErrorCode.UNAUTHENTICATED, "this signature was first used from another address");
  }
}

/** The IP of a grpc-js peer (`ipv4:1.2.3.4:5678`, `ipv6:[::1]:5678`, `1.2.3.4:5678`), without the port. */
export function peerAddress(peer: string): string {
  const bare = peer.replace(/^ipv[46]:/, "");
  const v6 = /^\[([^\]]+)\]:\d+$/.exec(bare);
  if (v6) return v6[1] ?? bare;
  const colon = bare.lastIndexOf(":");
  return colon > 0 && bare.indexOf(":") === colon ? bare.slice(0, colon) : bare;
}
