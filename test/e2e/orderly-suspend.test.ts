/**
 * E2E of SUSPEND_CURRENT_QUEUE_A_MOMENT and of the new endpoints' input checks, on the local
 * server: a suspended batch is delivered again, the same messages with `reconsumeTimes` one higher, and
 * nothing after it is delivered or committed meanwhile; without `maxReconsumeTimes` it keeps being retried
 * (RocketMQ's orderly default), with one it goes to `%DLQ%<group>` past it and the queue moves on. Bad input to the lock, unlock, reset and status endpoints
 * is a 4xx with `{code, message}` and writes nothing. A running lite pull consumer follows a reset by time too.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { LitePullConsumer } from "../../lib/client/consumer/lite-pull-consumer.js";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { fastTimings, freshTopicOnBrokerA, waitUntil } from "../support/consumer-helpers.js";
import { expectError, ok, snapshot } from "../support/http.js";
import { useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

describe("orderly consumption: SUSPEND and bad input", () => {
  const ctx = useTestServer("local");
  const open: PushConsumer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.shutdown()));
  });
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

  /** The cases' consumer options: the group from its first offset, fast timings. */
  const firstOffsetOptions = (group: string) => ({
    consumerGroup: group,
    endpoints: ctx.server.url,
    timeoutMs: TEST_TIMEOUT_MS,
    ...fastTimings(),
    consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET" as const,
  });

  it("SUSPEND redelivers the same batch, holds the queue and its offset, and keeps retrying without maxReconsumeTimes", async () => {
    const { topic, group } = await freshTopicOnBrokerA(api(), "Suspend", 1, 8);
    const deliveries: [number, number][] = [];
    let failing = true;
    const consumer = new PushConsumer({
      ...firstOffsetOptions(group),
      suspendCurrentQueueTimeMillis: 20,
    });
    open.push(consumer);
    consumer.subscribe(topic, "*");
    consumer.registerMessageListenerOrderly((msgs) => {
      const m = msgs[0];
      if (m === undefined) return "SUCCESS";
      deliveries.push([Number(m.bodyText), m.reconsumeTimes]);
      if (m.bodyText !== "3" || !failing) return "SUCCESS";
      if (m.reconsumeTimes === 1) throw new Error("a throw counts as SUSPEND");
      return "SUSPEND_CURRENT_QUEUE_A_MOMENT";
    });
    await consumer.start();
    await waitUntil(
      () => deliveries.filter(([n]) => n === 3).length >= 6,
      "message 3 retried 6 times (no bound by default)",
      TEST_TIMEOUT_MS,
    );
    await waitUntil(
      async () => (await api().queryOffsets(group, topic))[0]?.offset === 3,
      "offsets 0..2 committed",
      TEST_TIMEOUT_MS,
    );
    assert.ok(!deliveries.some(([n]) => n > 3), "nothing after the suspended message was delivered");
    failing = false;
    await waitUntil(() => deliveries.some(([n]) => n === 7), "the rest delivered", TEST_TIMEOUT_MS);
    const threes = deliveries.filter(([n]) => n === 3);
    assert.deepEqual(
      threes.map(([, times]) => times),
      threes.map((_, i) => i),
      "each redelivery one reconsumeTimes higher",
    );
    assert.deepEqual(
      deliveries.filter(([n]) => n !== 3),
      [0, 1, 2, 4, 5, 6, 7].map((n) => [n, 0]),
    );
    await waitUntil(async () => (await api().queryOffsets(group, topic))[0]?.offset === 8, "all committed");
  });

  it("past maxReconsumeTimes the suspended message goes to %DLQ%<group> and the queue moves on", async () => {
    const { topic, group } = await freshTopicOnBrokerA(api(), "OrderlyDlq", 1, 6);
    const deliveries: [number, number][] = [];
    const consumer = new PushConsumer({
      ...firstOffsetOptions(group),
      suspendCurrentQueueTimeMillis: 20,
      maxReconsumeTimes: 2,
    });
    open.push(consumer);
    consumer.subscribe(topic, "*");
    consumer.registerMessageListenerOrderly((msgs) => {
      const m = msgs[0];
      if (m === undefined || m.topic !== topic) return "SUCCESS";
      deliveries.push([Number(m.bodyText), m.reconsumeTimes]);
      return m.bodyText === "3" ? "SUSPEND_CURRENT_QUEUE_A_MOMENT" : "SUCCESS";
    });
    await consumer.start();
    await waitUntil(() => deliveries.some(([n]) => n === 5), "the queue moved on past message 3", TEST_TIMEOUT_MS);
    assert.deepEqual(
      deliveries.filter(([n]) => n === 3),
      [
        [3, 0],
        [3, 1],
        [3, 2],
      ],
      "delivered 1 + maxReconsumeTimes times, then sent to the DLQ",
    );
    const dlq = `%DLQ%${group}`;
    const route = await api().topicRoute(dlq);
    const stored = [];
    for (const qd of route.queueDatas) {
      for (let queueId = 0; queueId < qd.readQueueNums; queueId++) {
        const res = await api().pull({
          consumerGroup: "inspect",
          topic: dlq,
          brokerName: qd.brokerName,
          queueId,
          queueOffset: 0,
        });
        stored.push(...res.messages.map((m) => new TextDecoder().decode(m.body)));
      }
    }
    assert.deepEqual(stored, ["3"]);
    await waitUntil(async () => (await api().queryOffsets(group, topic))[0]?.offset === 6, "all committed");
  });

  it("a running LitePullConsumer follows resetOffsetByTime: it polls exactly what was stored after the time", async () => {
    const { topic, group } = await freshTopicOnBrokerA(api(), "LiteReset", 2);
    const send = (body: string) =>
      Promise.all(
        [0, 1].map((queueId) =>
          api().send({
            topic,
            brokerName: "broker-a",
            queueId,
            messages: Array.from({ length: 3 }, () => ({ body: new TextEncoder().encode(body) })),
          }),
        ),
      );
    await send("early");
    const middle = Date.now() + 1;
    await waitUntil(() => Date.now() > middle, "the clock passed the middle");
    await send("late");
    const lite = new LitePullConsumer({
      consumerGroup: group,
      endpoints: ctx.server.url,
      timeoutMs: TEST_TIMEOUT_MS,
      ...fastTimings(),
      consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
    });
    lite.subscribe(topic, "*");
    await lite.start();
    try {
      const polled: string[] = [];
      while (polled.length < 12) for (const m of await lite.poll(1000)) polled.push(m.bodyText);
      await api().resetOffsetByTime(group, topic, middle);
      const again: string[] = [];
      while (again.length < 6) for (const m of await lite.poll(1000)) again.push(m.bodyText);
      assert.deepEqual(again, Array(6).fill("late"));
      assert.deepEqual(await lite.poll(300), [], "nothing more");
    } finally {
      await lite.shutdown();
    }
  });

  it("bad input to the lock, unlock, locks, reset and status endpoints: 4xx, nothing written", async () => {
    const { topic, group } = await freshTopicOnBrokerA(api(), "BadOrderly", 2);
    const http = ctx.http;
    const before = await snapshot(http, [topic], [group]);
    const locksBefore = ok(await http.get(`/offsets/${group}/${topic}/locks`));
    const q0 = { brokerName: "broker-a", queueId: 0 };
    const cases: [string, string, unknown, number, string][] = [
      [
        "post",
        `/offsets/${group}/${topic}/lock`,
        { clientId: "c1", queues: [{ brokerName: "broker-a", queueId: 9 }] },
        400,
        "PARAMETER_ILLEGAL",
      ],
      ["post", `/offsets/${group}/${topic}/lock`, { clientId: "c1", queues: [q0, q0] }, 400, "PARAMETER_ILLEGAL"],
      ["post", `/offsets/${group}/${topic}/lock`, { clientId: "c1", queues: [] }, 400, "PARAMETER_ILLEGAL"],
      ["post", `/offsets/${group}/${topic}/lock`, { clientId: "has blank", queues: [q0] }, 400, "PARAMETER_ILLEGAL"],
      [
        "post",
        `/offsets/${group}/${topic}/lock`,
        { clientId: "c1", queues: [{ ...q0, extra: 1 }] },
        400,
        "PARAMETER_ILLEGAL",
      ],
      [
        "post",
        `/offsets/${group}/NoSuchTopic${Date.now()}/lock`,
        { clientId: "c1", queues: [q0] },
        404,
        "TOPIC_NOT_EXIST",
      ],
      [
        "post",
        `/offsets/${group}/${topic}/unlock`,
        { clientId: "c1", queues: [{ brokerName: "broker-z", queueId: 0 }] },
        400,
        "PARAMETER_ILLEGAL",
      ],
      ["post", `/offsets/${group}/${topic}/reset-by-time`, { timestamp: "yesterday" }, 400, "PARAMETER_ILLEGAL"],
      ["post", `/offsets/${group}/${topic}/reset-by-time`, { timestamp: -1 }, 400, "PARAMETER_ILLEGAL"],
      ["post", `/offsets/${group}/${topic}/reset-by-time`, {}, 400, "PARAMETER_ILLEGAL"],
      [
        "post",
        `/offsets/${group}/NoSuchTopic${Date.now()}/reset-by-time`,
        { timestamp: "now" },
        404,
        "TOPIC_NOT_EXIST",
      ],
      ["get", "/groups/bad%20group/status", undefined, 400, "PARAMETER_ILLEGAL"],
      [
        "post",
        "/heartbeat",
        { clientId: "c1", consumerDataSet: [{ groupName: group, runningInfo: { consumeOrderly: "yes" } }] },
        400,
        "PARAMETER_ILLEGAL",
      ],
    ];
    for (const [method, path, body, status, code] of cases) {
      const answer = method === "get" ? await http.get(path) : await http.post(path, body);
      expectError(answer, status, code);
    }
    assert.deepEqual(await snapshot(http, [topic], [group]), before);
    assert.deepEqual(ok(await http.get(`/offsets/${group}/${topic}/locks`)), locksBefore);
    assert.deepEqual(ok(await http.get(`/groups/${group}/consumers`)), {
      consumerIdList: [],
      consumers: [],
      subscriptionsConsistent: true,
      offsetResets: [],
    });
  });
});
