/**
 * @module Issue 26, finding 7: ACL changes are read-modify-writes made safe by a conditional put on the version
 * read (`{ versionIs: n }`), on the embedded store and on the AWS adapter (dynalite): twenty concurrent createAcl
 * calls for one subject keep all twenty entries, and concurrent user updates keep every change.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { ACL_TABLE, AclStore, AesGcmSealer } from "../../lib/broker/security/index.js";
import { openStorage } from "../../lib/dev/local-server.js";
import type { Storage } from "../../lib/storage/storage.js";
import { ConditionFailedError } from "../../lib/storage/table.js";
import { type Backing, MODE_LABEL, openBacking } from "../support/server-fixture.js";

for (const mode of ["local", "aws"] as const) {
  describe(`ACL changes at once lose nothing (${MODE_LABEL[mode]})`, () => {
    let backing: Backing;
    let storage: Storage;
    let store: AclStore;
    before(async () => {
      backing = await openBacking(mode);
      storage = await openStorage(
        backing.choice.kind === "aws" ? { ...backing.choice, provision: true } : backing.choice,
      );
      store = new AclStore(storage.table(ACL_TABLE), new AesGcmSealer(new Uint8Array(randomBytes(32))));
    });
    after(async () => {
      await storage.close();
      await backing.release();
    });

    it("a versioned put lands only on the version it read", async () => {
      const table = storage.table(ACL_TABLE);
      const key = { pk: "test", sk: "v" };
      await assert.rejects(table.put({ ...key, version: 1 }, { condition: { versionIs: 0 } }), ConditionFailedError);
      await table.put({ ...key, n: 1 });
      await table.put({ ...key, version: 1 }, { condition: { versionIs: 0 } });
      await assert.rejects(table.put({ ...key, version: 2 }, { condition: { versionIs: 0 } }), ConditionFailedError);
      await table.put({ ...key, version: 2 }, { condition: { versionIs: 1 } });
      assert.equal((await table.get(key, { consistent: true }))?.version, 2);
    });

    it("twenty concurrent createAcl calls for one subject keep all twenty entries", async () => {
      const resources = Array.from({ length: 20 }, (_, i) => `Topic:t${i}`);
      await Promise.all(
        resources.map((r) =>
          store.applyAcl({ subject: "User:alice", resources: [r], actions: ["Pub"], decision: "Allow" }, false),
        ),
      );
      const acl = await store.acl("User:alice");
      assert.deepEqual(acl?.entries.map((e) => e.resource).sort(), [...resources].sort());
      await Promise.all(resources.slice(0, 10).map((r) => store.deleteAcl("User:alice", r)));
      assert.deepEqual(
        (await store.acl("User:alice"))?.entries.map((e) => e.resource).sort(),
        resources.slice(10).sort(),
      );
    });

    it("concurrent user updates keep every change", async () => {
      await store.createUser({ username: "bob", userType: "Normal", userStatus: "enable" }, "bob-secret-1");
      await Promise.all([
        store.updateUser("bob", { userType: "Super" }),
        store.updateUser("bob", { userStatus: "disable" }),
        store.updateUser("bob", { password: "bob-secret-2" }),
      ]);
      const bob = await store.user("bob");
      assert.deepEqual(bob, { username: "bob", userType: "Super", userStatus: "disable", secret: "bob-secret-2" });
    });
  });
}
