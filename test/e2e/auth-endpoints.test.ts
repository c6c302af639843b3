/**
 * @module Auth on every endpoint, through the local server with `--auth`: for each endpoint that requires
 * auth, an unsigned request is 401 UNAUTHENTICATED, a request signed by a user whose ACL lacks the
 * endpoint's permission is 403 NO_PERMISSION naming the resource and action, and one signed by a user with
 * exactly the permissions the endpoint needs succeeds; the refused ones write nothing (no table write, no
 * object put or delete). Super-only endpoints refuse a Normal user allowed everything.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { NimbusCredentials } from "../../lib/core/request-signing.js";
import { ENDPOINTS, type EndpointId, endpoints } from "../../lib/protocol/index.js";
import { type AuthServer, type Call, call, ROOT, startAuthServer } from "../support/auth-server.js";
import { dispatchOf } from "../support/server-fixture.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const A = "broker-a";

/** A request of an endpoint, and what a user needs for it: `Topic:T|Sub` (one action each). */
interface Sample {
  request: () => Call;
  /** Empty for Super-only endpoints. */
  grants: string[];
  /** Open to every signed user (no resource: `access: () => []`). */
  anyUser?: true;
}

const tx: { first: string; second: string } = { first: "", second: "" };
/** A receipt handle of group G on T, received in `before` (a change of invisible time needs a live one). */
const pop = { handle: "" };
/** The id of the message sent to T in `before` (a query by id needs one that exists). */
const stored = { msgId: "" };

