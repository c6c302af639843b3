/**
 * @module The send-time wake on the AWS adapters (dynalite + s3rver): the Send function's handler (one container's
 * broker) appends to a subscribed topic, writes the topic's wake marker with its conditional put, and invokes the
 * real `Dispatch` handler through the AWS SDK's Lambda client (an `Event` invocation) against the Invoke-API test
 * server; Dispatch, in a container of its own, delivers to a plain `node:http` target. Asserted on the path taken:
 * the marker, the invocations and their events, the target's deliveries; never on elapsed time.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { dispatchHandler } from "../../functions/dispatch.js";
import { registerBrokers } from "../../functions/register-brokers.js";
import { serviceHandler } from "../../functions/shared/api-handler.js";
import { ROUTES_TABLE } from "../../lib/broker/store/index.js";
import { type DispatchWake, WAKE_MARKER_PREFIX } from "../../lib/broker/subscriptions/index.js";
import { createBroker } from "../../lib/config/create-broker.js";
import { attachDispatchWake, dispatchInvoker } from "../../lib/config/dispatch-wake.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import type { HandlerContext } from "../../lib/http/context.js";
import type { Storage } from "../../lib/storage/storage.js";
import { apiGatewayEvent } from "../support/api-gateway-event.js";
import { openAwsFixture } from "../support/aws-fixture.js";
import { EMULATOR_CREDENTIALS } from "../support/emulators.js";
import { type InvokeApiServer, startInvokeApiServer } from "../support/invoke-api-server.js";
import { LOCAL_WEBHOOKS, TEST_SEAL_KEY } from "../support/stage-keys.js";
import type { StorageFixture } from "../support/storage-fixture.js";
import { startWebhookTarget, type WebhookTarget } from "../support/webhook-target.js";

const TEST = { timeout: 180_000 };
const SECRET = "0123456789abcdef";
/** Bound of every wait for an asynchronous Dispatch run (a guard on a loaded machine, not a speed requirement). */
const RUN_BOUND_MS = 60_000;

/** A broker of its own, as each Lambda function's container has. */
function container(storage: Storage): HandlerContext {
  const broker = createBroker(storage, LOCAL_WEBHOOKS, {
    apiUrl: "https://api.test",
    newMessageId,
    sealKey: TEST_SEAL_KEY,
  });
  return { broker, role: { kind: "all" } };
}

const text = (s: string): string => Buffer.from(s).toString("base64");

