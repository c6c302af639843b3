/**
 * The auth gate's cache of users read from the ACL store is bounded: requests signed with made-up access keys
 * (each an unknown user, cached as such) never hold more than `maxCachedUsers` entries; the one written longest
 * ago is forgotten first and read again when asked, while the newest are still answered from the cache; a key no
 * user name can be is unknown without a read and takes no place.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { AclStore } from "../../lib/broker/security/index.js";
import { ErrorCode, NimbusError } from "../../lib/core/errors.js";
import { RequestAuth } from "../../lib/http/authorize.js";
import type { Storage } from "../../lib/storage/index.js";
import { openAclFixture, receivedSigned } from "../support/acl-gate.js";

const CACHED = 3;

describe("the auth gate's user cache", () => {
  let storage: Storage;
  let gate: RequestAuth;
  /** The user names read from the store, in order. */
  const reads: string[] = [];
  before(async () => {
    const acl = await openAclFixture([{ accessKey: "alice", secretKey: "alice-secret-1" }]);
    storage = acl.storage;
    // The store itself, with its user reads recorded.
    const counting = new Proxy(acl.store, {
      get(target, name) {
        if (name === "user")
          return (username: string) => {
            reads.push(username);
            return target.user(username);
          };
        const value: unknown = Reflect.get(target, name, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) satisfies AclStore;
    gate = new RequestAuth({ store: counting, cacheMs: 60_000, maxCachedUsers: CACHED });
  });
  after(async () => storage.close());

  const unauthenticated = (err: unknown) => err instanceof NimbusError && err.code === ErrorCode.UNAUTHENTICATED;
  const signedBy = (accessKey: string) =>
    receivedSigned({ method: "POST", path: "/send", credentials: { accessKey, secretKey: "made-up" }, body: "{}" });

  it("keeps at most maxCachedUsers, forgetting the one written longest ago", async () => {
    const names = Array.from({ length: CACHED + 2 }, (_, i) => `nobody-${i}`);
    for (const name of names) await assert.rejects(gate.authenticate(signedBy(name)), unauthenticated);
    assert.deepEqual(reads, names, "each unknown name was read once");
    reads.length = 0;
    // The newest three are still cached; the first two were forgotten to make room and are read again.
    for (const name of names.slice(-CACHED)) await assert.rejects(gate.authenticate(signedBy(name)), unauthenticated);
    assert.deepEqual(reads, [], "the newest names are answered from the cache");
    await assert.rejects(gate.authenticate(signedBy("nobody-0")), unauthenticated);
    assert.deepEqual(reads, ["nobody-0"], "the oldest name was forgotten");
  });

  it("answers an access key no user can have (past 64 characters) as unknown, with no read and nothing cached", async () => {
    reads.length = 0;
    await assert.rejects(gate.authenticate(signedBy("k".repeat(65))), unauthenticated);
    assert.deepEqual(reads, [], "the long key was not read");
    // The cache holds nobody-3, nobody-4 and nobody-0, nobody-3 written longest ago: a cached long key would have
    // pushed it out.
    await assert.rejects(gate.authenticate(signedBy("nobody-3")), unauthenticated);
    assert.deepEqual(reads, [], "nobody-3 is still cached: the long key took no place");
  });
});
