/**
 * @module `nimbus proxy --dispatch-function` as the built CLI runs it (what the ECS task of infra/grpc.ts runs,
 * the name in NIMBUS_DISPATCH_FUNCTION): a send by RocketMQ's official Node.js client to a topic with a
 * subscription invokes that function through the AWS SDK's Lambda client, an `Event` invocation of
 * `{"topic", "until"}`, against the Invoke-API test server (AWS_ENDPOINT_URL_LAMBDA); a send to a topic
 * without one invokes nothing. The stage's own broker (topics, the subscription) runs in this process first,
 * on the same data folder. Asserted on the invocations the server saw, never on elapsed time.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Producer } from "rocketmq-client-nodejs";
import { createBroker } from "../../lib/config/create-broker.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import { SubscriptionDefinitionSchema } from "../../lib/protocol/index.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import { ensureBuilt, type RunningCli, spawnNimbus } from "../support/cli-runner.js";
import { waitUntil } from "../support/consumer-helpers.js";
import { quietLogger } from "../support/grpc-fixture.js";
import { type InvokeApiServer, startInvokeApiServer } from "../support/invoke-api-server.js";
import { LOCAL_WEBHOOKS, TEST_SEAL_KEY } from "../support/stage-keys.js";

const SUBSCRIBED = "WakeSubscribed";
const UNSUBSCRIBED = "WakeQuiet";

describe("nimbus proxy --dispatch-function wakes Dispatch over Lambda's Invoke API", () => {
  let dataDir: string;
  let invoke: InvokeApiServer;
  let proxy: RunningCli;
  let endpoint = "";

  before(async () => {
    await ensureBuilt();
    dataDir = mkdtempSync(path.join(tmpdir(), "nimbus-proxy-wake-"));
    const storage = createLocalStorage({ dataDir });
    try {
      const stage = createBroker(storage, LOCAL_WEBHOOKS, {
        apiUrl: "http://127.0.0.1:1",
        newMessageId,
        sealKey: TEST_SEAL_KEY,
      });
      await stage.registerBrokers();
      for (const topic of [SUBSCRIBED, UNSUBSCRIBED])
        await stage.topics.upsert(topic, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
      const target = { type: "http", url: "https://example.com/hook", secret: "0123456789abcdef" };
      await stage.subscriptions.put("WakeSub", SubscriptionDefinitionSchema.parse({ topic: SUBSCRIBED, target }));
      await stage.timers.settled();
    } finally {
      await storage.close();
    }
    invoke = await startInvokeApiServer({ "nimbus-ci-Dispatch": async () => ({}) });
    proxy = spawnNimbus(["proxy", "--port", "0", "--storage", "local", "--data-dir", dataDir], {
      env: {
        NIMBUS_DISPATCH_FUNCTION: "nimbus-ci-Dispatch",
        AWS_ENDPOINT_URL_LAMBDA: invoke.url,
        AWS_REGION: "us-east-1",
        AWS_ACCESS_KEY_ID: "test",
        AWS_SECRET_ACCESS_KEY: "test",
      },
    });
    await proxy.waitForStdout(/gRPC proxy on \S+:\d+.*Ctrl-C/);
    assert.match(proxy.stdout(), /waking nimbus-ci-Dispatch/, "the proxy took the function from its environment");
    endpoint = /gRPC proxy on (\S+:\d+)/.exec(proxy.stdout())?.[1] ?? "";
  });

  after(async () => {
    proxy?.child.kill("SIGTERM");
    await proxy?.exited;
    await invoke?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("a send to the subscribed topic invokes the function; one to another topic does not", async () => {
    const producer = new Producer({ endpoints: endpoint, namespace: "", logger: quietLogger(), maxAttempts: 1 });
    await producer.startup();
    try {
      // The quiet topic first: its wake finds no subscription before the subscribed one's claim is even tried.
      await producer.send({ topic: UNSUBSCRIBED, body: Buffer.from("nobody listens") });
      await producer.send({ topic: SUBSCRIBED, body: Buffer.from("wake up") });
      await waitUntil(
        () => (invoke.invocations.get("nimbus-ci-Dispatch")?.length ?? 0) > 0,
        "the proxy invoked Dispatch",
      );
    } finally {
      await producer.shutdown();
    }
    const events = invoke.invocations.get("nimbus-ci-Dispatch") ?? [];
    assert.deepEqual(
      events.map((e) => (e as { topic?: unknown }).topic),
      [SUBSCRIBED],
      "one Event invocation, for the subscribed topic only",
    );
    const [event] = events as { until?: unknown }[];
    assert.equal(typeof event?.until, "number", "the event carries the wake window's end");
  });
});
