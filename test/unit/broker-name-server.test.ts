/**
 * @module Broker expiry with a fake clock: a broker not registered for 120 s drops out of `/cluster` and of
 * every route (so sends and pulls stop using it) and comes back with its QueueData on its next registration.
 */
import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { afterEach, beforeEach, describe, it } from "node:test";
import { isNimbusError } from "../../lib/core/errors.js";
import { PermName } from "../../lib/core/perm-name.js";
import { toApiEvent } from "../../lib/dev/api-gateway-event.js";
import { createApiHandler } from "../../lib/http/handler.js";
import { ALL_ROUTES } from "../../lib/http/routes/index.js";
import { openTestBroker, type TestBroker } from "../support/server-fixture.js";

const EXPIRY_MS = 120_000;
const body = (s: string) => new TextEncoder().encode(s);

/** GET `path` through the very handler the servers run, on this broker. */
async function get(t: TestBroker, path: string): Promise<{ status: number; body: unknown }> {
  const handler = createApiHandler(ALL_ROUTES, async () => ({ broker: t.broker, role: { kind: "all" as const } }));
  const req = { url: path, method: "GET", headers: {}, httpVersion: "1.1", socket: {} } as unknown as IncomingMessage;
  const result = await handler(toApiEvent(req, Buffer.alloc(0)));
  return { status: result.statusCode ?? 200, body: JSON.parse(result.body ?? "null") };
}

const rejectsWithCode = (promise: Promise<unknown>, code: string) =>
  assert.rejects(promise, (err: unknown) => isNimbusError(err) && err.code === code);

/** broker-a's queue 0 of Orders from its first offset, through the broker's pull service. */
function pullFromBrokerA(t: TestBroker) {
  return t.broker.puller.pull({
    consumerGroup: "CG",
    topic: "Orders",
    brokerName: "broker-a",
    queueId: 0,
    queueOffset: 0,
  });
}

/** One message to broker-a's queue 0 of Orders, through the broker's send service. */
function sendToBrokerA(t: TestBroker): Promise<unknown> {
  return t.broker.sender.send({ topic: "Orders", brokerName: "broker-a", queueId: 0, messages: [{ body: body("m") }] });
}

