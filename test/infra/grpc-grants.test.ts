/**
 * @module Least privilege of the gRPC proxy (infra/grpc.ts, `nimbus proxy --storage aws` on ECS), checked as
 * grants.test.ts checks the functions: the proxy (`serveProxy`, the wiring `nimbus proxy` runs) serves over one
 * embedded store wrapped to record which table or object store each call reaches, with auth on (as on an ACL
 * stage: the clients sign as a Normal user whose secret and ACL are in the acl table) and its Dispatch wake recording the invoke as `lambda:Dispatch`. RocketMQ's official Node.js clients
 * then call every RPC the proxy serves: QueryRoute, Telemetry, Heartbeat, SendMessage (normal, large, FIFO,
 * delay, transactional), EndTransaction (commit, rollback, and a check-back's), ReceiveMessage, AckMessage,
 * ChangeInvisibleDuration, QueryAssignment, ForwardMessageToDeadLetterQueue (a FIFO PushConsumer past its max
 * attempts), NotifyClientTermination, and RecallMessage (refused). What the stage's own brokers do (register,
 * create topics, save a subscription and a user, run the transaction check) runs unrecorded, as on AWS.
 * The set used must be the set granted: `GRPC_PROXY` in infra/manifest.ts, plus AUTH_TABLE, which infra/grpc.ts
 * links only on a stage with ACLs (nothing but the auth gate reads it: the broker never opens the acl table).
 * The wake must fire for a send to the subscribed topic and for no other.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ConsumeResult, PushConsumer } from "rocketmq-client-nodejs";
import { AUTH_TABLE, GRPC_PROXY } from "../../infra/manifest.js";
import type { Broker } from "../../lib/broker/index.js";
import { ACL_TABLE, AclStore, AesGcmSealer } from "../../lib/broker/security/index.js";
import { createBroker } from "../../lib/config/create-broker.js";
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import { type ProxyServer, serveProxy } from "../../lib/dev/proxy-server.js";
import { SubscriptionDefinitionSchema } from "../../lib/protocol/index.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import { waitUntil } from "../support/consumer-helpers.js";
import { quietLogger } from "../support/grpc-fixture.js";
import { startPopGroup } from "../support/pop-group.js";
import { TEST_SEAL_KEY } from "../support/stage-keys.js";
import { BUCKET, ROOT, recordingStorage } from "./grants-helpers.js";
import { HeartbeatingProducer, HeartbeatingSimpleConsumer } from "./grpc-clients.js";

/** TransactionResolution.COMMIT of apache.rocketmq.v2 (what a checker answers). */
const COMMIT = 1;
const FIFO_GROUP = "AuditFifo";
const SUBSCRIBED = "Payments";
const config = parseNimbusConfig({
  inlineThresholdBytes: 1024,
  transactionTimeoutMs: 200,
  popMaxDeliveryAttempts: 2,
  popFifoGroups: [FIFO_GROUP],
  popMaxLongPollMs: 500,
});
const large = (c: string) => Buffer.from(c.repeat(4096));
const MASTER_KEY = new Uint8Array(32).fill(7);
const APP = { accessKey: "app", accessSecret: "app-secret-1" };

