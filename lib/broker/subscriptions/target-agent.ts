/**
 * @module The connection pool of HTTPS targets: the addresses it may dial (lib/core/target-address.ts) and the
 * certificates it trusts (docs/subscriptions.md "Targets with a private CA"). By default Node's own trust: its
 * bundled roots (`tls.rootCertificates`) and NODE_EXTRA_CA_CERTS.
 * With an operator's extra CA certificates (`nimbus dev --target-ca <file>`, `targetCaPem`), the bundled roots
 * plus those: a target is still verified (chain and host name), never accepted unverified.
 */

import { X509Certificate } from "node:crypto";
import { type LookupAddress, lookup } from "node:dns";
import { readFileSync } from "node:fs";
import type { LookupFunction } from "node:net";
import { rootCertificates } from "node:tls";
import { Agent } from "undici";
import { addressProblem, type TargetNetworks } from "../../core/target-address.js";

/** How many certificates an extra CA bundle may hold (a bundle, not a trust store). */
export const MAX_TARGET_CA_CERTIFICATES = 100;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g;

const POOL = { keepAliveTimeout: 10_000, connections: 128 } as const;

/**
 * A keep-alive pool for the HTTPS targets of a process: it connects only to addresses `networks` allows (the
 * address a name resolves to is checked when it is dialled, so a name that resolves to a metadata service or to
 * loopback is refused before a byte, the signature included, is sent), and trusts Node's bundled roots,
 * NODE_EXTRA_CA_CERTS and, when given, `extraCaPem` (setting `ca` replaces Node's default list, so the first two
 * are given again).
 */
export function targetAgent(networks: TargetNetworks, extraCaPem?: string | Buffer): Agent {
  const ca =
    extraCaPem === undefined ? {} : { ca: [...rootCertificates, ...nodeExtraCaCerts(), ...readTargetCa(extraCaPem)] };
  return new Agent({ ...POOL, connect: { lookup: allowedLookup(networks), ...ca } });
}

/** `dns.lookup`, answering only addresses `networks` allows (an error naming the first refused one if none is). */
export function allowedLookup(networks: TargetNetworks): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const allowed = addresses.filter((a) => addressProblem(a.address, networks) === undefined);
      const first = allowed[0];
      if (first === undefined) {
        const problem = addressProblem(addresses[0]?.address ?? "", networks) ?? "no address";
        const refused = Object.assign(new Error(`${hostname} resolves to a refused address: ${problem}`), {
          code: "ENOTALLOWED",
        });
        return callback(refused, "", 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      return callback(null, first.address, first.family);
    });
  };
}

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
