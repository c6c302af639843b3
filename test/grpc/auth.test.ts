/**
 * @module The gRPC endpoint with auth on (`nimbus dev --auth`), driven by RocketMQ's official Node.js client
 * with its session credentials: its MQv2-HMAC-SHA1 signature checked against Nimbus users, each RPC
 * authorized by its HTTP counterpart's ACL rule, refusals answered UNAUTHORIZED (40100) or FORBIDDEN (40300)
 * with nothing written; a raw call with a forged signature or a stale date refused the same way; and a signature
 * presented again more than a minute after its first use refused (signature-reuse.ts).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { credentials, Metadata } from "@grpc/grpc-js";
import { Producer } from "rocketmq-client-nodejs";
import { authenticate, mqSignature } from "../../lib/grpc/call-context.js";
import { GRPC_SIGNATURE_REUSE_MS, SignatureReuse } from "../../lib/grpc/signature-reuse.js";
import { type AuthServer, call, ROOT, startAuthServer } from "../support/auth-server.js";
import { quietLogger } from "../support/grpc-fixture.js";
import { rawClient, unaryCall } from "../support/grpc-raw.js";

const ALICE = { accessKey: "alice", secretKey: "alice-secret-123" };

describe("gRPC with auth on", () => {
  let auth: AuthServer;
  let endpoint = "";
  before(async () => {
    auth = await startAuthServer("local", { grpcPort: 0 });
    endpoint = auth.server.grpc?.endpoint ?? "";
    const url = auth.server.url;
    const ok = async (c: Parameters<typeof call>[1]) => assert.equal((await call(url, c, ROOT)).status, 200);
    for (const topic of ["AuthAllowed", "AuthDenied"])
      await ok({ method: "PUT", path: `/topics/${topic}`, body: { readQueueNums: 1, writeQueueNums: 1 } });
    await ok({ method: "POST", path: "/acl/users", body: { username: ALICE.accessKey, password: ALICE.secretKey } });
    await ok({
      method: "POST",
      path: "/acl/acls",
      body: { subject: "User:alice", resources: ["Topic:AuthAllowed"], actions: ["Pub", "Sub"], decision: "Allow" },
    });
  });
  after(() => auth.close());

  const producer = async (sessionCredentials?: { accessKey: string; accessSecret: string }) => {
    const p = new Producer({
      endpoints: endpoint,
      namespace: "",
      logger: quietLogger(),
      maxAttempts: 1,
      ...(sessionCredentials ? { sessionCredentials } : {}),
    });
    await p.startup();
    return p;
  };
  const send = (p: Producer, topic: string) => p.send({ topic, body: Buffer.from("signed") });
  const code = (expected: number) => (err: Error & { code?: number }) => {
    assert.equal(err.code, expected, String(err));
    return true;
  };

  it("a call without credentials is UNAUTHORIZED", async () => {
    const p = await producer();
    try {
      await assert.rejects(send(p, "AuthAllowed"), code(40100));
    } finally {
      await p.shutdown().catch(() => undefined);
    }
  });

  it("the root user's signature is accepted; a wrong secret is UNAUTHORIZED", async () => {
    const root = await producer({ accessKey: ROOT.accessKey, accessSecret: ROOT.secretKey });
    const forged = await producer({ accessKey: ROOT.accessKey, accessSecret: "not-the-secret" });
    try {
      assert.ok((await send(root, "AuthDenied")).messageId);
      await assert.rejects(send(forged, "AuthAllowed"), code(40100));
    } finally {
      await root.shutdown();
      await forged.shutdown().catch(() => undefined);
    }
  });

  it("a user's ACL decides per topic, as over HTTP: Pub allowed on one topic, FORBIDDEN on another", async () => {
    const alice = await producer({ accessKey: ALICE.accessKey, accessSecret: ALICE.secretKey });
    try {
      assert.ok((await send(alice, "AuthAllowed")).messageId);
      await assert.rejects(send(alice, "AuthDenied"), code(40300));
    } finally {
      await alice.shutdown();
    }
  });

  it("a signature is accepted for a minute after its first use, from any host; a replay after that is refused", async () => {
    const t0 = Date.now();
    const signed = (at: number, secret = ALICE.secretKey) => {
      const dateTime = new Date(at).toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "");
      const md = new Metadata();
      md.set("x-mq-date-time", dateTime);
      md.set(
        "authorization",
        `MQv2-HMAC-SHA1 Credential=alice, SignedHeaders=x-mq-date-time, Signature=${mqSignature(secret, dateTime)}`,
      );
      return md;
    };
    const requestAuth = auth.server.context.auth;
    assert.ok(requestAuth, "the server checks signatures");
    const reuse = new SignatureReuse();
    const at = (md: Metadata, ms: number) => authenticate(md, requestAuth, t0 + ms, reuse);
    const header = signed(t0);
    // A forged signature of that second is refused, and starts no clock for the real one.
    await assert.rejects(at(signed(t0, "not-alice-secret"), 0), { code: "UNAUTHENTICATED" });
    assert.equal((await at(header, 0)).username, "alice");
    // Every host of one app signs a second alike: the same header from another host is the same signature.
    assert.equal((await at(header, 1_000)).username, "alice", "another call, or another host, in that second");
    assert.equal((await at(header, GRPC_SIGNATURE_REUSE_MS)).username, "alice", "a minute after its first use");
    await assert.rejects(at(header, GRPC_SIGNATURE_REUSE_MS + 1), /first used more than 60 s ago/, "a replay");
    assert.equal((await at(signed(t0 + 61_000), 61_000)).username, "alice", "a fresh signature");
    // Never seen before, 4 minutes old: within the skew, accepted, for a minute from now.
    const late = signed(t0 - 4 * 60_000);
    assert.equal((await at(late, 0)).username, "alice");
    await assert.rejects(at(late, GRPC_SIGNATURE_REUSE_MS + 1), { code: "UNAUTHENTICATED" });
    // A date-time more than 5 minutes off is refused (RocketMQ's proxy checks none; HTTP allows 15).
    await assert.rejects(at(signed(t0 - 6 * 60_000), 0), /5 minutes off/);
  });

  it("a stale x-mq-date-time or a malformed authorization header is refused before any broker call", async () => {
    const client = rawClient(endpoint, credentials.createInsecure());
    try {
      const stale = "20200101T000000Z";
      const md = new Metadata();
      md.set("x-mq-date-time", stale);
      md.set(
        "authorization",
        `MQv2-HMAC-SHA1 Credential=root, SignedHeaders=x-mq-date-time, Signature=${mqSignature(ROOT.secretKey, stale)}`,
      );
      const answer = await unaryCall(client, "QueryRoute", { topic: { name: "AuthAllowed" } }, md);
      assert.equal(answer.status?.code, "UNAUTHORIZED");
      const bad = new Metadata();
      bad.set("authorization", "Basic cm9vdDpyb290");
      const refused = await unaryCall(client, "QueryRoute", { topic: { name: "AuthAllowed" } }, bad);
      assert.equal(refused.status?.code, "UNAUTHORIZED");
    } finally {
      client.close();
    }
  });
});