describe("send-time wake of Dispatch (AWS adapters: dynalite + s3rver)", () => {
  let fx: StorageFixture;
  let invoke: InvokeApiServer;
  let target: WebhookTarget;
  let lambda: LambdaClient;
  let admin: HandlerContext;
  /** Dispatch's handler waits for this gate before it runs (opened at once unless a test holds it). */
  let gate: Promise<void> = Promise.resolve();
  const contexts: HandlerContext[] = [];

  /** A Send function container: its handler, and its broker's wake (window `windowMs`). */
  async function sendContainer(
    windowMs?: number,
    functionName = "Dispatch",
  ): Promise<{ send: (topic: string, body: string) => Promise<void>; wake: DispatchWake }> {
    const ctx = container(await fx.reopen());
    const wake: DispatchWake = attachDispatchWake(
      ctx.broker,
      dispatchInvoker(() => lambda, functionName),
      windowMs === undefined ? {} : { windowMs },
    );
    ctx.dispatchWake = wake;
    contexts.push(ctx);
    const handler = serviceHandler("Send", async () => ctx);
    return {
      wake,
      send: async (topic, body) => {
        const message = { body: text(body) };
        const result = await handler(apiGatewayEvent("POST", "/send", { topic, messages: [message] }));
        assert.equal(result.statusCode, 200, result.body);
        // The handler waits for its wake at most WAKE_SETTLE_MS; a loaded machine may need longer (bounded).
        await wake.settle(RUN_BOUND_MS);
      },
    };
  }

  async function admin200(service: "Topics" | "Subscriptions", method: string, url: string, body: unknown) {
    const result = await serviceHandler(service, async () => admin)(apiGatewayEvent(method, url, body));
    assert.equal(result.statusCode, 200, result.body);
  }

  const marker = (topic: string) =>
    fx.storage.table(ROUTES_TABLE).get({ pk: `${WAKE_MARKER_PREFIX}${topic}`, sk: "-" }, { consistent: true });
  const dispatchEvents = () => invoke.invocations.get("Dispatch") ?? [];
  const deliveredBodies = () => target.deliveries.flatMap((d) => d.bodies);

  before(async () => {
    fx = await openAwsFixture();
    admin = container(await fx.reopen());
    contexts.push(admin);
    await registerBrokers(admin);
    const dispatch = container(await fx.reopen());
    contexts.push(dispatch);
    const realDispatch = dispatchHandler(async () => dispatch);
    invoke = await startInvokeApiServer({
      Dispatch: async (event) => {
        await gate;
        return realDispatch(event);
      },
    });
    lambda = new LambdaClient({ endpoint: invoke.url, region: "us-east-1", credentials: EMULATOR_CREDENTIALS });
    target = await startWebhookTarget(SECRET, () => ({ status: 200 }));
    for (const topic of ["Orders", "Bursts", "Plain"])
      await admin200("Topics", "PUT", `/topics/${topic}`, { writeQueueNums: 1, readQueueNums: 1 });
    for (const [group, topic] of [
      ["OrdersSub", "Orders"],
      ["BurstsSub", "Bursts"],
    ] as const)
      await admin200("Subscriptions", "PUT", `/subscriptions/${group}`, {
        topic,
        target: { type: "http", url: target.url, secret: SECRET },
      });
  });

  after(async () => {
    await invoke?.asyncRuns(RUN_BOUND_MS);
    await invoke?.close();
    await target?.close();
    lambda?.destroy();
    await fx?.cleanup();
  });

  it(
    "a send to a subscribed topic after idle writes the marker, invokes Dispatch with the topic, and is delivered",
    TEST,
    async () => {
      const { send } = await sendContainer();
      await send("Orders", "after-idle");
      const written = await marker("Orders");
      assert.ok(written !== undefined && typeof written.until === "number", "the wake marker was written");
      assert.deepEqual(
        dispatchEvents().map((e) => (e as { topic?: unknown }).topic),
        ["Orders"],
        "Dispatch was invoked once, with the topic",
      );
      assert.equal((dispatchEvents()[0] as { until?: unknown }).until, written.until, "the event names the window");
      assert.ok(await invoke.asyncRuns(RUN_BOUND_MS), "the Dispatch run ended");
      assert.deepEqual(deliveredBodies(), ["after-idle"], "the target got the message through the wake");
    },
  );

  it("two sends in one window, from two containers, make one invoke; both messages are delivered", TEST, async () => {
    const before = dispatchEvents().length;
    let open = () => {};
    gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    // A window far longer than the test: the second send falls in it, whatever the machine's load.
    const a = await sendContainer(10 * 60_000);
    const b = await sendContainer(10 * 60_000);
    await a.send("Bursts", "burst-1");
    await b.send("Bursts", "burst-2");
    open();
    assert.equal(dispatchEvents().length - before, 1, "one Dispatch invoke for the two sends");
    assert.deepEqual([a.wake.stats.invoked, b.wake.stats.lost], [1, 1], "the second container lost the marker's put");
    assert.ok(await invoke.asyncRuns(RUN_BOUND_MS), "the Dispatch run ended");
    assert.deepEqual(
      deliveredBodies()
        .filter((b) => b.startsWith("burst-"))
        .sort(),
      ["burst-1", "burst-2"],
      "the one run delivered both",
    );
  });

  it("a send to a topic without subscriptions writes no marker and invokes nothing", TEST, async () => {
    const before = dispatchEvents().length;
    const { send } = await sendContainer();
    await send("Plain", "nobody-listens");
    assert.equal(await marker("Plain"), undefined, "no wake marker for a topic without subscriptions");
    assert.equal(dispatchEvents().length, before, "no Dispatch invoke");
  });

  it("a failed invoke never fails the send: it is counted, and the message waits for the backstop", TEST, async () => {
    const { send, wake } = await sendContainer(undefined, "NoSuchFunction");
    // Past the window of the first test's marker (its `until` is a second after that send; real time, bounded).
    const first = await marker("Orders");
    const wait = typeof first?.until === "number" ? Math.min(2_000, first.until + 1 - Date.now()) : 0;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await send("Orders", "invoke-fails");
    assert.deepEqual([wake.stats.claims, wake.stats.invoked, wake.stats.errors], [1, 0, 1], "claimed, invoke failed");
    const run = await dispatchHandler(async () => contexts[0] as HandlerContext)({ source: "aws.events" });
    assert.ok(run.delivered >= 1, "the schedule's run delivers it");
    assert.ok(deliveredBodies().includes("invoke-fails"));
  });
});
