/**
 * @module Least privilege, checked: each function of infra/manifest.ts is linked (so allowed by IAM) to
 * exactly the tables and bucket it touches, and the functions it invokes (Send wakes Dispatch). Every function gets its own broker, as in its own Lambda
 * container, over one embedded store wrapped to record which table or object store each call reaches; a
 * scenario then calls every route through the function the manifest assigns it, and both scheduled jobs.
 * A resource used but not granted would be AccessDenied on AWS; one granted but unused is a wider grant
 * than needed.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { handleChannelEvent } from "../../functions/channel.js";
import { moveDueMessages } from "../../functions/delayed-delivery.js";
import { dispatchSubscriptions } from "../../functions/dispatch.js";
import { registerBrokers } from "../../functions/register-brokers.js";
import { applyRetention } from "../../functions/retention.js";
import { sampleLag } from "../../functions/sample-lag.js";
import { checkTransactions } from "../../functions/transaction-check.js";
import { ALL_FUNCTIONS, API_FUNCTIONS, API_ROUTES, type ApiFunctionName } from "../../infra/manifest.js";
import { ACL_TABLE, AclStore } from "../../lib/broker/security/acl-store.js";
import { AesGcmSealer } from "../../lib/broker/security/secret-sealer.js";
import { type DispatchWake, WAKE_CACHE_MS, WAKE_WINDOW_MS } from "../../lib/broker/subscriptions/index.js";
import { createBroker } from "../../lib/config/create-broker.js";
import { attachDispatchWake } from "../../lib/config/dispatch-wake.js";
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import type { ApiEvent, ApiResult } from "../../lib/http/api-types.js";
import { RequestAuth } from "../../lib/http/authorize.js";
import type { HandlerContext } from "../../lib/http/context.js";
import { createApiHandler } from "../../lib/http/handler.js";
import { SERVICE_ROUTES } from "../../lib/http/routes/index.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import { TEST_SEAL_KEY } from "../support/stage-keys.js";
import { startWebhookTarget } from "../support/webhook-target.js";
import { apiEvent, BUCKET, ROOT, recordingStorage } from "./grants-helpers.js";

const HOUR = 3600_000;
// A stage whose subscriptions may reach the test's webhook on loopback (AWS stages allow public addresses only).
const config = parseNimbusConfig({
  inlineThresholdBytes: 1024,
  retentionHours: 1,
  transactionCheckMax: 1,
  subscriptionTargetNetworks: "loopback",
});

describe("each function is granted exactly the resources it uses", () => {
  let dataDir: string;
  let storage: Storage;
  let clock = Date.UTC(2030, 0, 1);
  const touched = new Map<string, Set<string>>(Object.keys(ALL_FUNCTIONS).map((name) => [name, new Set()]));
  const handlers = new Map<ApiFunctionName, (event: ApiEvent) => Promise<ApiResult>>();
  const calledRoutes = new Set<string>();

  /** A broker of its own per function, as each Lambda function has its own containers. */
  function contextOf(name: string): HandlerContext {
    const seen = touched.get(name);
    assert.ok(seen, `function ${name} is in the manifest`);
    const recording = recordingStorage(storage, seen);
    const broker = createBroker(recording, config, {
      apiUrl: "https://api.test",
      newMessageId,
      now: () => clock,
      sealKey: TEST_SEAL_KEY,
    });
    // As functions/shared/aws-context.ts: the functions linked to the WebSocket API post hints through it.
    // The posts themselves go to API Gateway, not to a table or the bucket: answered here as delivered.
    if (ALL_FUNCTIONS[name]?.channel) broker.channel.attach({ post: async () => "sent" });
    contexts.push(broker);
    // As aws-context.ts: the functions linked to Dispatch wake it at send time; the invoke itself goes to
    // Lambda, recorded here as the function it reaches (granted by `invokes`).
    const dispatchWake = ALL_FUNCTIONS[name]?.invokes?.includes("Dispatch")
      ? attachDispatchWake(broker, async ({ topic }) => {
          seen.add("lambda:Dispatch");
          wokenTopics.push(topic);
        })
      : undefined;
    if (dispatchWake) wakes.push(dispatchWake);
    // The Acl function with auth on, as on a stage with ACLs (its routes need the user store).
    if (name !== "Acl") return { broker, role: { kind: "all" }, dispatchWake };
    const store = new AclStore(recording.table(ACL_TABLE), new AesGcmSealer(new Uint8Array(32).fill(7)));
    const auth = new RequestAuth({
      store,
      root: { username: ROOT.accessKey, password: ROOT.secretKey },
    });
    return { broker, role: { kind: "all" }, auth };
  }
  const contexts: HandlerContext["broker"][] = [];
  const wakes: DispatchWake[] = [];
  const wokenTopics: string[] = [];

  /** Calls `route` (a manifest route key) with `url` through the function the manifest sends it to. */
  async function call(route: string, url: string, body?: unknown): Promise<unknown> {
    const spec = API_ROUTES.find((r) => r.route === route);
    assert.ok(spec, `${route} is in the manifest`);
    const handler = handlers.get(spec.fn);
    assert.ok(handler);
    const result = await handler(apiEvent(route.split(" ")[0] ?? "GET", url, body));
    // As functions/shared/api-handler.ts: the hints a request caused go out before its answer.
    await Promise.all([...contexts.map((b) => b.channel.settle(5000)), ...wakes.map((w) => w.settle(5000))]);
    assert.equal(result.statusCode, 200, `${route} (${url}) answered ${result.statusCode}: ${result.body}`);
    calledRoutes.add(route);
    return JSON.parse(result.body ?? "null") as unknown;
  }

  const text = (s: string): string => Buffer.from(s).toString("base64");

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "nimbus-grants-"));
    storage = createLocalStorage({ dataDir });
    // Each function's handler module serves its service's routes (functions/shared/api-handler.ts).
    for (const name of Object.keys(API_FUNCTIONS) as ApiFunctionName[]) {
      const ctx = contextOf(name);
      handlers.set(
        name,
        createApiHandler(SERVICE_ROUTES[name], async () => ctx),
      );
    }
  });

  after(async () => {
    await storage.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("runs every route and every scheduled job", async () => {
    const registration = contextOf("RegisterBrokers");
    await registerBrokers(registration);

    await call("GET /health", "/health");
    await call("GET /cluster", "/cluster");
    await call("GET /brokers", "/brokers");
    await call("GET /push-channel", "/push-channel");
    await call("PUT /topics/{topic}", "/topics/Orders", {
      writeQueueNums: 1,
      readQueueNums: 1,
      brokerNames: ["broker-a"],
    });
    await call("GET /topics/{topic}/route", "/topics/Orders/route");
    await call("GET /topics", "/topics");

    // A small batch stays inline; a large one goes to the bucket (threshold 1 KiB here).
    const small = { topic: "Orders", brokerName: "broker-a", queueId: 0, messages: [{ body: text("hi"), tags: "A" }] };
    const large = { ...small, messages: [{ body: text("x".repeat(4096)), tags: "B" }] };
    await call("POST /send", "/send", small);
    await call("POST /send", "/send", large);
    await call("POST /pull", "/pull", {
      consumerGroup: "G",
      topic: "Orders",
      brokerName: "broker-a",
      queueId: 0,
      queueOffset: 0,
    });
    await call("GET /topics/{topic}/status", "/topics/Orders/status");
    // The message index: a keyed message found by its id and its key; the topic's key indexing set.
    const keyed = (await call("POST /send", "/send", {
      ...small,
      messages: [{ body: text("keyed"), keys: "order-1" }],
    })) as { msgIds: string[] };
    await call("POST /messages/by-id", "/messages/by-id", {
      topic: "Orders",
      msgId: keyed.msgIds[0],
      begin: clock - HOUR,
      end: clock + HOUR,
    });
    await call("POST /messages/by-key", "/messages/by-key", {
      topic: "Orders",
      key: "order-1",
      begin: clock - HOUR,
      end: clock + HOUR,
    });
    await call("PUT /topics/{topic}", "/topics/Orders", {
      keyIndex: true,
      writeQueueNums: 1,
      readQueueNums: 1,
      brokerNames: ["broker-a"],
    });

    // POP: a consumer's start sets the group's start, a receive takes a message, which is changed and acked.
    const pop = { consumerGroup: "PopG", topic: "Orders", invisibleDurationMs: 10_000 };
    await call("POST /receive/start", "/receive/start", { consumerGroup: "PopG", topic: "Orders" });
    await call("POST /send", "/send", small);
    const got = (await call("POST /receive", "/receive", pop)) as { messages: { receiptHandle: string }[] };
    const handle = got.messages[0]?.receiptHandle ?? "";
    const changed = (await call("POST /change-invisible-duration", "/change-invisible-duration", {
      ...pop,
      receiptHandle: handle,
    })) as { receiptHandle: string };
    await call("POST /ack", "/ack", {
      consumerGroup: "PopG",
      topic: "Orders",
      receiptHandles: [changed.receiptHandle],
    });

    // A delayed message (large: its batch goes to the bucket when it moves) and a consumed one sent back.
    await call("POST /send", "/send", {
      ...large,
      messages: [{ body: text("d".repeat(4096)), properties: { DELAY: "1" } }],
    });
    await call("POST /send-back", "/send-back", {
      consumerGroup: "G",
      topic: "Orders",
      brokerName: "broker-a",
      queueId: 0,
      queueOffset: 0,
    });
    clock += 60_000;
    const moved = await moveDueMessages(contextOf("DelayedDelivery"), 0);
    assert.equal(moved.moved, 2, "the delayed message and the retry moved to their queues");

    await call("POST /heartbeat", "/heartbeat", {
      clientId: "c1",
      consumerDataSet: [{ groupName: "G", subscriptionDataSet: [{ topic: "Orders", subString: "*" }] }],
    });
    await call("GET /groups/{group}/consumers", "/groups/G/consumers");
    await call("GET /groups/{group}/status", "/groups/G/status");
    await call("POST /unregister", "/unregister", { clientId: "c1", consumerGroup: "G" });

    // Offset 2: the last consumed message is the large batch's, so progress reads its store time from the bucket.
    await call("PUT /offsets/{group}/{topic}", "/offsets/G/Orders", {
      offsetTable: [{ brokerName: "broker-a", queueId: 0, offset: 2 }],
    });
    await call("GET /offsets/{group}/{topic}", "/offsets/G/Orders");
    await call("POST /offsets/{group}/{topic}/release", "/offsets/G/Orders/release", {
      clientId: "c1",
      offsetTable: [{ brokerName: "broker-a", queueId: 0, offset: 2 }],
    });
    await call("GET /offsets/{group}/{topic}/owners", "/offsets/G/Orders/owners");
    // An orderly consumer's queue lock: lock, look, unlock; then a reset by time (binary search of the queue).
    const lock = { clientId: "c1", queues: [{ brokerName: "broker-a", queueId: 0 }] };
    await call("POST /offsets/{group}/{topic}/lock", "/offsets/G/Orders/lock", lock);
    await call("GET /offsets/{group}/{topic}/locks", "/offsets/G/Orders/locks");
    await call("POST /offsets/{group}/{topic}/unlock", "/offsets/G/Orders/unlock", lock);
    await call("POST /offsets/{group}/{topic}/reset-by-time", "/offsets/G/Orders/reset-by-time", { timestamp: 1 });
    await call("GET /groups/{group}/progress", "/groups/G/progress?topic=Orders");
    // Subscription groups, the group list, one lag sample per group and a group's lag history.
    await call("PUT /groups/{group}/subscription-group", "/groups/G/subscription-group", { retryMaxTimes: 3 });
    await call("GET /groups/{group}/subscription-group", "/groups/G/subscription-group");
    await call("GET /groups", "/groups");
    const sampled = await sampleLag(contextOf("SampleLag"));
    assert.ok(sampled.groups >= 2, "the committing group and the POP group are sampled");
    await call("GET /groups/{group}/lag-history", "/groups/G/lag-history");
    await call("DELETE /groups/{group}/subscription-group", "/groups/G/subscription-group");
    await call("GET /openapi.json", "/openapi.json");

    // A transaction committed at once, and one left to a check-back (large: its half message is an object).
    const txProducer = { clientId: "p1", producerDataSet: [{ groupName: "TxG", transactional: true }] };
    await call("POST /heartbeat", "/heartbeat", txProducer);
    await call("GET /groups/{group}/producers", "/groups/TxG/producers");
    const tx = (await call("POST /transactions", "/transactions", {
      producerGroup: "TxG",
      topic: "Orders",
      message: { body: text("tx"), properties: { UNIQ_KEY: "TX1" } },
    })) as { transactionId: string };
    await call("GET /transactions/{transactionId}", `/transactions/${tx.transactionId}?producerGroup=TxG`);
    await call(
      "GET /transactions/{transactionId}/message",
      `/transactions/${tx.transactionId}/message?producerGroup=TxG`,
    );
    await call("POST /transactions/{transactionId}/end", `/transactions/${tx.transactionId}/end`, {
      producerGroup: "TxG",
      commitOrRollback: "COMMIT_MESSAGE",
    });
    await call("POST /transactions", "/transactions", {
      producerGroup: "TxG",
      topic: "Orders",
      message: { body: text("y".repeat(4096)), properties: { UNIQ_KEY: "TX2" } },
    });
    clock += 10 * 60_000;
    await call("POST /heartbeat", "/heartbeat", txProducer);
    const checked = await checkTransactions(contextOf("TransactionCheck"));
    assert.equal(checked.sentToProducers, 1, "the pending transaction was checked with the live producer");
    clock += 10 * 60_000;
    const discarded = await checkTransactions(contextOf("TransactionCheck"));
    assert.equal(discarded.discarded, 1, "after transactionCheckMax checks the message is discarded");

    // Two hours on, one newer batch: retention trims both old ones, the large one's object included.
    clock += 2 * HOUR;
    await registerBrokers(registration);
    await call("POST /send", "/send", small);
    const report = await applyRetention(contextOf("Retention"));
    // Orders (one queue): the six old batches (four sends, the delayed message and the committed transaction)
    // but never the newest; the two half messages and the retry are each the newest of their queue.
    assert.equal(report.deletedBatches, 6, "retention trimmed the old batches");

    // A subscription of Orders (its save fixes the group's POP start, past the 1 s clock-skew allowance after
    // the last send), a large message, one Dispatch run.
    clock += 2000;
    const hook = await startWebhookTarget("0123456789abcdef", () => ({ status: 200 }));
    try {
      await call("PUT /subscriptions/{group}", "/subscriptions/SubG", {
        topic: "Orders",
        target: { type: "http", url: hook.url, secret: "0123456789abcdef" },
      });
      // Past the Send function's cache of subscribed topics: the send wakes Dispatch for Orders.
      clock += WAKE_CACHE_MS;
      await call("POST /send", "/send", large);
      assert.deepEqual(wokenTopics, ["Orders"], "the send to the subscribed topic invoked Dispatch once");
      // After the wake's window, a transaction's commit to Orders wakes it too (the Transactions function).
      clock += WAKE_WINDOW_MS + 1;
      const woken = (await call("POST /transactions", "/transactions", {
        producerGroup: "TxG",
        topic: "Orders",
        message: { body: text("tx-woken"), properties: { UNIQ_KEY: "TX3" } },
      })) as { transactionId: string };
      await call("POST /transactions/{transactionId}/end", `/transactions/${woken.transactionId}/end`, {
        producerGroup: "TxG",
        commitOrRollback: "COMMIT_MESSAGE",
      });
      assert.deepEqual(wokenTopics, ["Orders", "Orders"], "the commit to the subscribed topic invoked Dispatch");
      const run = await dispatchSubscriptions(contextOf("Dispatch"), { topic: "Orders" });
      assert.deepEqual([run.delivered, run.acked], [2, 2], "the Dispatch run delivered both messages and acked them");
      await call("DELETE /subscriptions/{group}", "/subscriptions/SubG");
    } finally {
      await hook.close();
    }

    await call("DELETE /topics/{topic}", "/topics/Orders");

    // The push channel's function: connect, a registration, a ping, a bad frame, the disconnect.
    const channel = contextOf("Channel");
    const wsEvent = (routeKey: string, body?: string) => ({
      requestContext: { connectionId: "conn-1", routeKey } as never,
      ...(body === undefined ? {} : { body }),
    });
    await handleChannelEvent(channel, wsEvent("$connect"));
    const register = {
      type: "register",
      heartbeat: { clientId: "c2", consumerDataSet: [{ groupName: "G", subscriptionDataSet: [] }] },
      queues: [{ topic: "Orders", brokerName: "broker-a", queueId: 0 }],
    };
    await handleChannelEvent(channel, wsEvent("$default", JSON.stringify(register)));
    await handleChannelEvent(channel, wsEvent("$default", JSON.stringify({ type: "ping" })));
    await handleChannelEvent(channel, wsEvent("$default", "not json"));
    await handleChannelEvent(channel, wsEvent("$disconnect"));
    // Users and ACLs (the Acl function, signed by the root user).
    await call("POST /acl/users", "/acl/users", { username: "alice", password: "alice-secret-1" });
    await call("PUT /acl/users/{username}", "/acl/users/alice", { userStatus: "enable" });
    await call("GET /acl/users/{username}", "/acl/users/alice");
    await call("GET /acl/users", "/acl/users");
    const change = { subject: "User:alice", resources: ["Topic:Orders"], actions: ["Pub"], decision: "Allow" };
    await call("POST /acl/acls", "/acl/acls", change);
    await call("PUT /acl/acls", "/acl/acls", { ...change, decision: "Deny" });
    await call("GET /acl/acls/{subject}", "/acl/acls/User:alice");
    await call("GET /acl/acls", "/acl/acls");
    await call("DELETE /acl/acls/{subject}", "/acl/acls/User:alice");
    await call("DELETE /acl/users/{username}", "/acl/users/alice");
    // Subscriptions (the Subscriptions function): definitions in the routes table.
    const subscription = {
      topic: "Orders",
      target: { type: "http", url: "https://example.com/hook", secret: "0123456789abcdef" },
    };
    await call("PUT /subscriptions/{group}", "/subscriptions/G", subscription);
    await call("GET /subscriptions/{group}", "/subscriptions/G");
    await call("GET /subscriptions", "/subscriptions");
    await call("DELETE /subscriptions/{group}", "/subscriptions/G");

    assert.deepEqual(
      API_ROUTES.map((r) => r.route).filter((r) => !calledRoutes.has(r)),
      [],
      "the scenario calls every route of the manifest",
    );
  });

  for (const [name, spec] of Object.entries(ALL_FUNCTIONS)) {
    it(`${name} (${spec.handler})`, () => {
      const used = [...(touched.get(name) ?? [])].sort();
      const granted = [
        ...spec.tables,
        ...(spec.bucket ? [BUCKET] : []),
        ...(spec.invokes ?? []).map((fn) => `lambda:${fn}`),
      ].sort();
      assert.deepEqual(
        {
          usedButNotGranted: used.filter((r) => !granted.includes(r)),
          grantedButUnused: granted.filter((r) => !used.includes(r)),
        },
        { usedButNotGranted: [], grantedButUnused: [] },
        `resources of ${name}: used ${JSON.stringify(used)}, granted ${JSON.stringify(granted)} in infra/manifest.ts`,
      );
    });
  }
});
