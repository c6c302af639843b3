/**
 * @module The remoting door with auth on (`nimbus dev --auth`), on both storage modes: RocketMQ's 4.9.8 client
 * signing with rocketmq-acl's AclClientRPCHook (test/interop/remoting-java, AclScenarios.java) as a Nimbus user
 * whose ACL allows the topic and groups sends, and its push and lite-pull consumers receive, and it views
 * (by offset message id and by message id) and queries by key what it sent; a wrong secret, an
 * unknown access key and a user without Pub on the topic are refused NO_PERMISSION (16) and nothing is stored (read
 * over HTTP). Frame by frame: unsigned requests are refused, name-server route lookups included; a request signed
 * here as the hook signs it is served, and the same with a changed body or field is refused; an offset commit and a
 * view by offset message id are refused to a user without Sub, and the commit is not stored; every served request
 * code has an ACL rule (access.ts).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import type { NimbusCredentials } from "../../lib/core/request-signing.js";
import { ACCESS } from "../../lib/remoting/access.js";
import { HANDLERS } from "../../lib/remoting/handlers.js";
import { RequestCode, ResponseCode } from "../../lib/remoting/index.js";
import { remotingSignature, signedContent } from "../../lib/remoting/signature.js";
import { storedMessages } from "../grpc/producer-suite.js";
import { type AuthServer, call, ROOT, startAuthServer } from "../support/auth-server.js";
import { remotingClientUnavailable, runRemotingClient } from "../support/remoting-java.js";
import { RawRemoting } from "../support/remoting-raw.js";
import { modeUnavailable, uniqueName } from "../support/server-fixture.js";

const ALICE: NimbusCredentials = { accessKey: "alice", secretKey: "alice-secret-123" };
const BOB: NimbusCredentials = { accessKey: "bob", secretKey: "bob-secret-12345" };

/** The ext fields and body signed as AclClientRPCHook signs them. */
function signed(who: NimbusCredentials, extFields: Record<string, string>, body?: Uint8Array) {
  const fields = { ...extFields, AccessKey: who.accessKey };
  return { ...fields, Signature: remotingSignature(who.secretKey, signedContent(fields, body)) };
}

describe("remoting access rules", () => {
  it("every request code the door serves has an ACL rule", () => {
    for (const code of HANDLERS.keys()) assert.ok(ACCESS.has(code), `request code ${code} has an ACL rule`);
  });
});

