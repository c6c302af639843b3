/**
 * @module Signatures and ACL rules end to end (local server with --auth): a replayed, tampered, expired or
 * wrongly keyed request is 401 and writes nothing; Deny beats Allow; a prefix rule covers its topics and no
 * others; a disabled user is refused; the SDK signs with its `credentials` option. On the embedded store and on
 * the AWS adapters (dynalite + s3rver), where users and ACLs live in the acl table.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Message } from "../../lib/client/message.js";
import { Producer } from "../../lib/client/producer/producer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { signNimbusRequest } from "../../lib/core/request-signing.js";
import {
  type AuthServer,
  type Call,
  call,
  createUserAndTopics,
  ROOT,
  signedHeaders,
  startAuthServer,
} from "../support/auth-server.js";
import { MODE_LABEL } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const sendTo = (topic: string): Call => ({
  method: "POST",
  path: "/send",
  body: { topic, messages: [{ body: b64("x") }] },
});

for (const mode of ["local", "aws"] as const)
  describe(`signatures and ACL rules (${MODE_LABEL[mode]})`, () => {
    let t: AuthServer;
    let url: string;
    const alice = { accessKey: "alice", secretKey: "alice-secret-1" };
    const writes = () => {
      const c = t.server.storage.counter.snapshot();
      return c.tableWrites + c.objectPuts + c.objectDeletes;
    };
    const acl = (resources: string[], actions: string[], decision: "Allow" | "Deny") =>
      call(
        url,
        { method: "POST", path: "/acl/acls", body: { subject: "User:alice", resources, actions, decision } },
        ROOT,
      );

    before(async () => {
      t = await startAuthServer(mode);
      url = t.server.url;
      await createUserAndTopics(url, alice, ["orders-eu", "orders-us", "orders-secret", "billing"]);
      assert.equal((await acl(["Topic:orders-*"], ["Pub", "Get"], "Allow")).status, 200);
      assert.equal((await acl(["Topic:orders-secret"], ["Pub"], "Deny")).status, 200);
    });
    after(() => t.close());

    it("a prefix rule covers the topics it starts, not others", async () => {
      assert.equal((await call(url, sendTo("orders-eu"), alice)).status, 200);
      assert.equal((await call(url, sendTo("orders-us"), alice)).status, 200);
      const other = await call(url, sendTo("billing"), alice);
      assert.equal(other.status, 403);
      assert.match(other.body.message ?? "", /User:alice has no Pub permission on Topic:billing/);
    });

    it("Deny beats Allow: orders-secret matches the allowed prefix and a deny", async () => {
      const before = writes();
      const denied = await call(url, sendTo("orders-secret"), alice);
      assert.equal(denied.status, 403);
      assert.match(denied.body.message ?? "", /Pub permission on Topic:orders-secret \(an ACL entry denies it\)/);
      assert.equal(writes(), before);
      // The deny is for Pub only: Get is still allowed by the prefix rule.
      assert.equal((await call(url, { method: "GET", path: "/topics/orders-secret/status" }, alice)).status, 200);
    });

    it("PUT /topics needs Create for a new topic and Update for an existing one, not either", async () => {
      assert.equal((await acl(["Topic:fresh-*"], ["Create"], "Allow")).status, 200);
      assert.equal((await acl(["Topic:orders-us", "Topic:upd-new"], ["Update"], "Allow")).status, 200);
      const put = (topic: string, body: object) => call(url, { method: "PUT", path: `/topics/${topic}`, body }, alice);
      assert.equal((await put("fresh-1", {})).status, 200);
      const before = writes();
      // Create-only may not change a topic that exists (perm 2, one queue), nor Update-only create one.
      const update = await put("fresh-1", { perm: 2, readQueueNums: 1, writeQueueNums: 1 });
      assert.equal(update.status, 403);
      assert.match(update.body.message ?? "", /no Update permission on Topic:fresh-1/);
      const create = await put("upd-new", {});
      assert.equal(create.status, 403);
      assert.match(create.body.message ?? "", /no Create permission on Topic:upd-new/);
      // Only the two requests' nonces (replay-proof routes record theirs once the endpoint's ACL check passed;
      // the route refused on stored state after that, security.md "Replays").
      assert.equal(writes(), before + 2);
      assert.equal((await put("orders-us", { perm: 6 })).status, 200);
    });

    it("offsets need the topic as well as the group; a group's progress lists only the topics the caller may see", async () => {
      const offsets = (topic: string) => ({
        method: "PUT" as const,
        path: `/offsets/g-1/${topic}`,
        body: { offsetTable: [{ brokerName: "broker-a", queueId: 0, offset: 0 }] },
      });
      for (const topic of ["orders-eu", "billing"]) assert.equal((await call(url, offsets(topic), ROOT)).status, 200);
      assert.equal((await acl(["Group:g-1"], ["Sub", "Get"], "Allow")).status, 200);
      // Group access alone no longer reveals another topic's offsets, owners or counts.
      for (const path of [
        "/offsets/g-1/billing",
        "/offsets/g-1/billing/owners",
        "/groups/g-1/progress?topic=billing",
      ]) {
        const refused = await call(url, { method: "GET", path }, alice);
        assert.equal(refused.status, 403, path);
        assert.match(refused.body.message ?? "", /permission on Topic:billing/);
      }
      const before = writes();
      assert.equal((await call(url, offsets("billing"), alice)).status, 403);
      assert.equal(writes(), before);
      assert.equal((await call(url, { method: "GET", path: "/offsets/g-1/orders-eu" }, alice)).status, 200);
      const progress = await call(url, { method: "GET", path: "/groups/g-1/progress" }, alice);
      assert.equal(progress.status, 200);
      const topics = new Set((progress.body as { rows: { topic: string }[] }).rows.map((r) => r.topic));
      assert.deepEqual([...topics], ["orders-eu"]);
      const all = await call(url, { method: "GET", path: "/groups/g-1/progress" }, ROOT);
      assert.deepEqual(
        new Set((all.body as { rows: { topic: string }[] }).rows.map((r) => r.topic)),
        new Set(["orders-eu", "billing"]),
      );
    });

    it("refuses a replayed request (same signature and nonce) with 401, and it writes nothing", async () => {
      const request = sendTo("orders-eu");
      const headers = signedHeaders(url, request, alice);
      assert.equal((await call(url, request, alice, headers)).status, 200);
      const before = writes();
      const replay = await call(url, request, alice, headers);
      assert.equal(replay.status, 401);
      assert.equal(replay.body.code, "UNAUTHENTICATED");
      assert.match(replay.body.message ?? "", /replay/);
      assert.equal(writes(), before);
    });

    it("refuses tampered requests: another body, another path, another signed header", async () => {
      const request = sendTo("orders-eu");
      const headers = signedHeaders(url, request, alice);
      const before = writes();
      const body = await call(url, sendTo("orders-us"), alice, headers);
      assert.equal(body.status, 401);
      const path = await call(url, { ...request, path: "/send?x=1" }, alice, headers);
      assert.equal(path.status, 401);
      const nonce = await call(url, request, alice, { ...headers, "x-nimbus-nonce": "0123456789abcdef0123" });
      assert.equal(nonce.status, 401);
      assert.equal(writes(), before);
    });

    it("a query's + and %2B do not share a signature (the handler reads + as a space)", async () => {
      const signed = { method: "GET" as const, path: "/groups/g-1/progress?topic=orders%2Beu" };
      const headers = signedHeaders(url, signed, ROOT);
      const swapped = await call(url, { ...signed, path: "/groups/g-1/progress?topic=orders+eu" }, ROOT, headers);
      assert.equal(swapped.status, 401);
      assert.equal(swapped.body.code, "UNAUTHENTICATED");
    });

    it("refuses a signature older than 15 minutes, one from the future, and a wrong secret", async () => {
      const request = sendTo("orders-eu");
      const payload = JSON.stringify(request.body);
      const at = (offsetMs: number) => ({
        "content-type": "application/json",
        ...signNimbusRequest({
          method: "POST",
          url: `${url}/send`,
          headers: { "content-type": "application/json" },
          body: payload,
          credentials: alice,
          now: new Date(Date.now() + offsetMs),
        }),
      });
      for (const offset of [-16 * 60_000, 16 * 60_000]) {
        const answer = await call(url, request, alice, at(offset));
        assert.equal(answer.status, 401);
        assert.match(answer.body.message ?? "", /more than 15 minutes/);
      }
      // Within the window a signature is fine.
      assert.equal((await call(url, request, alice, at(-5 * 60_000))).status, 200);
      const wrong = await call(url, request, { accessKey: "alice", secretKey: "not-the-secret" });
      assert.equal(wrong.status, 401);
      const unknown = await call(url, request, { accessKey: "mallory", secretKey: "whatever-1" });
      assert.equal(unknown.status, 401);
      assert.equal(unknown.body.message, wrong.body.message, "an unknown user and a wrong secret look the same");
    });

    it("refuses a disabled user, and accepts it again once enabled", async () => {
      const disable = (userStatus: string) =>
        call(url, { method: "PUT", path: "/acl/users/alice", body: { userStatus } }, ROOT);
      assert.equal((await disable("disable")).status, 200);
      const refused = await call(url, sendTo("orders-eu"), alice);
      assert.equal(refused.status, 401);
      assert.match(refused.body.message ?? "", /disabled/);
      assert.equal((await disable("enable")).status, 200);
      assert.equal((await call(url, sendTo("orders-eu"), alice)).status, 200);
    });

    it("never answers a user's secret, and stores it sealed", async () => {
      const user = await call(url, { method: "GET", path: "/acl/users/alice" }, ROOT);
      assert.deepEqual(user.body, { username: "alice", userType: "Normal", userStatus: "enable" });
      const item = await t.server.storage
        .table({ name: "acl", sortKeyType: "string", ttlAttribute: "expiresAt" })
        .get({ pk: "user", sk: "alice" });
      assert.ok(item);
      assert.ok(!JSON.stringify(item).includes(alice.secretKey), "the stored item does not hold the plain secret");
    });

    it("the SDK signs with its credentials option; without them it gets UNAUTHENTICATED", async () => {
      const producer = new Producer({
        producerGroup: "PG",
        endpoints: url,
        credentials: alice,
        sendMsgTimeout: TEST_TIMEOUT_MS,
      });
      await acl(["Group:PG"], ["Pub"], "Allow");
      await acl(["Topic:orders-eu"], ["Pub", "Sub", "Get"], "Allow");
      await producer.start();
      try {
        const result = await producer.send(new Message("orders-eu", "TagA", new TextEncoder().encode("hello")));
        assert.equal(result.sendStatus, "SEND_OK");
      } finally {
        await producer.shutdown();
      }
      const anonymous = new NimbusApi({ endpoints: url, timeoutMs: TEST_TIMEOUT_MS });
      await assert.rejects(anonymous.listTopics(), (err: Error & { code?: string }) => err.code === "UNAUTHENTICATED");
    });
  });
