import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { HttpTransport, type TransportOptions } from "../../lib/client/transport/http-transport.js";
import {
  type Credentials,
  canonicalQuery,
  canonicalUri,
  signatureParts,
  signRequest,
} from "../../lib/client/transport/sigv4.js";
import { isNimbusError } from "../../lib/core/errors.js";

// AWS's aws-sig-v4-test-suite: its credentials, region, service and time, and each case's request and
// published Authorization header. The suite predates x-amz-content-sha256, hence `contentSha256: false`.
const SUITE = {
  region: "us-east-1",
  service: "service",
  credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" },
  now: new Date("2015-08-30T12:36:00Z"),
  contentSha256: false,
};
const SCOPE = "AKIDEXAMPLE/20150830/us-east-1/service/aws4_request";
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const STS_TOKEN =
  "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8" +
  "YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8" +
  "YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==";

/** A case of the suite: its name, request line, published signature, and headers and body if it has them. */
type Vector = [name: string, request: string, signature: string, headers?: Record<string, string>, body?: string];

const VECTORS: Vector[] = [
  ["get-vanilla", "GET /", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"],
  ["post-vanilla", "POST /", "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"],
  [
    "get-vanilla-query-order-key-case",
    "GET /?Param2=value2&Param1=value1",
    "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
  ],
  [
    "get-vanilla-query-order-value",
    "GET /?Param1=value2&Param1=value1",
    "5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694",
  ],
  ["get-vanilla-utf8-query", "GET /?\u1234=bar", "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"],
  [
    "get-unreserved",
    "GET /-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f",
  ],
  ["get-slashes", "GET //example//", "9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84"],
  [
    "get-header-value-trim",
    "GET /",
    "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736",
    { "My-Header1": " value1", "My-Header2": '"a   b   c"' },
  ],
  [
    "post-x-www-form-urlencoded",
    "POST /",
    "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
    { "Content-Type": "application/x-www-form-urlencoded" },
    "Param1=value1",
  ],
];

describe("signRequest: AWS's published SigV4 test vectors", () => {
  for (const [name, request, signature, headers = {}, body] of VECTORS) {
    it(name, () => {
      const [method = "", target = ""] = request.split(" ");
      const signed = signRequest({ ...SUITE, method, url: `https://example.amazonaws.com${target}`, headers, body });
      // The suite signs host, x-amz-date and every header of the request.
      const names = ["host", "x-amz-date", ...Object.keys(headers).map((h) => h.toLowerCase())].sort().join(";");
      assert.deepEqual(signed, {
        authorization: `AWS4-HMAC-SHA256 Credential=${SCOPE}, SignedHeaders=${names}, Signature=${signature}`,
        "x-amz-date": "20150830T123600Z",
      });
    });
  }

  it("get-vanilla again after 100 other secrets and days: a kept signing key signs as a fresh one", () => {
    const vanilla = () => signRequest({ ...SUITE, method: "GET", url: "https://example.amazonaws.com/" }).authorization;
    const published = `AWS4-HMAC-SHA256 Credential=${SCOPE}, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31`;
    assert.equal(vanilla(), published);
    const others = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: `other-secret-${i}` };
      const now = new Date(Date.UTC(2015, 7, 1 + (i % 20), 12, 36));
      others.add(
        signRequest({ ...SUITE, credentials, now, method: "GET", url: "https://example.amazonaws.com/" })
          .authorization ?? "",
      );
    }
    assert.equal(others.size, 100, "each secret and day signs differently");
    // Kept or derived again once the other keys pushed it out, the key signs the same.
    assert.equal(vanilla(), published);
    assert.equal(vanilla(), published);
  });

  it("a kept signing key is the one of its own secret, day, region and service", () => {
    const derived = (secret: string, day: string, region: string, service: string) =>
      [day, region, service, "aws4_request"].reduce<Buffer>(
        (k, part) => createHmac("sha256", k).update(part).digest(),
        Buffer.from(`AWS4${secret}`),
      );
    const cases = [
      ["secret-a", "2015-08-30", "us-east-1", "service"],
      ["secret-a", "2015-08-31", "us-east-1", "service"],
      ["secret-a", "2015-08-30", "us-east-1", "other"],
      ["secret-a", "2015-08-30", "eu-west-1", "service"],
      ["secret-b", "2015-08-30", "us-east-1", "service"],
      // The same characters split otherwise between region and service.
      ["secret-a", "2015-08-30", "r/s", "x"],
      ["secret-a", "2015-08-30", "r", "s/x"],
    ] as const;
    // Twice each: derived the first time, kept the second.
    for (let round = 0; round < 2; round++)
      for (const [secret, day, region, service] of cases) {
        const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: secret };
        const now = new Date(`${day}T12:36:00Z`);
        const parts = signatureParts({ ...SUITE, region, service, credentials, now, method: "GET", url: "https://h/" });
        const key = derived(secret, day.replaceAll("-", ""), region, service);
        const expected = createHmac("sha256", key).update(parts.stringToSign).digest("hex");
        assert.equal(parts.signature, expected, `${secret} ${day} ${region} ${service}, round ${round + 1}`);
      }
  });

  it("get-vanilla-query-order-key-case: the published canonical request, query sorted by name", () => {
    const parts = signatureParts({
      ...SUITE,
      method: "GET",
      url: "https://example.amazonaws.com/?Param2=value2&Param1=value1",
    });
    assert.equal(
      parts.canonicalRequest,
      `GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n${EMPTY_SHA256}`,
    );
    assert.match(
      parts.stringToSign,
      /^AWS4-HMAC-SHA256\n20150830T123600Z\n20150830\/us-east-1\/service\/aws4_request\n[0-9a-f]{64}$/,
    );
  });

  it("post-sts-header-before: a session token is sent and signed as x-amz-security-token", () => {
    const credentials = { ...SUITE.credentials, sessionToken: STS_TOKEN };
    const signed = signRequest({ ...SUITE, credentials, method: "POST", url: "https://example.amazonaws.com/" });
    assert.deepEqual(signed, {
      authorization: `AWS4-HMAC-SHA256 Credential=${SCOPE}, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead`,
      "x-amz-date": "20150830T123600Z",
      "x-amz-security-token": STS_TOKEN,
    });
  });
});

