/**
 * @module POP end to end through the SDK's SimpleConsumer and the HTTP API, as a user: concurrent consumers of
 * one group share a topic (each message once while acked), an unacked message comes back with
 * deliveryAttempt 2 (the wait ended by the redelivery's deadline, not a storage loop) and ends in %DLQ%, a
 * consumer process killed with SIGKILL loses nothing, long polling wakes by the write path's hint, and
 * hostile input on the new routes is a 4xx that writes no POP state. Invisible times are the shortest
 * allowed (1 s); assertions are on states and wake causes, never on elapsed time.
 */
import assert from "node:assert/strict";
import { fork } from "node:child_process";
import { it } from "node:test";
import { fileURLToPath } from "node:url";
import { POP_TABLE } from "../../lib/broker/store/index.js";
import { Message, type MessageView, Producer, SimpleConsumer } from "../../lib/client/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { dlqTopic } from "../../lib/core/names.js";
import { endpoints } from "../../lib/protocol/index.js";
import { createTopic } from "../support/consumer-helpers.js";
import { expectError, writesNothing } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

const decode = (m: MessageView) => new TextDecoder().decode(m.body);

export function popCases(mode: ServerMode): void {
  const ctx = useTestServer(mode, { popMaxDeliveryAttempts: 2 });
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
  const consumer = async (group: string, topic: string, awaitDuration = 1000) => {
    const c = new SimpleConsumer({
      consumerGroup: group,
      endpoints: ctx.server.url,
      timeoutMs: TEST_TIMEOUT_MS,
      subscriptions: { [topic]: "*" },
      awaitDuration,
    });
    await c.startup();
    return c;
  };
  const produce = async (topic: string, bodies: string[]) => {
    const p = new Producer({
      producerGroup: uniqueName("PopP"),
      endpoints: ctx.server.url,
    });
    await p.start();
    for (const b of bodies) await p.send(new Message(topic, "TagA", b));
    await p.shutdown();
  };
  const pop = () => ctx.server.server.context.broker.pop;

  it("the documented first flow: a SimpleConsumer started before the sends receives every one (two brokers)", async () => {
    const topic = uniqueName("PopFirstFlow");
    await createTopic(api(), topic, 2);
    const c = await consumer(uniqueName("PopFirst"), topic);
    const bodies = Array.from({ length: 10 }, (_, i) => `first ${i}`);
    await produce(topic, bodies);
    const got: string[] = [];
    while (got.length < bodies.length) {
      const msgs = await c.receive(16, 30_000);
      got.push(...msgs.map(decode));
      await c.ackAll(msgs);
    }
    assert.deepEqual(got.sort(), [...bodies].sort());
    await c.shutdown();
  });

  it("over HTTP, a group's first receive from one broker fixes its start on the other broker's queues too", async () => {
    const topic = uniqueName("PopHttpStart");
    const group = uniqueName("PopHttpStart");
    await createTopic(api(), topic, 2);
    const receive = (brokerName: string) =>
      api().call(endpoints.receive, {
        body: { consumerGroup: group, topic, brokerName, invisibleDurationMs: 30_000, maxMessages: 32 },
      });
    assert.deepEqual((await receive("broker-a")).messages, []);
    const sent = new Set<string>();
    for (const brokerName of ["broker-a", "broker-b"])
      for (let i = 0; i < 5; i++)
        for (const id of (await api().send({ topic, brokerName, messages: [{ body: new Uint8Array([i]) }] })).msgIds)
          sent.add(id);
    const got = [...(await receive("broker-b")).messages, ...(await receive("broker-a")).messages];
    assert.deepEqual(new Set(got.map((m) => m.msgId)), sent);
    // A consumer's start (POST /receive/start) answers the group's start, the same whoever asks again.
    const start = { body: { consumerGroup: group, topic } };
    const first = await api().call(endpoints.startReceiving, start);
    assert.deepEqual(await api().call(endpoints.startReceiving, start), first);
  });

  it("two consumers of a group share the topic: every message once, acked", async () => {
    const topic = uniqueName("PopTopic");
    const group = uniqueName("PopGroup");
    await createTopic(api(), topic, 2);
    const [a, b] = [await consumer(group, topic, 0), await consumer(group, topic, 0)];
    const bodies = Array.from({ length: 30 }, (_, i) => `m${i}`);
    await produce(topic, bodies);
    const got: string[] = [];
    await Promise.all(
      [a, b].map(async (c) => {
        for (let empty = 0; empty < 3; ) {
          const msgs = await c.receive(8, 30_000);
          if (msgs.length === 0) empty++;
          got.push(...msgs.map(decode));
          assert.deepEqual(
            await c.ackAll(msgs),
            msgs.map(() => "OK"),
          );
        }
      }),
    );
    assert.deepEqual([...got].sort(), [...bodies].sort());
    await Promise.all([a.shutdown(), b.shutdown()]);
  });

  it("an unacked message comes back with deliveryAttempt 2 (woken by its deadline), then goes to %DLQ%", async () => {
    const topic = uniqueName("PopTopic");
    const group = uniqueName("PopGroup");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const c = await consumer(group, topic, 10_000);
    const waiting = c.receive(1, 1000);
    while (pop().waitingReceives === 0) await new Promise((r) => setTimeout(r, 5));
    await produce(topic, ["again"]);
    const [first] = await waiting;
    assert.equal(first?.deliveryAttempt, 1);
    const deadlines = pop().wakeCounts.deadline ?? 0;
    const [second] = await c.receive(1, 1000);
    assert.deepEqual([second && decode(second), second?.deliveryAttempt], ["again", 2]);
    assert.ok((pop().wakeCounts.deadline ?? 0) > deadlines, "the wait ended at the redelivery's deadline");
    await assert.rejects(c.ack(first as MessageView), { code: "INVALID_RECEIPT_HANDLE" });
    // Max attempts 2 (popMaxDeliveryAttempts): the next expiry moves it to the dead-letter queue.
    assert.deepEqual(await c.receive(1, 1000), []);
    for (let i = 0; i < 20 && (await dlqSize(group)) === 0; i++) await c.receive(1, 1000);
    assert.equal(await dlqSize(group), 1);
    await c.shutdown();
  });

  async function dlqSize(group: string): Promise<number> {
    try {
      const rows = await api().topicStatus(dlqTopic(group));
      return rows.reduce((n, r) => n + r.maxOffset - r.minOffset, 0);
    } catch {
      return 0;
    }
  }

  it("a consumer process killed with SIGKILL loses nothing: its messages come back", async () => {
    const topic = uniqueName("PopTopic");
    const group = uniqueName("PopGroup");
    await createTopic(api(), topic, 2);
    const c = await consumer(group, topic, 2000);
    await c.receive(1, 10_000);
    const bodies = Array.from({ length: 6 }, (_, i) => `k${i}`);
    await produce(topic, bodies);
    const child = fork(
      fileURLToPath(new URL("../support/simple-consumer-process.ts", import.meta.url)),
      [ctx.server.url, group, topic, "4", "1000"],
      { execArgv: ["--import", "tsx"] },
    );
    const held = await new Promise<string[]>((resolve, reject) => {
      child.once("message", (m) => resolve((m as { held: string[] }).held));
      child.once("exit", (code) => reject(new Error(`the consumer process exited (${code})`)));
    });
    child.removeAllListeners("exit");
    child.kill("SIGKILL");
    const got = new Map<string, number>();
    for (let i = 0; i < 30 && got.size < bodies.length; i++) {
      const msgs = await c.receive(8, 30_000);
      for (const m of msgs) got.set(decode(m), m.deliveryAttempt);
      await c.ackAll(msgs);
    }
    assert.deepEqual([...got.keys()].sort(), [...bodies].sort());
    for (const h of held) assert.equal(got.get(h), 2, `${h} came back as a second delivery`);
    await c.shutdown();
  });

  it("long polling: a waiting receive wakes on a send by the write path's hint", async () => {
    const topic = uniqueName("PopTopic");
    const group = uniqueName("PopGroup");
    await createTopic(api(), topic, 2);
    const setup = await consumer(group, topic, 0);
    await setup.receive(1, 10_000); // sets the group's start
    await setup.shutdown();
    const c = await consumer(group, topic, 20_000);
    const hints = pop().wakeCounts.hint ?? 0;
    const waiting = c.receive(4, 10_000);
    while (pop().waitingReceives === 0) await new Promise((r) => setTimeout(r, 5));
    await produce(topic, ["wake"]);
    assert.deepEqual((await waiting).map(decode), ["wake"]);
    assert.equal(pop().wakeCounts.hint, hints + 1);
    await c.shutdown();
  });

  it("hostile input on /receive, /ack and /change-invisible-duration: 4xx, no POP state written", async () => {
    const topic = uniqueName("PopTopic");
    const group = uniqueName("PopGroup");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const http = ctx.http;
    const base = { consumerGroup: group, topic, invisibleDurationMs: 10_000 };
    const bad: [string, unknown, number, string][] = [
      ["/receive", { ...base, maxMessages: 0 }, 400, "PARAMETER_ILLEGAL"],
      ["/receive", { ...base, maxMessages: 33 }, 400, "PARAMETER_ILLEGAL"],
      ["/receive", { ...base, invisibleDurationMs: 10 }, 400, "PARAMETER_ILLEGAL"],
      ["/receive", { ...base, awaitDurationMs: 20_001 }, 400, "PARAMETER_ILLEGAL"],
      ["/receive", { ...base, filterExpression: { type: "XPATH", expression: "*" } }, 400, "PARAMETER_ILLEGAL"],
      [
        "/receive",
        { ...base, filterExpression: { type: "TAG", expression: "x".repeat(5000) } },
        400,
        "PARAMETER_ILLEGAL",
      ],
      ["/receive", { ...base, filterExpression: { type: "TAG", expression: "||" } }, 400, "PARAMETER_ILLEGAL"],
      ["/receive", { ...base, filterExpression: { type: "SQL92", expression: "a >" } }, 400, "PARAMETER_ILLEGAL"],
      ["/receive", { ...base, consumerGroup: "bad group" }, 400, "PARAMETER_ILLEGAL"],
      ["/receive", { ...base, extra: 1 }, 400, "PARAMETER_ILLEGAL"],
      ["/receive", { ...base, topic: "NoSuchTopicPop" }, 404, "TOPIC_NOT_EXIST"],
      ["/ack", { consumerGroup: group, topic, receiptHandles: [] }, 400, "PARAMETER_ILLEGAL"],
      ["/ack", { consumerGroup: group, topic, receiptHandles: Array(65).fill("a") }, 400, "PARAMETER_ILLEGAL"],
      ["/ack", { consumerGroup: group, topic, receiptHandles: ["x".repeat(513)] }, 400, "PARAMETER_ILLEGAL"],
      ["/change-invisible-duration", { ...base, receiptHandle: "forged" }, 400, "INVALID_RECEIPT_HANDLE"],
      ["/change-invisible-duration", { ...base, receiptHandle: "x", invisibleDurationMs: 0 }, 400, "PARAMETER_ILLEGAL"],
    ];
    await writesNothing(http, [topic], async () => {
      for (const [path, body, status, code] of bad) expectError(await http.post(path, body), status, code);
      const forged = await http.post<{ entries: { code: string }[] }>("/ack", {
        consumerGroup: group,
        topic,
        receiptHandles: ["forged", Buffer.from('[1,"broker-a",0,0,0,1,"0123456789abcdef",0]').toString("base64url")],
      });
      assert.equal(forged.status, 200);
      assert.deepEqual(
        forged.body.entries.map((e) => e.code),
        ["INVALID_RECEIPT_HANDLE", "INVALID_RECEIPT_HANDLE"],
      );
    });
    const pop = ctx.server.server.storage.table(POP_TABLE);
    for (const pk of [
      `pop:${group}:${topic}:broker-a:0`,
      `popgroup:${group}:${topic}`,
      `popgroup:${group}:NoSuchTopicPop`,
    ])
      assert.deepEqual((await pop.query(pk)).items, [], `no POP state for the group (${pk})`);
    const groups = await ctx.http.get<{ groups: { group: string }[] }>("/groups");
    assert.ok(!JSON.stringify(groups.body).includes(group), "the group was not recorded either");
  });
}
