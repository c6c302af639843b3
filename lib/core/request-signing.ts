/**
 * @module Nimbus request signatures: AWS SigV4 (sigv4.ts) with service `nimbus`, a random nonce header
 * signed with the request, and the server's check. The secret never travels: the client sends its access
 * key, the signing time, the names of the signed headers and an HMAC-SHA256 over the method, path, query,
 * those headers and the body's SHA-256; the server recomputes it with the stored secret and compares in
 * constant time. A signature older (or newer) than 15 minutes is refused, and the nonce lets a server refuse
 * the same request twice (docs/security.md).
 *
 * @example
 * const headers = signNimbusRequest({ method: "GET", url, credentials: { accessKey: "alice", secretKey } });
 */
import { randomUUID, timingSafeEqual } from "node:crypto";
import { ErrorCode, NimbusError } from "./errors.js";
import { payloadHash, signatureParts } from "./sigv4.js";

/** The SigV4 service of Nimbus signatures (API Gateway's is `execute-api`). */
export const NIMBUS_SIGNING_SERVICE = "nimbus";
/** The SigV4 region of Nimbus signatures: one per deployment, whatever its AWS region. */
export const NIMBUS_SIGNING_REGION = "nimbus";
/** A random value per request, signed: the server remembers it for the signature's lifetime. */
export const NONCE_HEADER = "x-nimbus-nonce";
/** How far a signature's time may be from the server's clock, either way. */
export const MAX_SIGNATURE_SKEW_MS = 15 * 60_000;

/** A user's keys: the user name (access key) and its password (secret key). */
export interface NimbusCredentials {
  accessKey: string;
  secretKey: string;
}

export interface SignNimbusInput {
  method: string;
  url: string | URL;
  headers?: Record<string, string> | undefined;
  body?: string | Uint8Array | undefined;
  credentials: NimbusCredentials;
  now?: Date | undefined;
  nonce?: string | undefined;
}

/** The headers that sign a request: `authorization`, `x-amz-date`, `x-amz-content-sha256`, the nonce. */
export function signNimbusRequest(input: SignNimbusInput): Record<string, string> {
  const nonce = input.nonce ?? randomUUID();
  const headers = { ...(input.headers ?? {}), [NONCE_HEADER]: nonce };
  const signed = signatureParts({
    method: input.method,
    url: input.url,
    headers,
    body: input.body,
    region: NIMBUS_SIGNING_REGION,
    service: NIMBUS_SIGNING_SERVICE,
    credentials: { accessKeyId: input.credentials.accessKey, secretAccessKey: input.credentials.secretKey },
    now: input.now,
  }).headers;
  return { ...signed, [NONCE_HEADER]: nonce };
}

/** What an `Authorization` header claims, before it is checked. */
export interface SignatureClaim {
  accessKey: string;
  signedHeaders: string[];
  signature: string;
  /** The signing time, from `x-amz-date`. */
  signedAt: Date;
  nonce: string;
}

/** A request as the server received it (lower-case header names). */
export interface ReceivedRequest {
  method: string;
  host: string;
  /** The path as sent (percent-encoded) and the query string without `?`. */
  rawPath: string;
  rawQueryString: string;
  /** A header by lower-case name. */
  header(name: string): string | undefined;
  body: Uint8Array;
}

