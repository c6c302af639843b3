/**
 * The auth gate's second look at a request whose headers it checked before reading the body (the local server's
 * precheck): only the body is compared with the hash the signature covers, and a body other than the signed one
 * is refused; without the precheck the whole signature is computed again.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ErrorCode, NimbusError } from "../../lib/core/errors.js";
import type { ReceivedRequest } from "../../lib/core/request-signing.js";
import { RequestAuth } from "../../lib/http/authorize.js";
import type { Storage } from "../../lib/storage/index.js";
import { openAclFixture, receivedSigned } from "../support/acl-gate.js";

const ALICE = { accessKey: "alice", secretKey: "alice-secret-1" };

describe("authenticate after checkHeaders", () => {
  let storage: Storage;
  let gate: RequestAuth;
  before(async () => {
    const acl = await openAclFixture([ALICE]);
    storage = acl.storage;
    gate = new RequestAuth({ store: acl.store });
  });
  after(async () => storage.close());

  /** A POST of `signedBody` signed by `credentials`, carrying `sentBody` (the same unless a test swaps it). */
  const post = (signedBody: string, sentBody = signedBody, credentials = ALICE): ReceivedRequest =>
    receivedSigned({ method: "POST", path: "/send", credentials, body: signedBody, sentBody });
  const unauthenticated = (err: unknown) => err instanceof NimbusError && err.code === ErrorCode.UNAUTHENTICATED;

  it("accepts the signed body and refuses another one under the same headers", async () => {
    const signed = post('{"topic":"a"}');
    await gate.checkHeaders({ ...signed, body: new Uint8Array(0) });
    assert.equal((await gate.authenticate(signed, true)).username, "alice");
    const swapped = post('{"topic":"b"}', '{"topic":"c"}');
    await gate.checkHeaders({ ...swapped, body: new Uint8Array(0) });
    await assert.rejects(gate.authenticate(swapped, true), unauthenticated);
  });

  it("refuses before the body when the claimed hash is not the signed one", async () => {
    const signed = post('{"topic":"a"}');
    const claimed = {
      ...signed,
      header: (n: string) => (n === "x-amz-content-sha256" ? "0".repeat(64) : signed.header(n)),
    };
    await assert.rejects(gate.checkHeaders(claimed), unauthenticated);
  });

  it("does not sign the request again: with the headers checked, the body's hash is what is left to compare", async () => {
    // A wrong secret's signature that checkHeaders would refuse: the flag says it passed, so only the body counts.
    const forged = post('{"topic":"a"}', '{"topic":"a"}', { accessKey: "alice", secretKey: "not-her-secret" });
    await assert.rejects(gate.checkHeaders({ ...forged, body: new Uint8Array(0) }), unauthenticated);
    await assert.rejects(gate.authenticate(forged), unauthenticated);
    assert.equal((await gate.authenticate(forged, true)).username, "alice");
  });
});