describe("signRequest: what the transport relies on", () => {
  const base = { ...SUITE, contentSha256: undefined, service: undefined };

  it("by default sends and signs the payload's hash, for the service execute-api", () => {
    const parts = signatureParts({
      ...base,
      method: "POST",
      url: "https://example.amazonaws.com/",
      body: "Param1=value1",
    });
    const hash = "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e"; // the suite's, of that body
    assert.equal(parts.headers["x-amz-content-sha256"], hash);
    assert.match(
      parts.headers.authorization ?? "",
      /\/execute-api\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date,/,
    );
    assert.ok(
      parts.canonicalRequest.endsWith(
        `\nx-amz-content-sha256:${hash}\nx-amz-date:20150830T123600Z\n\nhost;x-amz-content-sha256;x-amz-date\n${hash}`,
      ),
    );
    const bytes = signRequest({
      ...base,
      method: "POST",
      url: "https://example.amazonaws.com/",
      body: new TextEncoder().encode("Param1=value1"),
    });
    assert.deepEqual(bytes, parts.headers);
  });

  it("encodes each segment of the sent path once more, so an escaped slash or percent signs apart", () => {
    assert.equal(canonicalUri("/topics/a%25b%7Cc/route"), "/topics/a%2525b%257Cc/route");
    assert.equal(canonicalUri("/a%2Fb"), "/a%252Fb");
    assert.equal(canonicalUri("/a/b"), "/a/b");
    assert.equal(canonicalUri("/example%20space/"), "/example%2520space/");
    assert.equal(canonicalUri(""), "/");
    assert.equal(canonicalUri("/a/./b/../c"), "/a/c");
  });

  it("decodes and re-encodes query parameters strictly: + is a plus, a bare name has an empty value", () => {
    assert.equal(canonicalQuery("?q=a+b"), "q=a%2Bb");
    assert.equal(canonicalQuery("?q=a%20b&q=a%2Fb"), "q=a%20b&q=a%2Fb");
    assert.equal(canonicalQuery("b&a=1&&c=1=2"), "a=1&b=&c=1%3D2");
    assert.equal(canonicalQuery("?topic=x%25y%7Cz&a=(*)"), "a=%28%2A%29&topic=x%25y%7Cz");
    assert.equal(canonicalQuery(""), "");
  });

  it("leaves out hop-by-hop headers and user-agent, joins repeated names, takes an explicit host", () => {
    const parts = signatureParts({
      ...base,
      method: "GET",
      url: "https://example.amazonaws.com:8443/",
      headers: { "User-Agent": "x", Connection: "keep-alive", "X-A": "1", "x-a": " 2 ", Authorization: "Bearer t" },
    });
    assert.match(parts.canonicalRequest, /\nhost:example\.amazonaws\.com:8443\nx-a:1,2\n/);
    assert.match(parts.headers.authorization ?? "", /SignedHeaders=host;x-a;x-amz-content-sha256;x-amz-date,/);
    const proxied = signatureParts({
      ...base,
      method: "GET",
      url: "http://127.0.0.1:1/",
      headers: { Host: "api.example" },
    });
    assert.match(proxied.canonicalRequest, /\nhost:api\.example\n/);
  });
});

const KEYS: Credentials = {
  accessKeyId: "AKIDNIMBUS",
  secretAccessKey: "secret/key+EXAMPLE",
  sessionToken: "token/+=",
};

