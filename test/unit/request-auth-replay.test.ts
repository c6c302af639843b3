/**
 * The replay cache of the auth gate : a signed user who floods the cache must not
 * make a captured request acceptable again; a full cache answers SYSTEM_BUSY; the master and its slaves share one.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { ACL_TABLE, AclStore } from "../../lib/broker/security/acl-store.js";
import { AesGcmSealer } from "../../lib/broker/security/secret-sealer.js";
import { ErrorCode, NimbusError } from "../../lib/core/errors.js";
import type { ReceivedRequest } from "../../lib/core/request-signing.js";
import { RequestAuth } from "../../lib/http/authorize.js";
import { ReplayGuard } from "../../lib/http/replay-guard.js";
import { type AclFixture, openAclFixture, receivedSigned } from "../support/acl-gate.js";

const ROOT = { accessKey: "root", secretKey: "root-secret-123" };
const MALLORY = { accessKey: "mallory", secretKey: "mallory-secret-1" };

describe("the replay cache", () => {
  let acl: AclFixture;
  let t = Date.now();
  before(async () => {
    acl = await openAclFixture([MALLORY]);
  });
  after(async () => acl.storage.close());

  const signed = (credentials: { accessKey: string; secretKey: string }, path: string): ReceivedRequest =>
    receivedSigned({ method: "GET", path, credentials, now: new Date(t) });
  const auth = (replay: ReplayGuard) =>
    new RequestAuth({ store: acl.store, root: { username: "root", password: ROOT.secretKey }, now: () => t, replay });
  const refusedWith = (code: ErrorCode) => (err: unknown) => err instanceof NimbusError && err.code === code;

  it("a flood of other nonces does not evict a young one: the flood gets SYSTEM_BUSY, the replay stays refused", async () => {
    const gate = auth(new ReplayGuard(50));
    const captured = signed(ROOT, "/acl/users");
    await gate.authenticate(captured);
    for (let i = 0; i < 49; i++) await gate.authenticate(signed(MALLORY, "/cluster"));
    await assert.rejects(gate.authenticate(signed(MALLORY, "/cluster")), refusedWith(ErrorCode.SYSTEM_BUSY));
    t += 60_000;
    await assert.rejects(gate.authenticate(captured), refusedWith(ErrorCode.UNAUTHENTICATED));
    // Past twice the skew the old nonces go (a request that old is refused by its date): room again.
    t += 31 * 60_000;
    await gate.authenticate(signed(MALLORY, "/cluster"));
  });

  it("servers sharing one guard (master and --slaves) refuse a request another of them accepted", async () => {
    const shared = new ReplayGuard();
    const master = auth(shared);
    const slave = auth(shared);
    const request = signed(ROOT, "/acl/users");
    await master.authenticate(request);
    await assert.rejects(slave.authenticate(request), refusedWith(ErrorCode.UNAUTHENTICATED));
  });
});

describe("user name probes (review finding 4)", () => {
  it("an unknown user is cached like a known one, and an unreadable secret is the same 401", async () => {
    const { store, storage } = await openAclFixture([{ accessKey: "known", secretKey: "known-secret-1" }]);
    try {
      const now = Date.now();
      const gate = new RequestAuth({ store, now: () => now });
      const probe = (accessKey: string) =>
        gate.authenticate(
          receivedSigned({
            method: "GET",
            path: "/cluster",
            credentials: { accessKey, secretKey: "guess-secret-1" },
            now: new Date(now),
          }),
        );
      const reads = () => storage.counter.snapshot().tableReads;
      for (const name of ["known", "nobody"]) {
        await assert.rejects(probe(name), /signature does not match/);
        const before = reads();
        await assert.rejects(probe(name), /signature does not match/);
        assert.equal(reads(), before, `${name}: the second probe is answered from the cache`);
      }
      // A secret sealed under another key cannot be opened: the same 401, not a 500 naming the user.
      const other = new AclStore(storage.table(ACL_TABLE), new AesGcmSealer(new Uint8Array(randomBytes(32))));
      await other.createUser({ username: "sealed", userType: "Normal", userStatus: "enable" }, "sealed-secret-1");
      await assert.rejects(probe("sealed"), (err: unknown) => {
        assert.ok(err instanceof NimbusError);
        assert.equal(err.code, ErrorCode.UNAUTHENTICATED);
        assert.doesNotMatch(err.message, /sealed/);
        return true;
      });
    } finally {
      await storage.close();
    }
  });
});
