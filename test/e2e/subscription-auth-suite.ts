/**
 * @module ACLs of the subscription endpoints (local server with auth), on either storage mode: creating needs Sub on the
 * topic and the group and Create on the group; replacing needs Update instead; reading Sub or Get on the group;
 * deleting Delete; a traced subscription Pub on its trace topic (and Create on it when missing), since the broker
 * writes the traces on the user's behalf. Each refusal is 403 and writes nothing.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type AuthServer, call, ROOT, startAuthServer } from "../support/auth-server.js";
import { dispatchOf, MODE_LABEL, type ServerMode } from "../support/server-fixture.js";

export function subscriptionAuthSuite(mode: ServerMode): void {
  describe(`subscription ACLs (${MODE_LABEL[mode]})`, () => {
    let t: AuthServer;
    let url: string;
    const bob = { accessKey: "bob", secretKey: "bob-secret-12" };
    const definition = {
      topic: "payments",
      target: { type: "http", url: "https://hooks.example.com/pay", secret: "whsec-0123456789abcdef" },
    };
    const writes = () => {
      const c = t.server.storage.counter.snapshot();
      return c.tableWrites + c.objectPuts + c.objectDeletes;
    };
    const grant = (resources: string[], actions: string[]) =>
      call(
        url,
        { method: "POST", path: "/acl/acls", body: { subject: "User:bob", resources, actions, decision: "Allow" } },
        ROOT,
      );
    const put = () => call(url, { method: "PUT", path: "/subscriptions/PayHook", body: definition }, bob);
    const refusedWithoutWrites = async (request: () => ReturnType<typeof put>, pattern: RegExp) => {
      // A saved subscription's first delivery round (it records the group) is over before writes are counted.
      await dispatchOf(t.server).settled();
      const before = writes();
      const answer = await request();
      assert.equal(answer.status, 403, JSON.stringify(answer.body));
      assert.match(answer.body.message ?? "", pattern);
      assert.equal(writes(), before, "a refused request wrote");
    };

    before(async () => {
      t = await startAuthServer(mode);
      url = t.server.url;
      const user = { method: "POST" as const, path: "/acl/users", body: { username: "bob", password: bob.secretKey } };
      assert.equal((await call(url, user, ROOT)).status, 200);
      assert.equal((await call(url, { method: "PUT", path: "/topics/payments", body: {} }, ROOT)).status, 200);
    });
    after(() => t.close());

    it("create: Sub on the topic, Sub on the group, then Create on the group", async () => {
      await refusedWithoutWrites(put, /Sub permission on Topic:payments/);
      assert.equal((await grant(["Topic:payments"], ["Sub"])).status, 200);
      await refusedWithoutWrites(put, /Sub permission on Group:PayHook/);
      assert.equal((await grant(["Group:PayHook"], ["Sub", "Update"])).status, 200);
      await refusedWithoutWrites(put, /Create permission on Group:PayHook/);
      assert.equal((await grant(["Group:PayHook"], ["Sub", "Create"])).status, 200);
      assert.equal((await put()).status, 200);
    });

    it("replace needs Update (Create alone is not enough); read needs Sub or Get; delete needs Delete", async () => {
      await refusedWithoutWrites(put, /Update permission on Group:PayHook/);
      assert.equal((await grant(["Group:PayHook"], ["Sub", "Update"])).status, 200);
      assert.equal((await put()).status, 200);
      assert.equal((await call(url, { method: "GET", path: "/subscriptions/PayHook" }, bob)).status, 200);
      await refusedWithoutWrites(
        () => call(url, { method: "DELETE", path: "/subscriptions/PayHook" }, bob),
        /Delete permission on Group:PayHook/,
      );
      assert.equal((await call(url, { method: "DELETE", path: "/subscriptions/PayHook" }, ROOT)).status, 200);
    });

    it("a traced subscription needs Pub on its trace topic, and Create on it when it does not exist", async () => {
      const traced = (traceTopic: string) => () =>
        call(
          url,
          {
            method: "PUT",
            path: "/subscriptions/PayTraced",
            body: { ...definition, enableMsgTrace: true, customizedTraceTopic: traceTopic },
          },
          bob,
        );
      assert.equal((await grant(["Group:PayTraced"], ["Sub", "Create", "Update"])).status, 200);
      // Another tenant's topic: bob may not write there, so the broker may not write there for him.
      assert.equal((await call(url, { method: "PUT", path: "/topics/ledger", body: {} }, ROOT)).status, 200);
      await refusedWithoutWrites(traced("ledger"), /Pub permission on Topic:ledger/);
      // A topic that does not exist: the first record would create it.
      await refusedWithoutWrites(traced("pay-traces"), /Pub permission on Topic:pay-traces/);
      assert.equal((await grant(["Topic:pay-traces"], ["Pub"])).status, 200);
      await refusedWithoutWrites(traced("pay-traces"), /Create permission on Topic:pay-traces/);
      assert.equal((await grant(["Topic:pay-traces"], ["Pub", "Create"])).status, 200);
      assert.equal((await traced("pay-traces")()).status, 200);
      assert.ok(!(await t.server.context.broker.topics.exists("ledger-traces")), "nothing else created");
    });
  });
}