for (const mode of ["local", "aws"] as const) {
  describe(`the remoting door with auth on (${mode})`, { skip: modeUnavailable(mode) }, () => {
    let auth: AuthServer;
    const topic = uniqueName("AclTopic");
    const refusedTopic = uniqueName("AclRefused");
    const producerGroup = uniqueName("AclProducer");
    const pushGroup = uniqueName("AclPush");
    const liteGroup = uniqueName("AclLite");
    const namesrv = () => `127.0.0.1:${auth.server.port}`;
    const root = () => new NimbusApi({ endpoints: auth.server.url, timeoutMs: 10_000, credentials: ROOT });
    const asRoot = async (c: Parameters<typeof call>[1]) => {
      const answer = await call(auth.server.url, c, ROOT);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
    };

    before(async () => {
      auth = await startAuthServer(mode);
      for (const t of [topic, refusedTopic])
        await asRoot({ method: "PUT", path: `/topics/${t}`, body: { readQueueNums: 2, writeQueueNums: 2 } });
      for (const u of [ALICE, BOB])
        await asRoot({ method: "POST", path: "/acl/users", body: { username: u.accessKey, password: u.secretKey } });
      const groups = [producerGroup, pushGroup, liteGroup].map((g) => `Group:${g}`);
      await asRoot({
        method: "POST",
        path: "/acl/acls",
        body: {
          subject: "User:alice",
          resources: [`Topic:${topic}`, `Topic:${refusedTopic}`, ...groups],
          actions: ["Pub", "Sub"],
          decision: "Allow",
        },
      });
      // Bob may read the topic (its route too) and produce in the group, but not send to the topic.
      await asRoot({
        method: "POST",
        path: "/acl/acls",
        body: {
          subject: "User:bob",
          resources: [`Topic:${refusedTopic}`, `Group:${producerGroup}`],
          actions: ["Sub"],
          decision: "Allow",
        },
      });
    });
    after(() => auth.close());

    it("unsigned requests are refused NO_PERMISSION, route lookups included; a signed one is served", async () => {
      const raw = await RawRemoting.open(auth.server.port);
      try {
        const route = await raw.request({ code: RequestCode.GET_ROUTEINFO_BY_TOPIC, extFields: { topic } });
        assert.equal(route.code, ResponseCode.NO_PERMISSION);
        assert.match(route.remark ?? "", /not signed/);
        const cluster = await raw.request({ code: RequestCode.GET_BROKER_CLUSTER_INFO });
        assert.equal(cluster.code, ResponseCode.NO_PERMISSION);
        const ok = await raw.request({ code: RequestCode.GET_ROUTEINFO_BY_TOPIC, extFields: signed(ALICE, { topic }) });
        assert.equal(ok.code, ResponseCode.SUCCESS, ok.remark);
        // A user without Get on Cluster: refused as over HTTP, naming what is missing, bounded.
        const noCluster = await raw.request({
          code: RequestCode.GET_BROKER_CLUSTER_INFO,
          extFields: signed(ALICE, {}),
        });
        assert.equal(noCluster.code, ResponseCode.NO_PERMISSION);
        assert.match(noCluster.remark ?? "", /User:alice has no Get permission on Cluster/);
        const long = await raw.request({
          code: RequestCode.GET_ROUTEINFO_BY_TOPIC,
          extFields: signed(ALICE, { topic: "x".repeat(100_000) }),
        });
        assert.equal(long.code, ResponseCode.NO_PERMISSION);
        assert.ok((long.remark ?? "").length <= 1100, "the remark is bounded");
        // A topic name the create would refuse is refused as such before the store is asked whether it exists.
        const badCreate = await raw.request({
          code: RequestCode.UPDATE_AND_CREATE_TOPIC,
          extFields: signed(ALICE, { topic: "x".repeat(100_000), readQueueNums: "1", writeQueueNums: "1" }),
        });
        assert.equal(badCreate.code, ResponseCode.MESSAGE_ILLEGAL, badCreate.remark);
        assert.ok((badCreate.remark ?? "").length <= 1100, "the remark is bounded");
      } finally {
        raw.close();
      }
    });

    it("a changed field, a changed body or a forged signature is refused and writes nothing", async () => {
      const raw = await RawRemoting.open(auth.server.port);
      try {
        const hb = (clientID: string) => ({ clientID, producerDataSet: [{ groupName: producerGroup }] });
        const body = new TextEncoder().encode(JSON.stringify(hb("raw-1")));
        const fields = signed(ALICE, { extra: "a" }, body);
        const good = await raw.request({ code: RequestCode.HEART_BEAT, extFields: fields, body });
        assert.equal(good.code, ResponseCode.SUCCESS, good.remark);
        const changedField = await raw.request({
          code: RequestCode.HEART_BEAT,
          extFields: { ...fields, extra: "b" },
          body,
        });
        assert.equal(changedField.code, ResponseCode.NO_PERMISSION);
        const other = new TextEncoder().encode(JSON.stringify(hb("raw-2")));
        const changedBody = await raw.request({ code: RequestCode.HEART_BEAT, extFields: fields, body: other });
        assert.equal(changedBody.code, ResponseCode.NO_PERMISSION);
        const forged = { ...fields, Signature: remotingSignature("not-the-secret", signedContent(fields, body)) };
        const forgedAnswer = await raw.request({ code: RequestCode.HEART_BEAT, extFields: forged, body });
        assert.equal(forgedAnswer.code, ResponseCode.NO_PERMISSION);
        // An unknown user gets the same answer as a wrong secret.
        const unknown = await raw.request({
          code: RequestCode.HEART_BEAT,
          extFields: signed({ accessKey: "nobody", secretKey: "x" }, {}, body),
          body,
        });
        assert.equal(unknown.remark, forgedAnswer.remark);
        const producers = await root().producerConnection(producerGroup);
        assert.deepEqual(
          producers.map((p) => p.clientId),
          ["raw-1"],
          "only the signed heartbeat registered its producer (not the changed body's raw-2)",
        );
      } finally {
        raw.close();
      }
    });

    it("an offset commit is stored for a user with Sub on the group and topic, refused and not stored for one without", async () => {
      const raw = await RawRemoting.open(auth.server.port);
      try {
        const commit = (who: NimbusCredentials, commitOffset: string) =>
          raw.request({
            code: RequestCode.UPDATE_CONSUMER_OFFSET,
            extFields: signed(who, { consumerGroup: pushGroup, topic, queueId: "0", commitOffset }),
          });
        const mine = await commit(ALICE, "0");
        assert.equal(mine.code, ResponseCode.SUCCESS, mine.remark);
        const bobs = await commit(BOB, "1");
        assert.equal(bobs.code, ResponseCode.NO_PERMISSION);
        assert.match(bobs.remark ?? "", /User:bob has no Sub permission/);
        const stored = await root().queryOffsets(pushGroup, topic);
        assert.deepEqual(
          stored.filter((o) => o.brokerName === "broker-a" && o.queueId === 0).map((o) => o.offset),
          [0],
          "alice's commit is stored, bob's is not",
        );
      } finally {
        raw.close();
      }
    });

    it("a signed producer sends; signed push and lite-pull consumers receive", {
      skip: remotingClientUnavailable(),
    }, async () => {
      const keys = [ALICE.accessKey, ALICE.secretKey];
      const produced = await runRemotingClient(["acl-produce", namesrv(), ...keys, producerGroup, topic, "4"]);
      assert.equal(produced.lines[0], "route ok");
      const sent = produced.lines.filter((l) => l.startsWith("sent ")).map((l) => l.split(" ")[1]);
      assert.equal(sent.length, 4, produced.lines.join("\n"));
      const stored = await storedMessages(root(), topic);
      assert.deepEqual(stored.map((m) => m.msgId).sort(), [...sent].sort());

      for (const [how, group] of [
        ["acl-push", pushGroup],
        ["acl-lite", liteGroup],
      ] as const) {
        const run = await runRemotingClient([how, namesrv(), ...keys, group, topic, "4"]);
        const read = run.lines.filter((l) => l.startsWith("msg ")).map((l) => l.split(" ")[1]);
        assert.deepEqual([...read].sort(), [...sent].sort(), `${how} read every message`);
      }
    });

    it("a signed client views and queries messages; a user without Sub on the message's topic may not view it", {
      skip: remotingClientUnavailable(),
    }, async () => {
      const keys = [ALICE.accessKey, ALICE.secretKey];
      const run = await runRemotingClient(["acl-query", namesrv(), ...keys, producerGroup, topic]);
      const [, msgId = "", offsetMsgId = ""] = (run.lines.find((l) => l.startsWith("sent ")) ?? "").split(" ");
      assert.ok(run.lines.includes(`viewed offset ${msgId}`), run.lines.join("\n"));
      assert.ok(run.lines.includes(`viewed id ${msgId}`), run.lines.join("\n"));
      assert.match(run.lines.find((l) => l.startsWith("queried")) ?? "", new RegExp(msgId));
      // VIEW_MESSAGE_BY_ID names no topic: the door asks Sub on the topic of the message it found.
      const port = Number.parseInt(offsetMsgId.slice(8, 16), 16);
      const offset = BigInt(`0x${offsetMsgId.slice(16)}`).toString();
      const raw = await RawRemoting.open(port);
      try {
        const view = await raw.request({ code: RequestCode.VIEW_MESSAGE_BY_ID, extFields: signed(BOB, { offset }) });
        assert.equal(view.code, ResponseCode.NO_PERMISSION);
        assert.match(view.remark ?? "", new RegExp(`User:bob has no Sub permission on Topic:${topic}`));
        assert.equal(view.body, undefined, "no message in the refusal");
        const mine = await raw.request({ code: RequestCode.VIEW_MESSAGE_BY_ID, extFields: signed(ALICE, { offset }) });
        assert.equal(mine.code, ResponseCode.SUCCESS, mine.remark);
      } finally {
        raw.close();
      }
    });

    it("a wrong secret, an unknown key and a user without Pub are refused NO_PERMISSION; nothing is stored", {
      skip: remotingClientUnavailable(),
    }, async () => {
      const cases: [string, string[]][] = [
        ["wrong secret", [ALICE.accessKey, "not-alice-secret"]],
        ["unknown key", ["mallory", "mallory-secret-1"]],
      ];
      for (const [what, keys] of cases) {
        const run = await runRemotingClient(["acl-produce", namesrv(), ...keys, producerGroup, refusedTopic, "1"]);
        assert.match(run.lines[0] ?? "", /^route 16 /, `${what}: the name server refuses the route`);
        assert.match(run.lines[1] ?? "", /^failed /, `${what}: the send fails`);
      }
      const bob = await runRemotingClient([
        "acl-produce",
        namesrv(),
        BOB.accessKey,
        BOB.secretKey,
        producerGroup,
        refusedTopic,
        "1",
      ]);
      assert.equal(bob.lines[0], "route ok", "Sub on the topic reads its route");
      assert.match(bob.lines[1] ?? "", /^failed 16 /, bob.lines.join("\n"));
      assert.deepEqual(await storedMessages(root(), refusedTopic), [], "nothing was written");
    });
  });
}
