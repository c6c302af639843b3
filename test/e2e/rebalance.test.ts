/**
 * E2E rebalance of push consumers against the local server: 3 consumers share 8 queues (4 on broker-a,
 * 4 on broker-b) as 3/3/2 and really receive from those queues only; when one shuts down the others
 * take its queues over in one rebalance with nothing lost (messages sent before, during and after);
 * 6 consumers on 5 queues leave one idle. Numbers (sent, received, duplicates, rebalance time) are printed.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { MessageListenerConcurrently } from "../../lib/client/consumer/consumer-options.js";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import {
  createTopic,
  fastTimings,
  Received,
  report,
  type Sent,
  sendRoundRobin,
  waitUntil,
} from "../support/consumer-helpers.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

describe("rebalance of push consumers (local server)", () => {
  const ctx = useTestServer("local");
  const open: PushConsumer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.shutdown()));
  });

  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

  async function startConsumers(
    group: string,
    topic: string,
    n: number,
    received: Received,
    listener?: (c: PushConsumer) => MessageListenerConcurrently,
  ) {
    const consumers: PushConsumer[] = [];
    for (let i = 0; i < n; i++) {
      const c = new PushConsumer({
        consumerGroup: group,
        endpoints: ctx.server.url,
        consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
        ...fastTimings(),
      });
      c.subscribe(topic, "*");
      c.registerMessageListener(listener ? listener(c) : received.listener(c.clientId));
      open.push(c);
      consumers.push(c);
    }
    await Promise.all(consumers.map((c) => c.start()));
    return consumers;
  }

  /** Waits until the consumers' assignments are disjoint, cover `total` queues and have these sizes. */
  async function settled(consumers: PushConsumer[], total: number, sizes: number[]) {
    await waitUntil(
      () => {
        const shares = consumers.map((c) => c.assignedQueues().map((q) => q.key()));
        const all = new Set(shares.flat());
        const got = shares.map((s) => s.length).sort((a, b) => b - a);
        return all.size === total && shares.flat().length === total && got.join() === sizes.join();
      },
      `assignments of sizes ${sizes.join("/")} over ${total} queues`,
    );
  }

  it("3 consumers on 8 queues (4 on broker-a, 4 on broker-b) receive from 3, 3 and 2 queues", async () => {
    const topic = uniqueName("Rebalance3of8");
    const queues = await createTopic(api(), topic, 4);
    const received = new Received();
    const consumers = await startConsumers(uniqueName("g3of8"), topic, 3, received);
    await settled(consumers, 8, [3, 3, 2]);

    const sent = await sendRoundRobin(api(), queues, 160, "m");
    const ids = sent.map((s) => s.msgId);
    await waitUntil(() => received.has(ids), "every message received");
    for (const c of consumers) {
      const assigned = new Set(c.assignedQueues().map((q) => q.key()));
      const from = received.queuesOf(c.clientId);
      assert.deepEqual([...from].sort(), [...assigned].sort(), `${c.clientId} received from its own queues only`);
    }
    assert.deepEqual(consumers.map((c) => received.queuesOf(c.clientId).size).sort(), [2, 3, 3]);
    report("3 consumers / 8 queues", {
      ...received.summary(sent.length),
      perConsumer: consumers.map((c) => received.distinctOf(c.clientId).size).join("/"),
    });
    assert.equal(received.duplicates, 0, "no rebalance happened while consuming, so no duplicates");
  });

  it("when one of 3 shuts down the others take its queues over in one rebalance, losing nothing", async () => {
    const topic = uniqueName("RebalanceTakeover");
    const queues = await createTopic(api(), topic, 4);
    const received = new Received();
    const consumers = await startConsumers(uniqueName("gTakeover"), topic, 3, received);
    await settled(consumers, 8, [3, 3, 2]);

    const sent: Sent[] = await sendRoundRobin(api(), queues, 80, "before");
    await waitUntil(() => received.has(sent.map((s) => s.msgId)), "messages sent before received");

    // Keep sending while the consumer leaves and the others rebalance.
    let sending = true;
    const during = (async () => {
      for (let i = 0; sending; i++) sent.push(...(await sendRoundRobin(api(), queues.slice(i % 8), 1, `during-${i}`)));
    })();
    const leaving = consumers.find((c) => c.assignedQueues().length === 3) as PushConsumer;
    const staying = consumers.filter((c) => c !== leaving);
    const roundsBefore = staying.map((c) => c.rebalanceRounds);
    const t0 = Date.now();
    await leaving.shutdown();
    const shutdownMs = Date.now() - t0;
    await settled(staying, 8, [4, 4]);
    const rebalanceMs = Date.now() - t0 - shutdownMs;
    const rounds = staying.map((c, i) => c.rebalanceRounds - (roundsBefore[i] ?? 0));
    sending = false;
    await during;
    const duringCount = sent.length - 80;
    sent.push(...(await sendRoundRobin(api(), queues, 80, "after")));

    const ids = sent.map((s) => s.msgId);
    await waitUntil(() => received.has(ids), "every message sent before, during and after received");
    assert.deepEqual(received.missing(ids), []);
    const takenOver = new Set(staying.flatMap((c) => c.assignedQueues().map((q) => q.key())));
    assert.equal(takenOver.size, 8);
    report("takeover after shutdown", {
      ...received.summary(sent.length),
      sentDuring: duringCount,
      deliveries: received.deliveries,
      shutdownMs,
      rebalanceMsAfterShutdown: rebalanceMs,
      roundsUntilSettled: rounds.join("/"),
    });
  });

  it("consumers joining a busy consumer take queues over mid-stream, losing nothing (duplicates allowed)", async () => {
    const topic = uniqueName("RebalanceJoin");
    const queues = await createTopic(api(), topic, 4);
    const received = new Received();
    const group = uniqueName("gJoin");
    // Slow listeners keep calls running when the rebalance takes queues away.
    const slow = (c: PushConsumer): MessageListenerConcurrently => {
      const record = received.listener(c.clientId);
      return async (msgs, context) => {
        await new Promise((resolve) => setTimeout(resolve, 3));
        return record(msgs, context);
      };
    };
    const [first] = await startConsumers(group, topic, 1, received, slow);
    await settled([first as PushConsumer], 8, [8]);
    const sent: Sent[] = [];
    let sending = true;
    const during = (async () => {
      for (let i = 0; sending; i++) sent.push(...(await sendRoundRobin(api(), queues.slice(i % 8), 1, `join-${i}`)));
    })();
    await waitUntil(() => sent.length >= 60, "some messages in flight");
    const joiners = await startConsumers(group, topic, 2, received, slow);
    await settled([first as PushConsumer, ...joiners], 8, [3, 3, 2]);
    await waitUntil(() => sent.length >= 150, "more messages after the rebalance");
    sending = false;
    await during;
    const ids = sent.map((s) => s.msgId);
    await waitUntil(() => received.has(ids), "every message received");
    assert.deepEqual(received.missing(ids), []);
    report("2 consumers join a busy one", { ...received.summary(sent.length), deliveries: received.deliveries });
  });

  it("6 consumers on 5 queues leave exactly one idle, and it receives nothing", async () => {
    const topic = uniqueName("Rebalance6of5");
    const queues = await createTopic(api(), topic, 5, ["broker-a"]);
    const received = new Received();
    const consumers = await startConsumers(uniqueName("g6of5"), topic, 6, received);
    await settled(consumers, 5, [1, 1, 1, 1, 1, 0]);
    const idle = consumers.filter((c) => c.assignedQueues().length === 0);
    assert.equal(idle.length, 1);

    const sent = await sendRoundRobin(api(), queues, 50, "m");
    await waitUntil(() => received.has(sent.map((s) => s.msgId)), "every message received");
    assert.equal(received.distinctOf(idle[0]?.clientId ?? "").size, 0);
    report("6 consumers / 5 queues", { ...received.summary(sent.length), idle: idle.length });
  });
});