describe("broker expiry (fake clock)", () => {
  let t: TestBroker;
  beforeEach(async () => {
    t = await openTestBroker();
    await t.broker.topics.upsert("Orders", { readQueueNums: 2, writeQueueNums: 2 });
  });
  afterEach(() => t.close());

  it("a master that stops registering leaves the routes after 120 s; its slave stays, read-only", async () => {
    const slave = { cluster: "DefaultCluster", brokerName: "broker-a", brokerId: 1, address: "http://slave-a:1" };
    await t.broker.nameServer.register([slave]);
    await sendToBrokerA(t);
    t.clock.advance(EXPIRY_MS);
    // Only the slave (and broker-b's master, registered again) still registers.
    await t.broker.nameServer.register([
      slave,
      { cluster: "DefaultCluster", brokerName: "broker-b", brokerId: 0, address: "http://b:1" },
    ]);
    t.broker.routeCache.invalidate();
    const route = await t.broker.nameServer.topicRoute("Orders");
    const a = route.brokerDatas.find((b) => b.brokerName === "broker-a");
    assert.deepEqual(a?.brokerAddrs, { "1": "http://slave-a:1" }, "broker-a has only its slave's address");
    const qd = route.queueDatas.find((q) => q.brokerName === "broker-a");
    assert.equal(qd?.perm, PermName.PERM_READ, "a broker without a live master is read-only");
    const pulled = await pullFromBrokerA(t);
    assert.equal(pulled.messages.length, 1, "its messages are still read");
    await rejectsWithCode(
      t.broker.sender.send({ topic: "Orders", brokerName: "broker-a", queueId: 0, messages: [{ body: body("n") }] }),
      "NO_PERMISSION",
    );
  });

  it("a broker is live for just under 120 s after its registration", async () => {
    t.clock.advance(EXPIRY_MS - 1);
    assert.deepEqual(Object.keys((await t.broker.nameServer.clusterInfo()).brokerAddrTable), ["broker-a", "broker-b"]);
    assert.equal((await t.broker.nameServer.topicRoute("Orders")).queueDatas.length, 2);
  });

  it("GET /brokers keeps an expired broker, with its last registration and live false", async () => {
    const registeredAt = t.clock();
    t.clock.advance(EXPIRY_MS - 1);
    await t.broker.nameServer.register([
      { cluster: "DefaultCluster", brokerName: "broker-b", brokerId: 0, address: "http://b:1" },
    ]);
    t.clock.advance(1);
    const { status, body } = await get(t, "/brokers");
    assert.equal(status, 200);
    const brokers = (body as { brokers: { brokerName: string; registeredAt: number; live: boolean }[] }).brokers;
    const a = brokers.find((b) => b.brokerName === "broker-a");
    const b = brokers.find((x) => x.brokerName === "broker-b");
    assert.deepEqual([a?.registeredAt, a?.live], [registeredAt, false], "broker-a lapsed: listed, not live");
    assert.deepEqual([b?.registeredAt, b?.live], [registeredAt + EXPIRY_MS - 1, true]);
    assert.deepEqual(Object.keys((await t.broker.nameServer.clusterInfo()).brokerAddrTable), ["broker-b"]);
  });

  it("unregistered for 120 s: gone from /cluster and routes; sends and pulls stop; the next registration brings it back", async () => {
    const before = await get(t, "/topics/Orders/route");
    await sendToBrokerA(t);

    t.clock.advance(EXPIRY_MS);
    assert.deepEqual(await get(t, "/cluster"), { status: 200, body: { brokerAddrTable: {}, clusterAddrTable: {} } });
    const route = await get(t, "/topics/Orders/route");
    assert.equal(route.status, 404);
    assert.equal((route.body as { code: string }).code, "TOPIC_NOT_EXIST");
    await rejectsWithCode(
      t.broker.puller.pull({
        consumerGroup: "CG",
        topic: "Orders",
        brokerName: "broker-a",
        queueId: 0,
        queueOffset: 0,
      }),
      "TOPIC_NOT_EXIST",
    );
    await rejectsWithCode(
      t.broker.sender.send({ topic: "Orders", messages: [{ body: body("x") }] }),
      "SERVICE_NOT_AVAILABLE",
    );
    await rejectsWithCode(t.broker.topics.upsert("Other", {}), "SERVICE_NOT_AVAILABLE");

    await t.broker.registerBrokers();
    assert.deepEqual(await get(t, "/topics/Orders/route"), before, "the QueueData was kept meanwhile");
    const status = await t.broker.topics.status("Orders");
    assert.deepEqual(
      status.map((r) => r.maxOffset),
      [1, 0, 0, 0],
      "the refused send stored nothing",
    );
    const pulled = await pullFromBrokerA(t);
    assert.equal(pulled.pullStatus, "FOUND");
  });

  it("one broker lapses: routes, sends and admin use only the other", async () => {
    t.clock.advance(60_000);
    const b = (await t.broker.nameServer.liveBrokers()).find((x) => x.brokerName === "broker-b");
    assert.ok(b);
    await t.broker.nameServer.register([b]);
    t.clock.advance(EXPIRY_MS - 60_000);

    const cluster = await t.broker.nameServer.clusterInfo();
    assert.deepEqual(cluster.clusterAddrTable, { DefaultCluster: ["broker-b"] });
    assert.deepEqual(Object.keys(cluster.brokerAddrTable), ["broker-b"]);
    const route = await t.broker.nameServer.topicRoute("Orders");
    assert.deepEqual(
      route.queueDatas.map((q) => q.brokerName),
      ["broker-b"],
    );
    assert.deepEqual(
      route.brokerDatas.map((q) => q.brokerName),
      ["broker-b"],
    );
    for (let i = 0; i < 6; i++) {
      const sent = await t.broker.sender.send({ topic: "Orders", messages: [{ body: body(`m${i}`) }] });
      assert.equal(sent.messageQueue.brokerName, "broker-b");
    }
    await rejectsWithCode(
      t.broker.sender.send({ topic: "Orders", brokerName: "broker-a", queueId: 0, messages: [{ body: body("x") }] }),
      "PARAMETER_ILLEGAL",
    );
    await rejectsWithCode(t.broker.topics.upsert("Orders", { brokerNames: ["broker-a"] }), "PARAMETER_ILLEGAL");

    await t.broker.registerBrokers();
    assert.deepEqual(
      (await t.broker.nameServer.topicRoute("Orders")).queueDatas.map((q) => [q.brokerName, q.writeQueueNums]),
      [
        ["broker-a", 2],
        ["broker-b", 2],
      ],
    );
  });
});
