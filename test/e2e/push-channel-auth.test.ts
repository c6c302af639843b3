/**
 * @module The push channel on a server with auth (`nimbus dev --auth`), on the embedded store and on the AWS
 * adapters: an unsigned connect is refused with 401 UNAUTHENTICATED; a user whose ACL lacks Sub on the group
 * (or the topic) its registration names gets a NO_PERMISSION error frame, no registration rows, no hints and
 * no members, while a permitted user on the same queue gets them; the SDK signs its connect with its
 * `credentials` and a message sent after idle reaches its PushConsumer through a hint. The AWS `$connect`
 * handler (functions/channel.ts) checks the same signature from API Gateway's event.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { handleChannelEvent } from "../../functions/channel.js";
import { CONNECTIONS_TABLE } from "../../lib/broker/store/tables.js";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { type NimbusCredentials, signNimbusRequest } from "../../lib/core/request-signing.js";
import type { ServerFrame } from "../../lib/protocol/index.js";
import { type AuthServer, type Call, call, ROOT, startAuthServer } from "../support/auth-server.js";
import { Received, waitUntil } from "../support/consumer-helpers.js";
import { MODE_LABEL } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

const A = "broker-a";
const b64 = (s: string) => Buffer.from(s).toString("base64");

/** A socket of the channel and every frame it received. */
interface Channel {
  ws: WebSocket;
  frames: ServerFrame[];
}

/** Opens the channel at `url`, its connect signed by `credentials`. */
async function openChannel(url: string, credentials: NimbusCredentials): Promise<Channel> {
  const headers = signNimbusRequest({ method: "GET", url: url.replace(/^ws/, "http"), credentials });
  const ws = new WebSocket(url, { headers });
  const frames: ServerFrame[] = [];
  ws.on("message", (d) => frames.push(JSON.parse(d.toString()) as ServerFrame));
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  return { ws, frames };
}

const registration = (clientId: string, group: string, topic: string) => ({
  type: "register",
  heartbeat: {
    clientId,
    consumerDataSet: [{ groupName: group, subscriptionDataSet: [{ topic, subString: "*" }] }],
  },
  queues: [{ topic, brokerName: A, queueId: 0 }],
});

