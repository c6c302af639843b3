/**
 * E2E cases of the push consumer against the local server: broadcasting (each of 2 consumers gets
 * everything, offsets in local files, none on the broker), two groups each get every message, per-key
 * order of hash-routed sends, CONSUME_FROM_FIRST/LAST/TIMESTAMP for a new group (LAST: from the consumer's start,
 * on queues and topics that appear later too), and offsets committed at shutdown. RECONSUME_LATER (retry topic, dead letters): retry-delay-suite.ts.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, afterEach, describe, it } from "node:test";
import type { PushConsumerOptions } from "../../lib/client/consumer/consumer-options.js";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import type { MessageQueue } from "../../lib/core/message-queue.js";
import { javaStringHashCode } from "../../lib/core/subscription.js";
import { createTopic, fastTimings, Received, report, sendRoundRobin, waitUntil } from "../support/consumer-helpers.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

describe("PushConsumer (local server)", () => {
  const ctx = useTestServer("local");
  const dir = mkdtempSync(path.join(os.tmpdir(), "nimbus-push-offsets-"));
  const open: PushConsumer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.shutdown()));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

  async function consumer(
    group: string,
    topic: string,
    listen: Received | PushConsumerOptions["onError"] | null,
    extra: Partial<PushConsumerOptions> = {},
    name?: string,
  ) {
    const c = new PushConsumer({ consumerGroup: group, endpoints: ctx.server.url, ...fastTimings(), ...extra });
    c.subscribe(topic, "*");
    if (listen instanceof Received) c.registerMessageListener(listen.listener(name ?? c.clientId));
    open.push(c);
    return c;
  }

  /** Waits until `c` pulls `n` queues and has committed where it starts on each. */
  async function ready(c: PushConsumer, n: number, group: string, topic: string) {
    await waitUntil(() => c.assignedQueues().length === n, `${n} queues assigned`);
    await waitUntil(async () => (await api().queryOffsets(group, topic)).length === n, "start offsets committed");
  }

  it("BROADCASTING delivers every message to each of 2 consumers and keeps offsets in local files only", async () => {
    const topic = uniqueName("Broadcast");
    const group = uniqueName("gBroadcast");
    const queues = await createTopic(api(), topic, 2);
    const received = new Received();
    const opts = {
      messageModel: "BROADCASTING" as const,
      consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET" as const,
      offsetStoreDir: dir,
    };
    const b1 = await consumer(group, topic, received, { ...opts, instanceName: "b1" }, "b1");
    const b2 = await consumer(group, topic, received, { ...opts, instanceName: "b2" }, "b2");
    await Promise.all([b1.start(), b2.start()]);
    assert.equal(b1.assignedQueues().length, 4);
    assert.equal(b2.assignedQueues().length, 4);

    const sent = await sendRoundRobin(api(), queues, 40, "bc");
    const ids = sent.map((s) => s.msgId);
    await waitUntil(
      () => ids.every((id) => received.distinctOf("b1").has(id) && received.distinctOf("b2").has(id)),
      "both got all",
    );
    await Promise.all([b1.shutdown(), b2.shutdown()]);
    for (const c of [b1, b2]) {
      const file = path.join(dir, c.clientId, group, "offsets.json");
      assert.ok(existsSync(file), `${file} exists`);
      const table = (JSON.parse(readFileSync(file, "utf8")) as { offsetTable: { offset: number }[] }).offsetTable;
      assert.deepEqual(
        table.map((r) => r.offset),
        [10, 10, 10, 10],
      );
    }
    assert.deepEqual(await api().queryOffsets(group, topic), [], "broadcasting never commits to the broker");
    report("broadcasting, 2 consumers", { sent: sent.length, ...received.perConsumer(["b1", "b2"]) });
  });

  it("two groups each get every message", async () => {
    const topic = uniqueName("TwoGroups");
    const queues = await createTopic(api(), topic, 2);
    const received = new Received();
    const [g1, g2] = [uniqueName("gOne"), uniqueName("gTwo")];
    const first = { consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET" as const };
    const c1 = await consumer(g1, topic, received, first, "g1");
    const c2 = await consumer(g2, topic, received, first, "g2");
    await Promise.all([c1.start(), c2.start()]);
    const sent = await sendRoundRobin(api(), queues, 40, "tg");
    const ids = sent.map((s) => s.msgId);
    await waitUntil(
      () => ids.every((id) => received.distinctOf("g1").has(id) && received.distinctOf("g2").has(id)),
      "both groups got all",
    );
    report("two groups", { sent: sent.length, ...received.perConsumer(["g1", "g2"]) });
  });

  it("keeps per-key order within each queue for messages routed by the hash of their key", async () => {
    const topic = uniqueName("Ordered");
    const queues = await createTopic(api(), topic, 4);
    const received = new Received();
    const c = await consumer(
      uniqueName("gOrdered"),
      topic,
      received,
      { consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET" },
      "c",
    );
    await c.start();
    const keys = Array.from({ length: 12 }, (_, i) => `order-${i}`);
    const sentIds: string[] = [];
    for (let seq = 0; seq < 15; seq++) {
      for (const key of keys) {
        // RocketMQ's SelectMessageQueueByHash: hashCode % n, made non-negative.
        const mq = queues[Math.abs(javaStringHashCode(key) % queues.length)] as MessageQueue;
        const res = await api().send({
          topic,
          brokerName: mq.brokerName,
          queueId: mq.queueId,
          messages: [{ body: new TextEncoder().encode(`${key}:${seq}`), keys: [key] }],
        });
        sentIds.push(res.msgIds[0] as string);
      }
    }
    await waitUntil(() => received.has(sentIds), "every ordered message received");
    const seqs = new Map<string, number[]>();
    for (const m of received.byConsumer.get("c") ?? []) {
      const [key, seq] = m.bodyText.split(":") as [string, string];
      seqs.set(key, [...(seqs.get(key) ?? []), Number(seq)]);
    }
    for (const key of keys) assert.deepEqual(seqs.get(key), [...Array(15).keys()], `order of ${key}`);
    report("ordered by key", { ...received.summary(sentIds.length), keys: keys.length });
  });

  it("a new group starts at the first offset with FIRST, at the end with LAST, and at a time with TIMESTAMP", async () => {
    const topic = uniqueName("FromWhere");
    const queues = await createTopic(api(), topic, 1);
    const old = await sendRoundRobin(api(), queues, 6, "old");
    const oldLast = Math.max(...(await api().topicStatus(topic)).map((q) => q.lastUpdateTimestamp));
    await waitUntil(() => Date.now() > oldLast + 5, "the clock passed the old messages");
    const since = Date.now();
    await waitUntil(() => Date.now() > since + 5, "the clock passed the timestamp");
    const mid = await sendRoundRobin(api(), queues, 4, "mid");
    const received = new Received();
    const groups = { first: uniqueName("gFirst"), last: uniqueName("gLast"), time: uniqueName("gTime") };
    const first = await consumer(
      groups.first,
      topic,
      received,
      { consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET" },
      "first",
    );
    const last = await consumer(groups.last, topic, received, { consumeFromWhere: "CONSUME_FROM_LAST_OFFSET" }, "last");
    const time = await consumer(
      groups.time,
      topic,
      received,
      { consumeFromWhere: "CONSUME_FROM_TIMESTAMP", consumeTimestamp: since },
      "time",
    );
    await Promise.all([first.start(), last.start(), time.start()]);
    await Promise.all([
      ready(first, 2, groups.first, topic),
      ready(last, 2, groups.last, topic),
      ready(time, 2, groups.time, topic),
    ]);
    const fresh = await sendRoundRobin(api(), queues, 6, "new");
    const all = [...old, ...mid, ...fresh].map((s) => s.msgId);
    await waitUntil(() => all.every((id) => received.distinctOf("first").has(id)), "FIRST got everything");
    await waitUntil(() => fresh.every((s) => received.distinctOf("last").has(s.msgId)), "LAST got the new messages");
    await waitUntil(
      () => [...mid, ...fresh].every((s) => received.distinctOf("time").has(s.msgId)),
      "TIMESTAMP got mid and new",
    );
    assert.equal(received.distinctOf("last").size, fresh.length, "LAST skipped what was there before it started");
    assert.equal(
      received.distinctOf("time").size,
      mid.length + fresh.length,
      "TIMESTAMP skipped what came before the time",
    );
  });

  it("LAST starts at the consumer's start: a topic created after it and queues added later lose nothing", async () => {
    const created = uniqueName("LastCreated");
    const grown = uniqueName("LastGrown");
    await createTopic(api(), grown, 1, ["broker-a"]);
    const received = new Received();
    const group = uniqueName("gLastLate");
    // New queues are found by a rebalance round: with the push channel up, every channelPollInterval.
    const late = { consumeFromWhere: "CONSUME_FROM_LAST_OFFSET", channelPollInterval: 200 } as const;
    const c = await consumer(group, created, received, late, "late");
    c.subscribe(grown, "*");
    await c.start();
    await ready(c, 1, group, grown);
    // The first send creates the topic (auto-create); the rebalance finds its queues only later.
    const first = await api().send({ topic: created, messages: [{ body: new TextEncoder().encode("first") }] });
    await createTopic(api(), grown, 1, ["broker-b"]);
    const added = await api().send({
      topic: grown,
      brokerName: "broker-b",
      queueId: 0,
      messages: [{ body: new TextEncoder().encode("added") }],
    });
    const ids = [...first.msgIds, ...added.msgIds];
    await waitUntil(() => ids.every((id) => received.distinctOf("late").has(id)), "both received");
  });

  it("delivers only the subscribed tag, and the committed offset still moves past filtered messages", async () => {
    const topic = uniqueName("Tags");
    const group = uniqueName("gTags");
    const queues = await createTopic(api(), topic, 1, ["broker-a"]);
    const received = new Received();
    const c = await consumer(group, topic, received, { consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET" }, "c");
    c.subscribe(topic, "TagA");
    await c.start();
    const a = await sendRoundRobin(api(), queues, 5, "a", "TagA");
    const b = await sendRoundRobin(api(), queues, 5, "b", "TagB");
    await waitUntil(() => received.has(a.map((s) => s.msgId)), "TagA messages received");
    await waitUntil(async () => (await api().queryOffsets(group, topic))[0]?.offset === 10, "offset moved past TagB");
    assert.equal(received.missing(b.map((s) => s.msgId)).length, 5, "no TagB message delivered");
  });

  it("commits what was consumed at shutdown, so the next consumer of the group resumes there", async () => {
    const topic = uniqueName("Resume");
    const group = uniqueName("gResume");
    const queues = await createTopic(api(), topic, 2, ["broker-a"]);
    const received = new Received();
    const slow = { persistConsumerOffsetInterval: 3_600_000, consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET" as const };
    const c1 = await consumer(group, topic, received, slow, "c1");
    await c1.start();
    const first = await sendRoundRobin(api(), queues, 10, "a");
    await waitUntil(() => received.has(first.map((s) => s.msgId)), "first batch consumed");
    await c1.shutdown();
    const committed = (await api().queryOffsets(group, topic)).map((r) => r.offset).sort();
    assert.deepEqual(committed, [5, 5]);
    const second = await sendRoundRobin(api(), queues, 10, "b");
    const c2 = await consumer(group, topic, received, slow, "c2");
    await c2.start();
    await waitUntil(() => received.has(second.map((s) => s.msgId)), "second batch consumed");
    assert.equal(received.distinctOf("c2").size, 10, "c2 resumed after what c1 consumed");
  });
});