/** A Host header a signature can cover: a DNS name or IPv4 address, or a bracketed IPv6 one, and a port. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

const unauthenticated = (message: string) => new NimbusError(ErrorCode.UNAUTHENTICATED, message);

/** The claim of a request's signature headers, or UNAUTHENTICATED saying what is missing or malformed. */
export function parseSignature(request: ReceivedRequest, now: number): SignatureClaim {
  const header = request.header("authorization");
  if (header === undefined) throw unauthenticated("the request is not signed (no Authorization header)");
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
      header,
    );
  if (!m) throw unauthenticated("the Authorization header is not a Nimbus signature (AWS4-HMAC-SHA256)");
  const [, accessKey = "", day = "", region, service, names = "", signature = ""] = m;
  if (service !== NIMBUS_SIGNING_SERVICE || region !== NIMBUS_SIGNING_REGION)
    throw unauthenticated(`the signature's scope is not ${NIMBUS_SIGNING_REGION}/${NIMBUS_SIGNING_SERVICE}`);
  const amzDate = request.header("x-amz-date") ?? "";
  const d = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!d || amzDate.slice(0, 8) !== day) throw unauthenticated("x-amz-date is missing or disagrees with the scope");
  const signedAt = new Date(
    Date.UTC(+(d[1] ?? 0), +(d[2] ?? 1) - 1, +(d[3] ?? 0), +(d[4] ?? 0), +(d[5] ?? 0), +(d[6] ?? 0)),
  );
  if (Math.abs(now - signedAt.getTime()) > MAX_SIGNATURE_SKEW_MS)
    throw unauthenticated(`the signature is from ${amzDate}, more than 15 minutes from the server's clock`);
  const signedHeaders = names.split(";");
  for (const required of ["host", "x-amz-date", "x-amz-content-sha256", NONCE_HEADER])
    if (!signedHeaders.includes(required)) throw unauthenticated(`the signature must cover the ${required} header`);
  // Checked before the user is looked up, so a malformed Host answers the same for every access key.
  if (!HOST.test(request.host)) throw unauthenticated("the Host header is not a host name or address with a port");
  const nonce = request.header(NONCE_HEADER) ?? "";
  if (!/^[0-9A-Za-z-]{16,64}$/.test(nonce)) throw unauthenticated(`${NONCE_HEADER} is missing or malformed`);
  return { accessKey, signedHeaders, signature, signedAt, nonce };
}

/**
 * Whether `claim`'s signature is the one `secret` gives for `request`: the signature recomputed over the
 * headers it names (each must be present) and compared in constant time.
 */
export function signatureMatches(
  request: ReceivedRequest,
  claim: SignatureClaim,
  secret: string,
  /** Check the headers only, taking the body's hash as claimed (before the body is read; compared after). */
  bodyUnread = false,
): boolean {
  const headers: Record<string, string> = {};
  for (const name of claim.signedHeaders) {
    const value = request.header(name);
    if (value === undefined) return false;
    // sigv4.ts adds these itself, from the time and the body.
    if (name !== "x-amz-date" && name !== "x-amz-content-sha256") headers[name] = value;
  }
  const query = request.rawQueryString === "" ? "" : `?${request.rawQueryString}`;
  if (!HOST.test(request.host)) return false;
  const parts = signatureParts({
    method: request.method,
    url: `http://${request.host}${request.rawPath}${query}`,
    headers,
    body: request.body,
    ...(bodyUnread ? { payloadHash: request.header("x-amz-content-sha256") ?? "" } : {}),
    region: NIMBUS_SIGNING_REGION,
    service: NIMBUS_SIGNING_SERVICE,
    credentials: { accessKeyId: claim.accessKey, secretAccessKey: secret },
    now: claim.signedAt,
  });
  const expectedNames = /SignedHeaders=([^,]+)/.exec(parts.headers.authorization ?? "")?.[1];
  if (expectedNames !== claim.signedHeaders.join(";")) return false;
  // A hash that the client claims for the body must be the body's: the signature covers the claim.
  if (request.header("x-amz-content-sha256") !== parts.headers["x-amz-content-sha256"]) return false;
  const expected = Buffer.from(parts.signature, "utf8");
  const given = Buffer.from(claim.signature, "utf8");
  return expected.byteLength === given.byteLength && timingSafeEqual(expected, given);
}

/**
 * Whether `request`'s body is the one its `x-amz-content-sha256` header claims: with `signatureMatches(..., true)`
 * (the headers and the claimed hash signed by the user) it completes the check of a whole request.
 */
export function bodyMatchesClaim(request: ReceivedRequest): boolean {
  const claimed = request.header("x-amz-content-sha256");
  return claimed !== undefined && claimed === payloadHash(request.body);
}