for (const mode of ["local", "aws"] as const) {
  describe(`${MODE_LABEL[mode]}: the push channel with auth`, () => {
    let t: AuthServer;
    const ok = async (c: Call) => {
      const answer = await call(t.server.url, c, ROOT);
      assert.ok(answer.status < 300, `${c.method} ${c.path}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body;
    };
    const user = async (name: string, grants: string[]): Promise<NimbusCredentials> => {
      const credentials = { accessKey: name, secretKey: `${name}-secret-1` };
      await ok({ method: "POST", path: "/acl/users", body: { username: name, password: credentials.secretKey } });
      for (const grant of grants) {
        const [resource, action] = grant.split("|");
        const body = { subject: `User:${name}`, resources: [resource], actions: [action], decision: "Allow" };
        await ok({ method: "POST", path: "/acl/acls", body });
      }
      return credentials;
    };
    const open: WebSocket[] = [];

    before(async () => {
      t = await startAuthServer(mode);
      await ok({ method: "PUT", path: "/topics/T", body: { readQueueNums: 1, writeQueueNums: 1, brokerNames: [A] } });
    });
    after(async () => {
      for (const ws of open) ws.terminate();
      await t.close();
    });

    it("refuses an unsigned connect with 401 UNAUTHENTICATED, and a badly signed one too", async () => {
      const refusal = async (headers: Record<string, string>) => {
        const ws = new WebSocket(t.server.channelUrl, { headers });
        return new Promise<{ status: number; body: { code?: string } }>((resolve, reject) => {
          ws.once("open", () => reject(new Error("the channel opened")));
          ws.once("unexpected-response", (_req, res) => {
            let text = "";
            res.on("data", (d: Buffer) => {
              text += d.toString();
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
          });
        });
      };
      const unsigned = await refusal({});
      assert.equal(unsigned.status, 401);
      assert.equal(unsigned.body.code, "UNAUTHENTICATED");
      const wrong = signNimbusRequest({
        method: "GET",
        url: t.server.channelUrl.replace(/^ws/, "http"),
        credentials: { accessKey: ROOT.accessKey, secretKey: "not-the-secret" },
      });
      const bad = await refusal(wrong);
      assert.equal(bad.status, 401);
      assert.equal(bad.body.code, "UNAUTHENTICATED");
      assert.equal(t.server.channelSockets(), 0, "no socket was opened");
    });

    it("a user without Sub on the group gets NO_PERMISSION and no hints or members; a permitted user gets them", async () => {
      const reader = await user("reader", ["Group:G|Sub", "Topic:T|Sub"]);
      const stranger = await user("outsider", ["Topic:T|Sub"]);
      const permitted = await openChannel(t.server.channelUrl, reader);
      const refused = await openChannel(t.server.channelUrl, stranger);
      open.push(permitted.ws, refused.ws);

      refused.ws.send(JSON.stringify(registration("outsider@host", "G", "T")));
      await waitUntil(() => refused.frames.length === 1, "the refusal");
      const [answer] = refused.frames;
      assert.equal(answer?.type, "error");
      assert.equal(answer?.type === "error" && answer.code, "NO_PERMISSION");
      assert.match(answer?.type === "error" ? answer.message : "", /Sub .*on Group:G/);
      // Refused: nothing of it was written (no rows for the queue or the group, not in the group's members).
      const table = t.server.storage.table(CONNECTIONS_TABLE);
      assert.deepEqual((await table.query(`cq:T:${A}:0`)).items, []);
      assert.deepEqual((await table.query("cg:G")).items, []);

      permitted.ws.send(JSON.stringify(registration("reader@host", "G", "T")));
      await waitUntil(() => permitted.frames.some((f) => f.type === "registered"), "the permitted registration");
      // The outsider joining the group would tell the reader `members`; it did not join. A second reader does.
      const second = await openChannel(t.server.channelUrl, reader);
      open.push(second.ws);
      second.ws.send(JSON.stringify(registration("reader2@host", "G", "T")));
      await waitUntil(() => permitted.frames.some((f) => f.type === "members"), "members for the permitted");

      await ok({
        method: "POST",
        path: "/send",
        body: { topic: "T", brokerName: A, queueId: 0, messages: [{ body: b64("m") }] },
      });
      await waitUntil(() => permitted.frames.some((f) => f.type === "queue"), "a hint for the permitted user");
      await waitUntil(() => second.frames.some((f) => f.type === "queue"), "a hint for the second reader");
      // Both permitted sockets have their hint, posted by the same notification: the outsider got nothing more.
      assert.deepEqual(
        refused.frames.map((f) => f.type),
        ["error"],
      );
    });

    it("AWS $connect: the Channel function checks the signature from the event, records the user, refuses 401", async () => {
      const ctx = t.server.context;
      const host = "abc123.execute-api.eu-west-1.amazonaws.com";
      const signed = signNimbusRequest({ method: "GET", url: `https://${host}/prod`, credentials: ROOT });
      const event = (connectionId: string, routeKey: string, headers: Record<string, string>, body?: string) => ({
        requestContext: { connectionId, routeKey, stage: "prod" } as never,
        // API Gateway passes the upgrade request's headers with their original case.
        headers: { Host: host, ...headers },
        ...(body === undefined ? {} : { body }),
      });
      const unsigned = await handleChannelEvent(ctx, event("aws-1", "$connect", {}));
      assert.equal(typeof unsigned === "object" && unsigned.statusCode, 401);
      assert.equal(typeof unsigned === "object" && JSON.parse(unsigned.body ?? "{}").code, "UNAUTHENTICATED");
      assert.equal(await ctx.broker.channel.userOf("aws-1"), undefined);
      const connected = await handleChannelEvent(ctx, event("aws-2", "$connect", signed));
      assert.equal(typeof connected === "object" && connected.statusCode, 200);
      assert.equal(await ctx.broker.channel.userOf("aws-2"), ROOT.accessKey);
      // The same signed request again is a replay.
      const replay = await handleChannelEvent(ctx, event("aws-3", "$connect", signed));
      assert.equal(typeof replay === "object" && replay.statusCode, 401);
      // A frame on a connection nobody signed registers nothing.
      await handleChannelEvent(ctx, event("aws-1", "$default", {}, JSON.stringify(registration("x@h", "GA", "T"))));
      assert.deepEqual((await t.server.storage.table(CONNECTIONS_TABLE).query("cg:GA")).items, []);
      await handleChannelEvent(ctx, event("aws-2", "$disconnect", {}));
      assert.equal(await ctx.broker.channel.userOf("aws-2"), undefined, "the disconnect drops the user row");
    });

    it("the SDK signs its connect with its credentials; a message after idle comes by a hint", async () => {
      const credentials = await user("sdk", ["Group:GS|Sub", "Topic:T|Sub"]);
      const received = new Received();
      const c = new PushConsumer({
        consumerGroup: "GS",
        endpoints: t.server.url,
        credentials,
        timeoutMs: TEST_TIMEOUT_MS,
        pullIdleBackoffMillis: 60_000,
        pullIdleBackoffMaxMillis: 60_000,
        channelPollInterval: 600_000,
        membershipPollInterval: 600_000,
        rebalanceInterval: 600_000,
      });
      c.subscribe("T", "*");
      c.registerMessageListener(received.listener(c.clientId));
      try {
        await c.start();
        await waitUntil(() => c.assignedQueues().length === 1 && c.pushChannelStats.up, "the channel up");
        // The queue's reads after the registration are done (their count settles) before the send.
        let pulls = -1;
        await waitUntil(
          () => {
            const p = c.pushChannelStats.pulls;
            const now = p.afterFound + p.byHint + p.byTimer;
            const settled = now >= 1 && now === pulls;
            pulls = now;
            return settled;
          },
          "first reads done",
          TEST_TIMEOUT_MS,
          300,
        );
        const before = c.pushChannelStats.foundBy.byHint;
        const sent = (await ok({
          method: "POST",
          path: "/send",
          body: { topic: "T", brokerName: A, queueId: 0, messages: [{ body: b64("sdk") }] },
        })) as { msgIds: string[] };
        await waitUntil(() => received.has(sent.msgIds), "the message received");
        assert.ok(c.pushChannelStats.foundBy.byHint > before, JSON.stringify(c.pushChannelStats));
      } finally {
        await c.shutdown();
      }
    });
  });
}
