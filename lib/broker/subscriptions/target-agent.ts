/**
 * @module The connection pool of HTTPS targets and the certificates it trusts (docs/subscriptions.md "Targets with
 * a private CA"). By default Node's own trust: its bundled roots (`tls.rootCertificates`) and NODE_EXTRA_CA_CERTS.
 * With an operator's extra CA certificates (`nimbus dev --target-ca <file>`, `targetCaPem`), the bundled roots
 * plus those: a target is still verified (chain and host name), never accepted unverified.
 */

import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import { Agent } from "undici";

/** How many certificates an extra CA bundle may hold (a bundle, not a trust store). */
export const MAX_TARGET_CA_CERTIFICATES = 100;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g;

const POOL = { keepAliveTimeout: 10_000, connections: 128 } as const;

/** One keep-alive pool for every HTTPS target of a process that trusts what Node trusts by default. */
export const DEFAULT_TARGET_AGENT = new Agent(POOL);

/**
 * The certificates of a PEM bundle, each parsed (an unreadable one, none at all, or more than
 * MAX_TARGET_CA_CERTIFICATES is an error naming the problem: a typo in a CA file must not start a dispatcher
 * that silently fails every delivery).
 */
export function readTargetCa(pem: string | Buffer): string[] {
  const text = typeof pem === "string" ? pem : pem.toString("utf8");
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new Error("the target CA file holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
  if (blocks.length > MAX_TARGET_CA_CERTIFICATES)
    throw new Error(`the target CA file holds ${blocks.length} certificates, at most ${MAX_TARGET_CA_CERTIFICATES}`);
  return blocks.map((block, i) => {
    try {
      new X509Certificate(block);
    } catch (err) {
      throw new Error(`certificate ${i + 1} of the target CA file is not readable: ${(err as Error).message}`);
    }
    return block;
  });
}

/**
 * A pool trusting Node's bundled roots, NODE_EXTRA_CA_CERTS (read as Node reads it, at start) and `extraCaPem`.
 * Setting `ca` replaces Node's default list, so the first two are given again here.
 */
export function targetAgentTrusting(extraCaPem: string | Buffer): Agent {
  const extra = readTargetCa(extraCaPem);
  return new Agent({ ...POOL, connect: { ca: [...rootCertificates, ...nodeExtraCaCerts(), ...extra] } });
}

/** The certificates of NODE_EXTRA_CA_CERTS, which Node adds to its default list only (none when unset or unreadable). */
function nodeExtraCaCerts(): string[] {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (file === undefined || file === "") return [];
  try {
    return readTargetCa(readFileSync(file));
  } catch {
    // Node itself only warns about an unreadable NODE_EXTRA_CA_CERTS; the default pool would not have it either.
    return [];
  }
}
