/**
 * E2E cases of the lite pull consumer against the local server: subscribe + poll + commitSync, and a
 * restart of the group that resumes from the committed offsets; autoCommit at shutdown; assign + seek
 * (and a seek out of range refused); fetchMessageQueues lists the readable queues.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { LitePullConsumerOptions } from "../../lib/client/consumer/consumer-options.js";
import { LitePullConsumer } from "../../lib/client/consumer/lite-pull-consumer.js";
import type { MessageExt } from "../../lib/client/message.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { MessageQueue } from "../../lib/core/message-queue.js";
import { createTopic, fastTimings, report, sendRoundRobin, waitUntil } from "../support/consumer-helpers.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

describe("LitePullConsumer (local server)", () => {
  const ctx = useTestServer("local");
  const open: LitePullConsumer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.shutdown()));
  });

  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

  function consumer(group: string, extra: Partial<LitePullConsumerOptions> = {}) {
    const c = new LitePullConsumer({
      consumerGroup: group,
      endpoints: ctx.server.url,
      consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
      ...fastTimings(),
      ...extra,
    });
    open.push(c);
    return c;
  }

  /** Polls until `n` messages came (each poll waits at most 200 ms). */
  async function pollN(c: LitePullConsumer, n: number): Promise<MessageExt[]> {
    const got: MessageExt[] = [];
    await waitUntil(async () => {
      got.push(...(await c.poll(200)));
      return got.length >= n;
    }, `${n} messages polled`);
    return got;
  }

  const byQueue = (msgs: MessageExt[]) => {
    const m = new Map<string, number[]>();
    for (const x of msgs) {
      const k = new MessageQueue(x.topic, x.brokerName, x.queueId).key();
      m.set(k, [...(m.get(k) ?? []), x.queueOffset]);
    }
    return m;
  };

  it("subscribe + poll + commitSync; a restarted consumer of the group resumes from the committed offsets", async () => {
    const topic = uniqueName("LiteResume");
    const group = uniqueName("gLiteResume");
    const queues = await createTopic(api(), topic, 2);
    const sent = await sendRoundRobin(api(), queues, 40, "lite");
    const c1 = consumer(group, { autoCommit: false, pullBatchSize: 4 });
    c1.subscribe(topic, "*");
    await c1.start();
    assert.equal(c1.assignedQueues().length, 4);
    const first = await pollN(c1, 12);
    await c1.commitSync();
    const committed = new Map<string, number>();
    for (const mq of c1.assignedQueues()) committed.set(mq.key(), await c1.committed(mq));
    // Each queue's committed offset is one past the highest offset polled from it (polls are in queue order).
    for (const [key, offsets] of byQueue(first)) assert.equal(committed.get(key), Math.max(...offsets) + 1, key);
    const onBroker = await api().queryOffsets(group, topic);
    for (const row of onBroker) {
      const key = new MessageQueue(topic, row.brokerName, row.queueId).key();
      assert.equal(row.offset, committed.get(key), `broker offset of ${key}`);
    }
    // Poll more without committing: a restart redelivers those.
    const uncommitted = await pollN(c1, 1);
    await c1.shutdown();

    const c2 = consumer(group, { autoCommit: false });
    c2.subscribe(topic, "*");
    await c2.start();
    const rest = await pollN(c2, sent.length - first.length);
    for (const m of rest) {
      const key = new MessageQueue(m.topic, m.brokerName, m.queueId).key();
      assert.ok(m.queueOffset >= (committed.get(key) ?? 0), `${key}@${m.queueOffset} was committed already`);
    }
    const ids = new Set([...first, ...rest].map((m) => m.msgId));
    assert.deepEqual(
      sent.filter((s) => !ids.has(s.msgId)),
      [],
    );
    assert.ok(
      uncommitted.every((m) => rest.some((r) => r.msgId === m.msgId)),
      "uncommitted polls were redelivered",
    );
    report("lite pull resume", {
      sent: sent.length,
      beforeCommit: first.length,
      afterRestart: rest.length,
      duplicates: first.length + rest.length - ids.size,
    });
  });

  it("LAST starts at the consumer's start: a topic its first send creates after start() loses nothing", async () => {
    const topic = uniqueName("LiteLastCreated");
    const c = consumer(uniqueName("gLiteLast"), {
      consumeFromWhere: "CONSUME_FROM_LAST_OFFSET",
      channelPollInterval: 200, // a rebalance round finds the new topic's queues
    });
    c.subscribe(topic, "*");
    await c.start();
    const sent = await api().send({ topic, messages: [{ body: new TextEncoder().encode("first") }] });
    const got = await pollN(c, 1);
    assert.deepEqual(
      got.map((m) => m.msgId),
      sent.msgIds,
    );
  });

  it("commits at shutdown with autoCommit", async () => {
    const topic = uniqueName("LiteAuto");
    const group = uniqueName("gLiteAuto");
    const queues = await createTopic(api(), topic, 1, ["broker-a"]);
    await sendRoundRobin(api(), queues, 7, "auto");
    const c = consumer(group);
    c.subscribe(topic, "*");
    await c.start();
    await pollN(c, 7);
    await c.shutdown();
    assert.deepEqual(
      (await api().queryOffsets(group, topic)).map((r) => r.offset),
      [7],
    );
  });

  it("assign + seek reads one queue from the offset sought; a seek out of range is refused", async () => {
    const topic = uniqueName("LiteAssign");
    const group = uniqueName("gLiteAssign");
    const queues = await createTopic(api(), topic, 4);
    await sendRoundRobin(api(), queues, 80, "as");
    const c = consumer(group, { autoCommit: false, pullBatchSize: 5 });
    const all = await c.fetchMessageQueues(topic);
    assert.deepEqual(
      all.map((q) => q.key()),
      queues.map((q) => q.key()),
    );
    const mq = all[5] as MessageQueue;
    c.assign([mq]);
    await c.start();
    assert.deepEqual(
      c.assignedQueues().map((q) => q.key()),
      [mq.key()],
    );
    const head = await pollN(c, 3);
    assert.ok(head.every((m) => m.brokerName === mq.brokerName && m.queueId === mq.queueId));
    assert.equal(head[0]?.queueOffset, 0);

    await c.seek(mq, 6);
    const afterSeek = await pollN(c, 1);
    assert.equal(afterSeek[0]?.queueOffset, 6);
    await assert.rejects(c.seek(mq, 11), (err) => isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL));
    await assert.rejects(c.seek(all[0] as MessageQueue, 0), (err) => isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL));
    await c.commitSync();
    assert.equal(await c.committed(mq), Math.max(...afterSeek.map((m) => m.queueOffset)) + 1);
  });
});