const SAMPLES: Partial<Record<EndpointId, Sample>> = {
  clusterInfo: { request: () => ({ method: "GET", path: "/cluster" }), grants: ["Cluster|Get"] },
  brokerList: { request: () => ({ method: "GET", path: "/brokers" }), grants: ["Cluster|Get"] },
  topicRoute: { request: () => ({ method: "GET", path: "/topics/T/route" }), grants: ["Topic:T|Pub"] },
  channelInfo: { request: () => ({ method: "GET", path: "/push-channel" }), grants: [], anyUser: true },
  openApi: { request: () => ({ method: "GET", path: "/openapi.json" }), grants: ["Cluster|Get"] },
  listTopics: { request: () => ({ method: "GET", path: "/topics" }), grants: ["Cluster|List"] },
  updateTopic: { request: () => ({ method: "PUT", path: "/topics/T2", body: {} }), grants: ["Topic:T2|Create"] },
  deleteTopic: { request: () => ({ method: "DELETE", path: "/topics/T2" }), grants: ["Topic:T2|Delete"] },
  topicStatus: { request: () => ({ method: "GET", path: "/topics/T/status" }), grants: ["Topic:T|Get"] },
  send: {
    request: () => ({ method: "POST", path: "/send", body: { topic: "T", messages: [{ body: b64("hi") }] } }),
    grants: ["Topic:T|Pub"],
  },
  pull: {
    request: () => ({
      method: "POST",
      path: "/pull",
      body: { consumerGroup: "G", topic: "T", brokerName: A, queueId: 0, queueOffset: 0 },
    }),
    grants: ["Topic:T|Sub", "Group:G|Sub"],
  },
  queryMessageById: {
    request: () => ({ method: "POST", path: "/messages/by-id", body: { topic: "T", msgId: stored.msgId } }),
    grants: ["Topic:T|Sub"],
  },
  queryMessagesByKey: {
    request: () => ({ method: "POST", path: "/messages/by-key", body: { topic: "T", key: "k1" } }),
    grants: ["Topic:T|Sub"],
  },
  sendBack: {
    request: () => ({
      method: "POST",
      path: "/send-back",
      body: { consumerGroup: "G", topic: "T", brokerName: A, queueId: 0, queueOffset: 0 },
    }),
    grants: ["Topic:T|Sub", "Group:G|Sub"],
  },
  receive: {
    request: () => ({
      method: "POST",
      path: "/receive",
      body: { consumerGroup: "G", topic: "T", invisibleDurationMs: 10_000 },
    }),
    grants: ["Topic:T|Sub", "Group:G|Sub"],
  },
  startReceiving: {
    request: () => ({ method: "POST", path: "/receive/start", body: { consumerGroup: "G", topic: "T" } }),
    grants: ["Topic:T|Sub", "Group:G|Sub"],
  },
  ack: {
    request: () => ({ method: "POST", path: "/ack", body: { consumerGroup: "G", topic: "T", receiptHandles: ["h"] } }),
    grants: ["Topic:T|Sub", "Group:G|Sub"],
  },
  changeInvisibleDuration: {
    request: () => ({
      method: "POST",
      path: "/change-invisible-duration",
      body: { consumerGroup: "G", topic: "T", receiptHandle: pop.handle, invisibleDurationMs: 10_000 },
    }),
    grants: ["Topic:T|Sub", "Group:G|Sub"],
  },
  queryOffsets: { request: () => ({ method: "GET", path: "/offsets/G/T" }), grants: ["Group:G|Sub", "Topic:T|Sub"] },
  commitOffsets: {
    request: () => ({
      method: "PUT",
      path: "/offsets/G/T",
      body: { offsetTable: [{ brokerName: A, queueId: 0, offset: 0 }] },
    }),
    grants: ["Group:G|Sub", "Topic:T|Sub"],
  },
  releaseQueues: {
    request: () => ({
      method: "POST",
      path: "/offsets/G/T/release",
      body: { clientId: "c1", offsetTable: [{ brokerName: A, queueId: 0, offset: 0 }] },
    }),
    grants: ["Group:G|Sub", "Topic:T|Sub"],
  },
  queueOwners: {
    request: () => ({ method: "GET", path: "/offsets/G/T/owners" }),
    grants: ["Group:G|Get", "Topic:T|Get"],
  },
  consumerProgress: {
    request: () => ({ method: "GET", path: "/groups/G/progress?topic=T" }),
    grants: ["Group:G|Get", "Topic:T|Get"],
  },
  listGroups: { request: () => ({ method: "GET", path: "/groups" }), grants: ["Cluster|List"] },
  // A group nobody configured: Create (Update once it has a config), then read, sampled history, delete.
  updateSubGroup: {
    request: () => ({ method: "PUT", path: "/groups/SG/subscription-group", body: { retryMaxTimes: 3 } }),
    grants: ["Group:SG|Create"],
  },
  getSubGroup: { request: () => ({ method: "GET", path: "/groups/SG/subscription-group" }), grants: ["Group:SG|Get"] },
  lagHistory: { request: () => ({ method: "GET", path: "/groups/G/lag-history" }), grants: ["Group:G|Get"] },
  deleteSubGroup: {
    request: () => ({ method: "DELETE", path: "/groups/SG/subscription-group" }),
    grants: ["Group:SG|Delete"],
  },
  lockQueues: {
    request: () => ({
      method: "POST",
      path: "/offsets/G/T/lock",
      body: { clientId: "c1", queues: [{ brokerName: A, queueId: 0 }] },
    }),
    grants: ["Group:G|Sub", "Topic:T|Sub"],
  },
  unlockQueues: {
    request: () => ({
      method: "POST",
      path: "/offsets/G/T/unlock",
      body: { clientId: "c1", queues: [{ brokerName: A, queueId: 0 }] },
    }),
    grants: ["Group:G|Sub", "Topic:T|Sub"],
  },
  queueLocks: {
    request: () => ({ method: "GET", path: "/offsets/G/T/locks" }),
    grants: ["Group:G|Get", "Topic:T|Get"],
  },
  resetOffsetByTime: {
    request: () => ({ method: "POST", path: "/offsets/G/T/reset-by-time", body: { timestamp: "now" } }),
    grants: ["Group:G|Update", "Topic:T|Get"],
  },
  consumerStatus: { request: () => ({ method: "GET", path: "/groups/G/status" }), grants: ["Group:G|Get"] },
  heartbeat: {
    request: () => ({
      method: "POST",
      path: "/heartbeat",
      body: {
        clientId: "c1",
        consumerDataSet: [{ groupName: "G", subscriptionDataSet: [{ topic: "T", subString: "*" }] }],
      },
    }),
    grants: ["Group:G|Sub", "Topic:T|Sub"],
  },
  unregister: {
    request: () => ({ method: "POST", path: "/unregister", body: { clientId: "c1", consumerGroup: "G" } }),
    grants: ["Group:G|Sub"],
  },
  consumerConnection: { request: () => ({ method: "GET", path: "/groups/G/consumers" }), grants: ["Group:G|Get"] },
  producerConnection: { request: () => ({ method: "GET", path: "/groups/PG/producers" }), grants: ["Group:PG|Pub"] },
  sendHalfMessage: {
    request: () => ({
      method: "POST",
      path: "/transactions",
      body: { producerGroup: "PG", topic: "T", message: { body: b64("half") } },
    }),
    grants: ["Topic:T|Pub", "Group:PG|Pub"],
  },
  endTransaction: {
    request: () => ({
      method: "POST",
      path: `/transactions/${tx.first}/end`,
      body: { producerGroup: "PG", commitOrRollback: "ROLLBACK_MESSAGE" },
    }),
    grants: ["Group:PG|Pub"],
  },
  transactionInfo: {
    request: () => ({ method: "GET", path: `/transactions/${tx.second}?producerGroup=PG` }),
    grants: ["Group:PG|Get"],
  },
  transactionMessage: {
    request: () => ({ method: "GET", path: `/transactions/${tx.second}/message?producerGroup=PG` }),
    grants: ["Group:PG|Pub", "Topic:T|Pub"],
  },
  createUser: {
    request: () => ({ method: "POST", path: "/acl/users", body: { username: "temp", password: "temp-secret-1" } }),
    grants: [],
  },
  updateUser: { request: () => ({ method: "PUT", path: "/acl/users/temp", body: { userType: "Normal" } }), grants: [] },
  getUser: { request: () => ({ method: "GET", path: "/acl/users/temp" }), grants: [] },
  listUsers: { request: () => ({ method: "GET", path: "/acl/users" }), grants: [] },
  createAcl: {
    request: () => ({
      method: "POST",
      path: "/acl/acls",
      body: { subject: "User:temp", resources: ["Topic:x"], actions: ["Pub"], decision: "Allow" },
    }),
    grants: [],
  },
  updateAcl: {
    request: () => ({
      method: "PUT",
      path: "/acl/acls",
      body: { subject: "User:temp", resources: ["Topic:x"], actions: ["Pub"], decision: "Deny" },
    }),
    grants: [],
  },
  getAcl: { request: () => ({ method: "GET", path: "/acl/acls/User:temp" }), grants: [] },
  listAcls: { request: () => ({ method: "GET", path: "/acl/acls" }), grants: [] },
  deleteAcl: { request: () => ({ method: "DELETE", path: "/acl/acls/User:temp" }), grants: [] },
  deleteUser: { request: () => ({ method: "DELETE", path: "/acl/users/temp" }), grants: [] },
  // Last: once SG's subscription exists nothing more is sent to T (its delivery would write beside a refusal).
  updateSubscription: {
    request: () => ({
      method: "PUT",
      path: "/subscriptions/SG",
      body: { topic: "T", target: { type: "http", url: "http://127.0.0.1:9/hook", secret: "s".repeat(32) } },
    }),
    grants: ["Topic:T|Sub", "Group:SG|Sub", "Group:SG|Create"],
  },
  getSubscription: { request: () => ({ method: "GET", path: "/subscriptions/SG" }), grants: ["Group:SG|Sub"] },
  listSubscriptions: { request: () => ({ method: "GET", path: "/subscriptions" }), grants: ["Cluster|List"] },
  deleteSubscription: { request: () => ({ method: "DELETE", path: "/subscriptions/SG" }), grants: ["Group:SG|Delete"] },
};

