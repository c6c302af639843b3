/**
 * @module The signature of a subscription's HTTPS delivery (docs/subscriptions.md): the header
 * `x-nimbus-signature: t=<unix seconds>, v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`. The dispatcher signs
 * with it; a target checks it with `verifyDeliverySignature` (exported by the SDK), or with any HMAC library.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const DELIVERY_SIGNATURE_HEADER = "x-nimbus-signature";
/** How far a delivery's `t` may be from the verifier's clock by default: 5 minutes, either way. */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;
/** A header longer than this is refused before any parsing (a signature header is about 80 characters). */
const MAX_HEADER_LENGTH = 1024;

const hmacHex = (secret: string, t: number, rawBody: Uint8Array | string): string =>
  createHmac("sha256", secret)
    .update(`${t}.`)
    .update(typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : rawBody)
    .digest("hex");

/** The header's value for a body sent at `unixSeconds`. */
export function signDelivery(secret: string, rawBody: Uint8Array | string, unixSeconds: number): string {
  return `t=${unixSeconds}, v1=${hmacHex(secret, unixSeconds, rawBody)}`;
}

export type SignatureCheck =
  | { valid: true; timestamp: number }
  | { valid: false; reason: "malformed" | "stale" | "mismatch" };

/**
 * Whether `header` signs `rawBody` (the bytes exactly as received, before any JSON parsing) with `secret`,
 * at most `toleranceSeconds` from `nowSeconds`. Several `v1=` values (a secret being rotated) pass if one matches.
 */
export function verifyDeliverySignature(
  secret: string,
  rawBody: Uint8Array | string,
  header: string | null | undefined,
  options: { nowSeconds?: number; toleranceSeconds?: number } = {},
): SignatureCheck {
  if (typeof header !== "string" || header.length > MAX_HEADER_LENGTH) return { valid: false, reason: "malformed" };
  let t: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const [name, value = ""] = part.trim().split("=", 2);
    if (name === "t" && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (name === "v1" && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  if (t === undefined || signatures.length === 0) return { valid: false, reason: "malformed" };
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS))
    return { valid: false, reason: "stale" };
  const expected = Buffer.from(hmacHex(secret, t, rawBody), "hex");
  const match = signatures.some((s) => timingSafeEqual(Buffer.from(s, "hex"), expected));
  return match ? { valid: true, timestamp: t } : { valid: false, reason: "mismatch" };
}
