/**
 * @module The nonces a process has accepted, so a captured signed request is refused when sent again. A nonce is
 * kept for twice the signature skew (a request older than that is refused by its date already); a nonce that young
 * is never forgotten to make room: when the cache is full, new requests get SYSTEM_BUSY until old nonces expire.
 * One guard is shared by every server of one process (`nimbus dev --slaves`), so a request accepted by the master
 * cannot be replayed on a slave.
 */
import { ErrorCode, NimbusError } from "../core/errors.js";
import { MAX_SIGNATURE_SKEW_MS } from "../core/request-signing.js";
import type { AnyEndpoint } from "../protocol/index.js";
import { ConditionFailedError, type Table } from "../storage/table.js";

/** Nonces remembered per process at most (about 100 bytes each). */
export const MAX_NONCES = 100_000;

export class ReplayGuard {
  readonly #max: number;
  /** Nonce -> time seen; a Map keeps insertion order, so the oldest come first. */
  readonly #nonces = new Map<string, number>();

  constructor(maxNonces = MAX_NONCES) {
    this.#max = maxNonces;
  }

  get size(): number {
    return this.#nonces.size;
  }

  /** Records `key` seen at `now`; UNAUTHENTICATED if it was seen before, SYSTEM_BUSY if the cache is full. */
  admit(key: string, now: number): void {
    for (const [old, at] of this.#nonces) {
      if (now - at <= 2 * MAX_SIGNATURE_SKEW_MS) break;
      this.#nonces.delete(old);
    }
    if (this.#nonces.has(key))
      throw new NimbusError(ErrorCode.UNAUTHENTICATED, "this signed request was received before (a replay)");
    if (this.#nonces.size >= this.#max)
      throw new NimbusError(
        ErrorCode.SYSTEM_BUSY,
        "too many signed requests in the last 30 minutes to remember their nonces; retry later",
      );
    this.#nonces.set(key, now);
  }
}

/**
 * Whether a replay of `endpoint` is refused across processes (every Lambda container), not only by the process
 * that saw it first (docs/security.md "Replays"): the mutating admin routes (topics, users, ACLs, offset resets),
 * whose replay would undo a later change. Reads and the data plane keep the per-process guard.
 */
export function isReplayProof(endpoint: AnyEndpoint): boolean {
  if (endpoint.method === "GET") return false;
  return endpoint.service === "Acl" || endpoint.service === "Topics" || endpoint.id === "resetOffsetByTime";
}

/**
 * Nonces recorded in a table, one item each (`nonce:<accessKey>/<nonce>`), so that every process refuses a
 * request any of them accepted. Costs one conditional write per replay-proof request; the items expire by TTL.
 */
export class DurableNonces {
  constructor(private readonly table: Table) {}

  /** Records `key` seen at `now`; UNAUTHENTICATED if any process recorded it before. */
  async admit(key: string, now: number): Promise<void> {
    try {
      // Condition: no item under this nonce, so of two processes given one signed request, one accepts it.
      await this.table.put(
        { pk: `nonce:${key}`, sk: "nonce", expiresAt: Math.ceil((now + 2 * MAX_SIGNATURE_SKEW_MS) / 1000) },
        { condition: { exists: false } },
      );
    } catch (err) {
      if (err instanceof ConditionFailedError)
        throw new NimbusError(ErrorCode.UNAUTHENTICATED, "this signed request was received before (a replay)");
      throw err;
    }
  }
}
