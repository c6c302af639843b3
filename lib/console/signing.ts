/**
 * @module How the console signs its API requests: one function, `RequestSigner`, chosen by `signerFor`
 * from what the connection form holds. Today a stage with IAM auth wants AWS SigV4 (signed here with
 * WebCrypto, the same canonical request as lib/core/sigv4.ts, checked equal by test/console/signing.test.ts);
 * a stage with `acl` auth wants a Nimbus signature: the same SigV4 with service and region `nimbus` and a
 * signed nonce header (docs/security.md, lib/core/request-signing.ts). Another scheme is one more case here.
 */

/** A request about to be sent: the signer answers the headers to add. */
export interface RequestToSign {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The exact text that will be sent; undefined for no body. */
  body: string | undefined;
}

export type RequestSigner = (request: RequestToSign) => Promise<Record<string, string>>;

/** What the connection form holds. */
export type Auth =
  | { kind: "none" }
  | { kind: "nimbus"; accessKey: string; secretKey: string }
  | { kind: "sigv4"; region: string; accessKeyId: string; secretAccessKey: string; sessionToken?: string };

/** What SigV4 signs with: a scope (region, service) and keys. */
export interface SigV4Key {
  region: string;
  service: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Nimbus signatures (lib/core/request-signing.ts, which the browser cannot import: it uses node:crypto). */
export const NIMBUS_SIGNING = { service: "nimbus", region: "nimbus", nonceHeader: "x-nimbus-nonce" } as const;

export const unsigned: RequestSigner = async () => ({});

/** The signer for a connection's auth. */
export function signerFor(auth: Auth): RequestSigner {
  switch (auth.kind) {
    case "none":
      return unsigned;
    case "sigv4":
      return (request) => sigV4Headers(request, { ...auth, service: "execute-api" }, new Date());
    case "nimbus":
      return (request) => nimbusHeaders(request, auth, new Date(), crypto.randomUUID());
  }
}

/** A Nimbus signature: SigV4 (service and region `nimbus`) over the request and a fresh nonce header. */
export async function nimbusHeaders(
  request: RequestToSign,
  auth: Extract<Auth, { kind: "nimbus" }>,
  now: Date,
  nonce: string,
): Promise<Record<string, string>> {
  const headers = { ...request.headers, [NIMBUS_SIGNING.nonceHeader]: nonce };
  const key = { region: NIMBUS_SIGNING.region, service: NIMBUS_SIGNING.service };
  const signed = await sigV4Headers(
    { ...request, headers },
    { ...key, accessKeyId: auth.accessKey, secretAccessKey: auth.secretKey },
    now,
  );
  return { ...signed, [NIMBUS_SIGNING.nonceHeader]: nonce };
}

/** The region of an API Gateway URL (`https://id.execute-api.<region>.amazonaws.com`), if it is one. */
export function regionOfApiUrl(url: string): string | undefined {
  return /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com/.exec(url)?.[1];
}

const ALGORITHM = "AWS4-HMAC-SHA256";
/** Headers never signed: the browser sets or may change them (fetch forbids setting most of them anyway). */
const UNSIGNED = new Set(["authorization", "content-length", "user-agent", "connection", "x-amz-date"]);

/** SigV4 headers (`authorization`, `x-amz-date`, `x-amz-content-sha256`, token) for the key's scope. */
export async function sigV4Headers(request: RequestToSign, auth: SigV4Key, now: Date): Promise<Record<string, string>> {
  const url = new URL(request.url);
  const amzDate = now.toISOString().replace(/[-:]|\.\d{3}/g, "");
  const date = amzDate.slice(0, 8);
  const payloadHash = await sha256Hex(request.body ?? "");
  const added: Record<string, string> = { "x-amz-date": amzDate, "x-amz-content-sha256": payloadHash };
  if (auth.sessionToken) added["x-amz-security-token"] = auth.sessionToken;

  const signed = new Map<string, string>();
  for (const [name, value] of Object.entries(request.headers)) {
    const lower = name.trim().toLowerCase();
    if (!UNSIGNED.has(lower)) signed.set(lower, value.trim().replace(/\s+/g, " "));
  }
  for (const [name, value] of Object.entries(added)) signed.set(name, value);
  if (!signed.has("host")) signed.set("host", url.host);
  const names = [...signed.keys()].sort();
  const signedHeaders = names.join(";");
  const canonical = [
    request.method.toUpperCase(),
    canonicalPath(url.pathname),
    canonicalSearch(url.search),
    ...names.map((n) => `${n}:${signed.get(n)}`),
    "",
    signedHeaders,
    payloadHash,
  ].join("\n");
  const scope = `${date}/${auth.region}/${auth.service}/aws4_request`;
  const stringToSign = [ALGORITHM, amzDate, scope, await sha256Hex(canonical)].join("\n");
  let key: ArrayBuffer = new TextEncoder().encode(`AWS4${auth.secretAccessKey}`).buffer as ArrayBuffer;
  for (const part of [date, auth.region, auth.service, "aws4_request"]) key = await hmac(key, part);
  const signature = toHex(await hmac(key, stringToSign));
  return {
    authorization: `${ALGORITHM} Credential=${auth.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
    ...added,
  };
}

/** Each path segment (as sent, already encoded once) encoded again; empty and `.` segments dropped. */
function canonicalPath(pathname: string): string {
  const out: string[] = [];
  for (const seg of pathname.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(strictEncode(seg));
  }
  return `/${out.join("/")}${out.length > 0 && pathname.endsWith("/") ? "/" : ""}`;
}

/** Query pairs decoded, strictly re-encoded, sorted by name then value. */
function canonicalSearch(search: string): string {
  const pairs = search
    .replace(/^\?/, "")
    .split("&")
    .filter((p) => p !== "")
    .map((p) => {
      const [name = "", ...rest] = p.split("=");
      return [strictEncode(safeDecode(name)), strictEncode(safeDecode(rest.join("=")))] as const;
    });
  pairs.sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0) : a[0] < b[0] ? -1 : 1));
  return pairs.map(([n, v]) => `${n}=${v}`).join("&");
}

function strictEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

async function sha256Hex(text: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

async function hmac(key: ArrayBuffer, data: string): Promise<ArrayBuffer> {
  const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return crypto.subtle.sign("HMAC", k, new TextEncoder().encode(data));
}

function toHex(buf: ArrayBuffer): string {
  return [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