describe("auth on every endpoint (nimbus dev --auth)", () => {
  let t: AuthServer;
  let url: string;
  const asRoot = (c: Call) => call(url, c, ROOT);
  const ok = async (c: Call) => {
    const answer = await asRoot(c);
    assert.ok(answer.status < 300, `${c.method} ${c.path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const writes = () => {
    const c = t.server.storage.counter.snapshot();
    return c.tableWrites + c.objectPuts + c.objectDeletes;
  };
  /** A Normal user with `entries` as its ACL (each Allow). */
  const user = async (name: string, grants: string[]): Promise<NimbusCredentials> => {
    const credentials = { accessKey: name, secretKey: `${name}-secret-1` };
    await ok({ method: "POST", path: "/acl/users", body: { username: name, password: credentials.secretKey } });
    // One ACL entry per resource, with every action granted on it (a second entry would replace the first).
    const actionsOf = new Map<string, string[]>();
    for (const grant of grants) {
      const [resource = "", action = ""] = grant.split("|");
      actionsOf.set(resource, [...(actionsOf.get(resource) ?? []), action]);
    }
    for (const [resource, actions] of actionsOf) {
      await ok({
        method: "POST",
        path: "/acl/acls",
        body: { subject: `User:${name}`, resources: [resource], actions, decision: "Allow" },
      });
    }
    return credentials;
  };

  before(async () => {
    t = await startAuthServer();
    url = t.server.url;
    await ok({ method: "PUT", path: "/topics/T", body: {} });
    const receive = { consumerGroup: "G", topic: "T", invisibleDurationMs: 600_000 };
    await ok({ method: "POST", path: "/receive", body: receive }); // group G's POP start
    const sent = (await ok({
      method: "POST",
      path: "/send",
      body: { topic: "T", queueId: 0, brokerName: A, messages: [{ body: b64("m") }] },
    })) as { msgIds: string[] };
    stored.msgId = sent.msgIds[0] ?? "";
    const received = (await ok({ method: "POST", path: "/receive", body: receive })) as {
      messages: { receiptHandle: string }[];
    };
    pop.handle = received.messages[0]?.receiptHandle ?? "";
    for (const key of ["first", "second"] as const) {
      const half = (await ok({
        method: "POST",
        path: "/transactions",
        body: { producerGroup: "PG", topic: "T", message: { body: b64("h") } },
      })) as { transactionId: string };
      tx[key] = half.transactionId;
    }
  });
  after(() => t.close());

  it("has a sample for every endpoint that requires auth, and GET /health stays open", async () => {
    const required = ENDPOINTS.filter((e) => e.auth === "required").map((e) => e.id);
    assert.deepEqual(Object.keys(SAMPLES).sort(), [...required].sort());
    assert.equal((await call(url, { method: "GET", path: "/health" })).status, 200);
    const head = await fetch(`${url}/health`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");
  });

  const almighty = ["Topic:*", "Group:*", "Cluster"];
  let everything: NimbusCredentials;
  let stranger: NimbusCredentials;
  before(async () => {
    stranger = await user("stranger", []);
    everything = await user("everything", []);
    await ok({
      method: "POST",
      path: "/acl/acls",
      body: {
        subject: "User:everything",
        resources: almighty,
        actions: ["Pub", "Sub", "Create", "Update", "Delete", "Get", "List"],
        decision: "Allow",
      },
    });
  });

  it("Get reads a topic's status, not its messages; a producer group's Pub reads no half message of a topic it may not send to", async () => {
    const getter = await user("getter", ["Topic:T|Get", "Group:PG|Get"]);
    assert.equal((await call(url, { method: "GET", path: "/topics/T/status" }, getter)).status, 200);
    for (const c of [SAMPLES.queryMessageById?.request(), SAMPLES.queryMessagesByKey?.request()].filter(
      (x) => x !== undefined,
    )) {
      const refused = await call(url, c, getter);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.match(refused.body.message ?? "", /Sub permission on Topic:T/);
    }
    const half = SAMPLES.transactionMessage?.request() ?? assert.fail("no sample");
    assert.equal((await call(url, half, getter)).status, 403, "Get on the group reads no half message");
    const producer = await user("producer-elsewhere", ["Group:PG|Pub", "Topic:Other|Pub"]);
    const refused = await call(url, half, producer);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.match(refused.body.message ?? "", /Pub permission on Topic:T/);
  });

  for (const [id, sample] of Object.entries(SAMPLES) as [EndpointId, Sample][]) {
    const e = endpoints[id];
    it(`${e.method} ${e.path}: unsigned 401, without the permission 403, with it 2xx; refusals write nothing`, async () => {
      const partial = sample.grants.length > 1 ? await user(`part-${id}`, sample.grants.slice(0, -1)) : undefined;
      // A subscription saved by an earlier sample has its first delivery round (which records its group) done.
      await dispatchOf(t.server).settled();
      const before = writes();
      const unsigned = await call(url, sample.request());
      assert.equal(unsigned.status, 401, JSON.stringify(unsigned.body));
      assert.equal(unsigned.body.code, "UNAUTHENTICATED");

      if (sample.anyUser) {
        // Any signed user, even one with no ACL at all; unsigned stays 401.
        const answer = await call(url, sample.request(), stranger);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        return;
      }
      const refused = await call(url, sample.request(), stranger);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(refused.body.code, "NO_PERMISSION");
      const [firstResource, firstAction] = (sample.grants[0] ?? "|").split("|");
      if (sample.grants.length > 0) {
        assert.match(refused.body.message ?? "", new RegExp(`${firstAction}.* on ${firstResource}`));
      } else {
        // Super only: even a user allowed every action on every resource is refused.
        const normal = await call(url, sample.request(), everything);
        assert.equal(normal.status, 403, JSON.stringify(normal.body));
      }
      if (partial) {
        // All but the last permission: still refused (a pull needs the topic AND the group).
        const [lastResource, lastAction] = (sample.grants.at(-1) ?? "|").split("|");
        const answer = await call(url, sample.request(), partial);
        assert.equal(answer.status, 403);
        assert.match(answer.body.message ?? "", new RegExp(`${lastAction}.* on ${lastResource}`));
      }
      assert.equal(writes(), before, "a refused request wrote nothing");

      const allowed = sample.grants.length === 0 ? ROOT : await user(`u-${id}`, sample.grants);
      const answer = await call(url, sample.request(), allowed);
      assert.ok(answer.status >= 200 && answer.status < 300, `${answer.status} ${JSON.stringify(answer.body)}`);
    });
  }
});