/** The server side of IAM auth, as API Gateway does it: recompute the signature from what arrived. */
function refusal(req: IncomingMessage, body: Buffer): string | undefined {
  const auth = req.headers.authorization;
  if (auth === undefined) return "Missing Authentication Token";
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/.exec(
      auth,
    );
  if (!m) return "Authorization header requires Credential, SignedHeaders and Signature";
  const [, keyId = "", region = "", service = "", signedList = ""] = m;
  if (keyId !== KEYS.accessKeyId || service !== "execute-api")
    return "The security token included in the request is invalid";
  if (req.headers["x-amz-security-token"] !== KEYS.sessionToken)
    return "The security token included in the request is invalid";
  const names = signedList.split(";");
  if (!names.includes("host") || !names.includes("x-amz-security-token")) return "host and token must be signed";
  const d = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(String(req.headers["x-amz-date"]));
  if (!d) return "missing x-amz-date";
  const now = new Date(`${d[1]}-${d[2]}-${d[3]}T${d[4]}:${d[5]}:${d[6]}Z`);
  if (Math.abs(now.getTime() - Date.now()) > 5 * 60_000) return "Signature expired";
  const payloadHash = createHash("sha256").update(body).digest("hex");
  if (req.headers["x-amz-content-sha256"] !== payloadHash) return "x-amz-content-sha256 does not match the body";
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = req.headers[name];
    if (typeof value !== "string") return `signed header ${name} is missing`;
    headers[name] = value;
  }
  const url = `http://${req.headers.host}${req.url}`;
  const expected = signRequest({ method: req.method ?? "", url, headers, body, region, credentials: KEYS, now });
  return expected.authorization === auth ? undefined : "The request signature we calculated does not match";
}

describe("HttpTransport with iam: every request signed", () => {
  let server: Server;
  let endpoint = "";
  const seen: { method: string; url: string; status: number; authorizations: number }[] = [];

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        const why = refusal(req, body);
        const authorizations = req.rawHeaders.filter(
          (h, i) => i % 2 === 0 && h.toLowerCase() === "authorization",
        ).length;
        seen.push({ method: req.method ?? "", url: req.url ?? "", status: why ? 403 : 200, authorizations });
        res.writeHead(why ? 403 : 200, { "content-type": "application/json" });
        res.end(JSON.stringify(why ? { message: why } : { ok: true, echo: body.toString("utf8") }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const transport = (options: Partial<TransportOptions>) => new HttpTransport({ endpoints: endpoint, ...options });

  it("signs GETs with escaped paths and queries, and POSTs with JSON bodies, that the server verifies", async () => {
    const t = transport({ iam: { region: "us-east-1", credentials: KEYS } });
    assert.deepEqual(await t.request("GET", "/topics/a%25b%7Cc/route?topic=x%25y%7Cz&b=(1)"), { ok: true, echo: "" });
    const body = { topic: "TopicTest", messages: [{ body: "aGk=", keys: ["ü ∑"] }] };
    assert.deepEqual(await t.request("POST", "/send", body), { ok: true, echo: JSON.stringify(body) });
    assert.deepEqual(await t.request("DELETE", "/topics/T"), { ok: true, echo: "" });
  });

  it("asks a credentials provider once per request", async () => {
    let calls = 0;
    const provider = async () => {
      calls += 1;
      return KEYS;
    };
    const t = transport({ iam: { region: "eu-west-1", credentials: provider } });
    await t.request("GET", "/cluster");
    await t.request("PUT", "/topics/T", { writeQueueNums: 4 });
    assert.equal(calls, 2);
  });

  it("replaces an Authorization of its own headers rather than sending two", async () => {
    const t = transport({ headers: { Authorization: "Bearer x" }, iam: { region: "us-east-1", credentials: KEYS } });
    await t.request("GET", "/health");
    assert.deepEqual(seen.at(-1), { method: "GET", url: "/health", status: 200, authorizations: 1 });
  });

  it("turns a refusal into NO_PERMISSION with the gateway's message, without trying the next endpoint", async () => {
    const before = seen.length;
    const wrong = new HttpTransport({
      endpoints: [endpoint, endpoint],
      iam: { region: "us-east-1", credentials: { ...KEYS, secretAccessKey: "not-it" } },
    });
    await assert.rejects(wrong.request("GET", "/cluster"), (err) => {
      assert.ok(isNimbusError(err, "NO_PERMISSION"));
      assert.equal(err.message, "The request signature we calculated does not match");
      return true;
    });
    await assert.rejects(transport({}).request("GET", "/cluster"), /Missing Authentication Token/);
    assert.equal(seen.length, before + 2);
  });

  it("fails with NO_PERMISSION, sending nothing, when the provider has no credentials", async () => {
    const before = seen.length;
    const failing = async (): Promise<Credentials> => {
      throw new Error("the SSO session has expired");
    };
    const t = transport({ iam: { region: "us-east-1", credentials: failing } });
    await assert.rejects(
      t.request("GET", "/cluster"),
      (err) => isNimbusError(err, "NO_PERMISSION") && /SSO/.test(err.message),
    );
    assert.equal(seen.length, before);
  });
});