describe("the gRPC proxy is granted exactly the resources it uses", () => {
  let dataDir: string;
  let storage: Storage;
  /** The stage's own brokers (functions or `nimbus dev`): topics, subscriptions, the transaction check. */
  let stage: Broker;
  let proxy: ProxyServer;
  const touched = new Set<string>();
  const woken: string[] = [];
  const options = () => ({
    endpoints: proxy.grpc.endpoint,
    namespace: "",
    logger: quietLogger(),
    sessionCredentials: APP,
  });

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "nimbus-grpc-grants-"));
    storage = createLocalStorage({ dataDir });
    stage = createBroker(storage, config, { apiUrl: "https://api.test", newMessageId, sealKey: TEST_SEAL_KEY });
    await stage.registerBrokers();
    for (const topic of ["Orders", SUBSCRIBED, "Ledger", "Audit"])
      await stage.topics.upsert(topic, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
    const target = { type: "http", url: "https://example.com/hook", secret: "0123456789abcdef" };
    await stage.subscriptions.put("PaySub", SubscriptionDefinitionSchema.parse({ topic: SUBSCRIBED, target }));
    const users = new AclStore(storage.table(ACL_TABLE), new AesGcmSealer(MASTER_KEY));
    await users.createUser({ username: APP.accessKey, userType: "Normal", userStatus: "enable" }, APP.accessSecret);
    const resources = ["Topic:*", "Group:*"];
    await users.applyAcl({ subject: "User:app", resources, actions: ["Pub", "Sub"], decision: "Allow" }, false);
    proxy = await serveProxy(recordingStorage(storage, touched), {
      port: 0,
      config,
      auth: { root: { username: ROOT.accessKey, password: ROOT.secretKey }, masterKey: MASTER_KEY, cacheMs: 0 },
      // The invoke itself goes to Lambda: recorded as the function it reaches (granted by `invokes`).
      wakeDispatch: async ({ topic }) => {
        touched.add("lambda:Dispatch");
        woken.push(topic);
      },
    });
  });

  after(async () => {
    await proxy?.close();
    await stage?.timers.settled();
    await storage?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("the official clients call every RPC the proxy serves", async () => {
    // A SimpleConsumer's first receive fixes its POP group's start at the queue's end (empty: MESSAGE_NOT_FOUND).
    const consumer = new HeartbeatingSimpleConsumer({
      ...options(),
      consumerGroup: "OrdersPop",
      subscriptions: new Map([["Orders", "*"]]),
      awaitDuration: 500,
    });
    await consumer.startup();
    assert.deepEqual(await consumer.receive(16, 30_000), []);

    // Normal (inline, and large: its batch in the bucket), FIFO, delay (into the timer store), and the subscribed topic.
    const producer = new HeartbeatingProducer({ ...options(), maxAttempts: 1 });
    await producer.startup();
    const sent = [
      await producer.send({ topic: "Orders", tag: "A", keys: ["k1"], body: Buffer.from("small") }),
      await producer.send({ topic: "Orders", body: large("x") }),
      await producer.send({ topic: "Orders", messageGroup: "g1", body: Buffer.from("fifo") }),
    ].map((r) => r.messageId);
    await producer.send({ topic: "Orders", deliveryTimestamp: new Date(Date.now() + 3600_000), body: large("d") });
    await producer.send({ topic: SUBSCRIBED, body: Buffer.from("wakes Dispatch") });
    await producer.heartbeatNow();
    await assert.rejects(producer.recallMessage("Orders", "not-a-handle"), "RecallMessage is refused");

    // Receive (the large body read from the bucket), change one's invisible time and ack with the new handle.
    const got: Awaited<ReturnType<HeartbeatingSimpleConsumer["receive"]>> = [];
    await waitUntil(async () => {
      got.push(...(await consumer.receive(16, 30_000)));
      return got.length >= sent.length;
    }, "the three due messages received");
    assert.deepEqual(new Set(got.map((m) => m.messageId)), new Set(sent));
    const [first, ...rest] = got;
    assert.ok(first);
    await consumer.changeInvisibleDuration(first, 10_000);
    for (const m of [first, ...rest]) await consumer.ack(m);
    await consumer.heartbeatNow();

    // Transactions: a commit, a rollback, and one left open (large: its half message in the bucket), checked back.
    const asked: string[] = [];
    const txProducer = new HeartbeatingProducer({
      ...options(),
      topics: ["Ledger"],
      checker: {
        check: async (view: { messageId: string }) => {
          asked.push(view.messageId);
          return COMMIT;
        },
      },
    });
    await txProducer.startup();
    const commit = txProducer.beginTransaction();
    await txProducer.send({ topic: "Ledger", body: Buffer.from("commit") }, commit);
    await commit.commit();
    const rollback = txProducer.beginTransaction();
    await txProducer.send({ topic: "Ledger", body: Buffer.from("rollback") }, rollback);
    await rollback.rollback();
    const open = await txProducer.send({ topic: "Ledger", body: large("t") }, txProducer.beginTransaction());
    // The check runs elsewhere (a scheduled function); the proxy hands it out on the producer's next heartbeat.
    await waitUntil(async () => {
      await stage.checkTransactions();
      await txProducer.heartbeatNow();
      return asked.includes(open.messageId);
    }, "the check-back reached the producer's checker");
    await waitUntil(
      async () => (await stage.transactions.info("Ledger", open.transactionId)).state === "COMMITTED",
      "the checker's EndTransaction committed the open transaction",
    );

    // A FIFO PushConsumer (QueryAssignment, receives) whose listener fails: past 2 attempts it forwards to %DLQ%.
    await startPopGroup(stage, FIFO_GROUP, "Audit");
    let attempts = 0;
    const push = new PushConsumer({
      ...options(),
      consumerGroup: FIFO_GROUP,
      subscriptions: new Map([["Audit", "*"]]),
      messageListener: {
        consume: async () => {
          attempts++;
          return ConsumeResult.FAILURE;
        },
      },
    });
    await push.startup();
    await producer.send({ topic: "Audit", messageGroup: "a1", body: Buffer.from("never consumed") });
    await waitUntil(() => stage.topics.exists(`%DLQ%${FIFO_GROUP}`), "the message forwarded to %DLQ%AuditFifo");
    assert.equal(attempts, 2, "consumed twice, then forwarded");

    // Shutdown: NotifyClientTermination from each client.
    for (const client of [push, consumer, txProducer, producer]) await client.shutdown();
    await proxy.dispatchWake?.settle(30_000);
  });

  it("uses exactly the tables and bucket of GRPC_PROXY (and the acl table for its auth)", () => {
    const used = [...touched].filter((r) => !r.startsWith("lambda:")).sort();
    const granted = [...GRPC_PROXY.tables, AUTH_TABLE, ...(GRPC_PROXY.bucket ? [BUCKET] : [])].sort();
    assert.deepEqual(
      {
        usedButNotGranted: used.filter((r) => !granted.includes(r)),
        grantedButUnused: granted.filter((r) => !used.includes(r)),
      },
      { usedButNotGranted: [], grantedButUnused: [] },
      `used ${JSON.stringify(used)}, granted ${JSON.stringify(granted)} in infra/manifest.ts`,
    );
  });

  it("invokes Dispatch for a send to a subscribed topic, and only then: GRPC_PROXY.invokes", () => {
    assert.deepEqual(new Set(woken), new Set([SUBSCRIBED]), "only the subscribed topic woke Dispatch");
    assert.deepEqual(
      [...touched].filter((r) => r.startsWith("lambda:")),
      GRPC_PROXY.invokes.map((fn) => `lambda:${fn}`),
    );
  });
});
