/**
 * @module AWS Signature Version 4 (header form) on `node:crypto`: what the SDK needs to call an API Gateway
 * stage with IAM auth (service `execute-api`), and the Lambdas to post push hints through the WebSocket API's
 * Management API (same service). Not for S3, which wants its paths signed as they are.
 *
 * The canonical request follows AWS's rules for every service but S3: each segment of the path as it goes
 * on the wire (already percent-encoded once, as `URL` holds it) is URI-encoded again, empty and `.` segments
 * dropped; query parameters decoded, encoded strictly and sorted by name, then value; headers lower-cased,
 * values trimmed with inner whitespace collapsed, sorted by name; the payload hashed with SHA-256.
 *
 * @example
 * const headers = signRequest({
 *   method: "GET",
 *   url: "https://abc123.execute-api.us-east-1.amazonaws.com/cluster",
 *   region: "us-east-1",
 *   credentials: { accessKeyId, secretAccessKey, sessionToken },
 * });
 * await fetch("https://abc123.execute-api.us-east-1.amazonaws.com/cluster", { headers });
 */
import { createHash, createHmac } from "node:crypto";

/** An IAM identity's keys; `sessionToken` for temporary credentials (STS, SSO, a Lambda's role). */
export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Called before each signed request; it should cache and refresh the credentials itself. */
export type CredentialsProvider = () => Promise<Credentials>;

export interface SignRequestInput {
  method: string;
  /** The full URL the request goes to: its host, path and query are signed. */
  url: string | URL;
  /** Headers the request will carry, all signed (but hop-by-hop ones and `user-agent`). Default none. */
  headers?: Record<string, string> | undefined;
  /** The exact bytes that will be sent; none means an empty payload. */
  body?: string | Uint8Array | undefined;
  region: string;
  /** Default `execute-api` (API Gateway). */
  service?: string | undefined;
  credentials: Credentials;
  /** The signing time. Default now; AWS refuses a signature more than 5 minutes off its clock. */
  now?: Date | undefined;
  /**
   * Send and sign `x-amz-content-sha256`. Default true. AWS's published test vectors predate the header,
   * so their tests turn it off.
   */
  contentSha256?: boolean | undefined;
  /** The body's SHA-256 (hex) when it is known without the body: a server checking a signature before reading. */
  payloadHash?: string | undefined;
}

/** Every intermediate of one signature, for tests and for debugging a `403` from AWS. */
export interface SignatureParts {
  canonicalRequest: string;
  stringToSign: string;
  signature: string;
  /** The headers to add to the request (lower-case names). */
  headers: Record<string, string>;
}

const ALGORITHM = "AWS4-HMAC-SHA256";

/**
 * Headers a proxy or the HTTP stack may add, drop or rewrite, so never signed (the AWS SDKs skip the same),
 * and the ones the signature itself sets.
 */
const UNSIGNED = new Set([
  "authorization",
  "connection",
  "content-length",
  "expect",
  "keep-alive",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "user-agent",
  "x-amzn-trace-id",
  "x-amz-date",
  "x-amz-content-sha256",
  "x-amz-security-token",
]);

/**
 * The headers that sign a request with SigV4: `authorization`, `x-amz-date`, `x-amz-content-sha256`
 * (unless turned off) and `x-amz-security-token` with a session token. Send the request to `url` with
 * `headers`, these added, and `body` unchanged: any difference makes AWS answer 403.
 *
 * @example
 * const signed = signRequest({ method: "POST", url, headers, body, region: "us-east-1", credentials });
 * await fetch(url, { method: "POST", headers: { ...headers, ...signed }, body });
 */
export function signRequest(input: SignRequestInput): Record<string, string> {
  return signatureParts(input).headers;
}

