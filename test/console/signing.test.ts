/**
 * The console's SigV4 signer (WebCrypto, lib/console/signing.ts) signs exactly as the SDK's (node:crypto,
 * lib/client/transport/sigv4.ts, itself checked against AWS's test vectors): same headers for the same requests,
 * including paths and queries that need encoding, bodies, and session tokens. And the console bundle
 * committed in lib/console/build is what `npm run build:console` builds now.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { signRequest } from "../../lib/client/transport/sigv4.js";
import { staleFiles } from "../../lib/console/build-console.js";
import { nimbusHeaders, regionOfApiUrl, signerFor, sigV4Headers } from "../../lib/console/signing.js";
import { signNimbusRequest } from "../../lib/core/request-signing.js";

const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const base = "https://abc123.execute-api.eu-west-1.amazonaws.com";

describe("console signing", () => {
  const cases = [
    { method: "GET", url: `${base}/cluster`, body: undefined, headers: {} },
    { method: "GET", url: `${base}/groups/g%25x/progress?topic=T%20A&b=2&a=1`, body: undefined, headers: {} },
    {
      method: "POST",
      url: `${base}/send`,
      body: JSON.stringify({ topic: "T", messages: [{ body: "aGk=" }] }),
      headers: { "content-type": "application/json" },
    },
    { method: "DELETE", url: `${base}/topics/Orders`, body: undefined, headers: {} },
  ];
  for (const sessionToken of [undefined, "FwoGZXIvYXdzEXAMPLE"]) {
    for (const c of cases) {
      it(`${c.method} ${c.url.slice(base.length)}${sessionToken ? " with a session token" : ""}: same as the SDK`, async () => {
        const now = new Date("2026-11-30T12:34:56Z");
        const creds = { ...credentials, ...(sessionToken ? { sessionToken } : {}) };
        const console = await sigV4Headers(c, { region: "eu-west-1", service: "execute-api", ...creds }, now);
        const sdk = signRequest({ ...c, region: "eu-west-1", credentials: creds, now });
        assert.deepEqual(console, sdk);
      });
    }
  }

  for (const c of cases) {
    it(`${c.method} ${c.url.slice(base.length)}: a Nimbus signature the same as the SDK's`, async () => {
      const now = new Date("2026-11-30T12:34:56Z");
      const nonce = "5f0c6f5e-2a1b-4c3d-9e8f-0123456789ab";
      const user = { accessKey: "console-user", secretKey: "s3cret-of-the-user" };
      const console = await nimbusHeaders(c, { kind: "nimbus", ...user }, now, nonce);
      assert.deepEqual(console, signNimbusRequest({ ...c, credentials: user, now, nonce }));
    });
  }

  it("no auth adds no header; the region comes from an API Gateway URL", async () => {
    assert.deepEqual(await signerFor({ kind: "none" })({ method: "GET", url: base, headers: {}, body: undefined }), {});
    assert.equal(regionOfApiUrl(`${base}/cluster`), "eu-west-1");
    assert.equal(regionOfApiUrl("http://127.0.0.1:9876"), undefined);
  });
});

describe("console bundle", () => {
  it("lib/console/build is what npm run build:console builds from the sources", async () => {
    assert.deepEqual(await staleFiles(), [], "run npm run build:console and commit lib/console/build");
  });
});