/** `signRequest` with its canonical request, string to sign and signature. */
export function signatureParts(input: SignRequestInput): SignatureParts {
  const { credentials, region } = input;
  const service = input.service ?? "execute-api";
  const url = typeof input.url === "string" ? new URL(input.url) : input.url;
  const amzDate = (input.now ?? new Date()).toISOString().replace(/[-:]|\.\d{3}/g, "");
  const date = amzDate.slice(0, 8);
  const payloadHash = input.payloadHash ?? sha256Hex(input.body ?? "");

  const added: Record<string, string> = { "x-amz-date": amzDate };
  if (input.contentSha256 ?? true) added["x-amz-content-sha256"] = payloadHash;
  if (credentials.sessionToken) added["x-amz-security-token"] = credentials.sessionToken;

  const signed = canonicalHeaders(input.headers ?? {}, added);
  // The Host header fetch derives from the URL, unless the caller names another (a proxy's virtual host).
  if (!signed.has("host")) signed.set("host", url.host);
  const names = [...signed.keys()].sort();
  const signedHeaders = names.join(";");
  const canonicalRequest = [
    input.method.toUpperCase(),
    canonicalUri(url.pathname),
    canonicalQuery(url.search),
    ...names.map((name) => `${name}:${signed.get(name)}`),
    "",
    signedHeaders,
    payloadHash,
  ].join("\n");

  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = [ALGORITHM, amzDate, scope, sha256Hex(canonicalRequest)].join("\n");
  const key = signingKey(credentials.secretAccessKey, date, region, service);
  const signature = hmac(key, stringToSign).toString("hex");
  const authorization = `${ALGORITHM} Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { canonicalRequest, stringToSign, signature, headers: { authorization, ...added } };
}

/** The signing keys derived lately, by secret, day, region and service: at most SIGNING_KEYS_KEPT. */
const signingKeys = new Map<string, Buffer>();
const SIGNING_KEYS_KEPT = 64;

/**
 * SigV4's signing key: four HMACs chained from the secret through the day, region and service. A key serves a
 * secret for a whole day, so the last SIGNING_KEYS_KEPT used are kept (the AWS SDKs cache it the same way): a
 * signature then costs one HMAC and a hash of the secret, not five HMACs. The least recently used goes first; a
 * day's change makes new keys and ages the old ones out. The map holds the secret's SHA-256, never the secret, and
 * its id is a JSON array, so no two (day, region, service, secret) share one.
 */
function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  const id = JSON.stringify([date, region, service, sha256Hex(secret)]);
  const kept = signingKeys.get(id);
  if (kept !== undefined) {
    signingKeys.delete(id);
    signingKeys.set(id, kept);
    return kept;
  }
  const key = [date, region, service, "aws4_request"].reduce<Buffer>(
    (k, part) => hmac(k, part),
    Buffer.from(`AWS4${secret}`, "utf8"),
  );
  if (signingKeys.size >= SIGNING_KEYS_KEPT) signingKeys.delete(signingKeys.keys().next().value ?? "");
  signingKeys.set(id, key);
  return key;
}

/**
 * The canonical URI of a path as sent (`URL.pathname`, already percent-encoded): each segment encoded once
 * more, so `/a%2Fb` signs as `/a%252Fb` and stays apart from `/a/b`. Empty and `.` segments are dropped and
 * `..` removes the one before, as AWS normalizes every path but S3's; a trailing slash is kept.
 */
export function canonicalUri(pathname: string): string {
  const segments: string[] = [];
  for (const segment of pathname.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(uriEncode(segment));
  }
  const trailing = segments.length > 0 && pathname.endsWith("/") ? "/" : "";
  return `/${segments.join("/")}${trailing}`;
}

/**
 * The canonical query string of a URL's `search`: each name and value decoded, then encoded strictly
 * (`+` is a plus, not a space), pairs sorted by name then value, a name without `=` given an empty value.
 */
export function canonicalQuery(search: string): string {
  const query = search.startsWith("?") ? search.slice(1) : search;
  const pairs: [string, string][] = [];
  for (const part of query.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const name = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? "" : part.slice(eq + 1);
    pairs.push([uriEncode(decode(name)), uriEncode(decode(value))]);
  }
  pairs.sort(([an, av], [bn, bv]) => compare(an, bn) || compare(av, bv));
  return pairs.map(([n, v]) => `${n}=${v}`).join("&");
}

/** RFC 3986 percent-encoding as SigV4 wants it: all but `A-Z a-z 0-9 - _ . ~`, UTF-8, upper-case hex. */
export function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Lower-cased names, trimmed values with whitespace runs as one space; repeated names joined by commas. */
function canonicalHeaders(headers: Record<string, string>, added: Record<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [rawName, rawValue] of Object.entries(headers)) {
    const name = rawName.trim().toLowerCase();
    if (UNSIGNED.has(name)) continue;
    const value = rawValue.trim().replace(/\s+/g, " ");
    const before = out.get(name);
    out.set(name, before === undefined ? value : `${before},${value}`);
  }
  for (const [name, value] of Object.entries(added)) out.set(name, value);
  return out;
}

/** A query part as its characters; a malformed escape (`%zz`) stays as written. */
function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** By code unit: after `uriEncode` every string is ASCII, so this is the byte order SigV4 asks for. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The SHA-256 (hex) of a payload, as `x-amz-content-sha256` carries it. */
export function payloadHash(body: string | Uint8Array): string {
  return sha256Hex(body);
}

function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

function hmac(key: Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data, "utf8").digest();
}
