/**
 * E2E of orderly consumption on both storage modes (the lock table on the embedded store and on
 * DynamoDB through dynalite): 12 keys × 50 messages on 4 queues, two orderly consumers, a third joining and
 * one leaving mid-way: every key is processed in order, exactly once, and the test's own record shows no two
 * consumers inside one queue at the same time. resetOffsetByTime to a time in the middle makes a running
 * consumer re-read exactly the messages stored after it; consumerStatus reports the members' queues and
 * locks; a member with a different tag is flagged.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { PushConsumerOptions } from "../../lib/client/consumer/consumer-options.js";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { diffCounts } from "../../lib/storage/request-counter.js";
import { createTopic, fastTimings, report, waitUntil } from "../support/consumer-helpers.js";
import { OrderlyRecord } from "../support/orderly-record.js";
import { MODE_LABEL, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

/** A failure bound only (the machine is shared and loaded): the waits end as soon as their condition holds. */
const LONG_WAIT_MS = 180_000;
const KEYS = Array.from({ length: 12 }, (_, k) => `K${k}`);
const PER_KEY = 50;

for (const mode of ["local", "aws"] as const) {
  describe(`${MODE_LABEL[mode]}: orderly consumption`, () => {
    const ctx = useTestServer(mode);
    const open: PushConsumer[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((c) => c.shutdown()));
    });
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

    function orderly(
      group: string,
      topic: string,
      record: OrderlyRecord,
      name: string,
      extra: Partial<PushConsumerOptions> = {},
    ) {
      const c = new PushConsumer({
        consumerGroup: group,
        endpoints: ctx.server.url,
        timeoutMs: TEST_TIMEOUT_MS,
        ...fastTimings(),
        consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
        ...extra,
      });
      c.subscribe(topic, "*");
      c.registerMessageListenerOrderly(record.listener(name));
      open.push(c);
      return c;
    }

    /** Sends seq 0..PER_KEY-1 of every key, one request per queue and seq (key k goes to queue k % 4). */
    async function sendKeys(topic: string): Promise<void> {
      for (let seq = 0; seq < PER_KEY; seq++) {
        for (let q = 0; q < 4; q++) {
          const keys = KEYS.filter((_, k) => k % 4 === q);
          await api().send({
            topic,
            brokerName: "broker-a",
            queueId: q,
            messages: keys.map((key) => ({ body: new TextEncoder().encode(`${key}:${seq}`), keys: [key] })),
          });
        }
      }
    }

    it("12 keys × 50 on 4 queues, 2 consumers, a third joins and one leaves: in order, one consumer per queue at a time", async () => {
      const topic = uniqueName("Orderly");
      const group = uniqueName("gOrderly");
      await createTopic(api(), topic, 4, ["broker-a"]);
      const record = new OrderlyRecord();
      const counted = ctx.server.server.storage.counter.snapshot();
      const a = orderly(group, topic, record, "A");
      const b = orderly(group, topic, record, "B");
      const c = orderly(group, topic, record, "C");
      await Promise.all([a.start(), b.start()]);
      const sending = sendKeys(topic);
      const total = KEYS.length * PER_KEY;
      await waitUntil(() => record.processed >= total / 4, "a quarter processed", LONG_WAIT_MS);
      await c.start();
      // Rebalanced away means unlocked: each member comes to hold the locks of exactly the queues assigned to it.
      await waitUntil(
        async () => {
          const locks = await api().queueLocks(group, topic);
          return (
            locks.every((l) => l.locked) &&
            [a, b, c].every((m) =>
              m.assignedQueues().every((mq) => locks.some((l) => l.queueId === mq.queueId && l.holder === m.clientId)),
            )
          );
        },
        "the locks follow the new assignment",
        LONG_WAIT_MS,
        250,
      );
      await waitUntil(() => record.processed >= total / 2, "half processed", LONG_WAIT_MS);
      const atLeave = record.byConsumer.get("A") ?? 0;
      await a.shutdown();
      const afterLeave = record.byConsumer.get("A") ?? 0;
      await sending;
      await waitUntil(() => record.processed >= total, "everything processed", LONG_WAIT_MS);
      // Storage requests of the whole run (200 sends of 3 messages, the consumers' pulls, commits, locks, heartbeats).
      const used = diffCounts(ctx.server.server.storage.counter.snapshot(), counted);
      report(`${mode}: orderly, 12 keys × 50 on 4 queues, C joins at ¼, A leaves at ½`, {
        processed: record.processed,
        tableReadsPerMessage: (used.tableReads / total).toFixed(2),
        tableWritesPerMessage: (used.tableWrites / total).toFixed(2),
        objectRequestsPerMessage: ((used.objectPuts + used.objectGets) / total).toFixed(2),
        byConsumer: JSON.stringify(Object.fromEntries(record.byConsumer)),
        violations: record.violations.length,
      });
      assert.deepEqual(record.violations, [], "two consumers were inside one queue at the same time");
      assert.deepEqual(record.outOfOrder(KEYS, PER_KEY), [], "every key processed in order, exactly once");
      assert.equal(record.processed, total);
      assert.deepEqual([...record.batchSizes], [1], "consumeMessageBatchMaxSize defaults to 1");
      assert.ok((record.byConsumer.get("C") ?? 0) > 0, "C took queues over after joining");
      assert.equal(record.byConsumer.get("A"), afterLeave, "A processed nothing after its shutdown");
      assert.ok(atLeave > 0);
      // A unlocked its queues at shutdown: B and C hold all four now.
      const locks = await api().queueLocks(group, topic);
      assert.deepEqual(
        new Set(locks.map((l) => l.holder)),
        new Set([b.clientId, c.clientId].filter((id) => locks.some((l) => l.holder === id))),
      );
      assert.ok(locks.every((l) => l.locked && l.holder !== a.clientId));
    });

    it("resetOffsetByTime to a time in the middle: a running consumer re-reads exactly what was stored after it", async () => {
      const topic = uniqueName("Reset");
      const group = uniqueName("gReset");
      await createTopic(api(), topic, 2, ["broker-a"]);
      const record = new OrderlyRecord();
      const consumer = orderly(group, topic, record, "R");
      await consumer.start();
      const sendBatch = async (from: number) => {
        for (let q = 0; q < 2; q++) {
          await api().send({
            topic,
            brokerName: "broker-a",
            queueId: q,
            messages: Array.from({ length: 10 }, (_, i) => ({
              body: new TextEncoder().encode(`K${q}:${from + i}`),
            })),
          });
        }
      };
      await sendBatch(0);
      await waitUntil(() => record.processed === 20, "the first half processed", TEST_TIMEOUT_MS);
      // A time after every stored message of the first half, before any of the second (the broker's clock is ours).
      const middle = Date.now() + 1;
      await waitUntil(() => Date.now() > middle, "the clock passed the middle");
      await sendBatch(10);
      await waitUntil(() => record.processed === 40, "the second half processed", TEST_TIMEOUT_MS);

      const reset = await api().resetOffsetByTime(group, topic, middle);
      assert.deepEqual(
        reset.offsetTable.map((e) => [e.queueId, e.offset]),
        [
          [0, 10],
          [1, 10],
        ],
      );
      await waitUntil(() => record.processed === 60, "the second half read again", TEST_TIMEOUT_MS);
      // In order per queue: a re-read of the first half would have come before the second half's.
      assert.deepEqual(record.byKey.get("K0"), [...Array(20).keys(), ...Array.from({ length: 10 }, (_, i) => 10 + i)]);
      assert.deepEqual(record.byKey.get("K1"), [...Array(20).keys(), ...Array.from({ length: 10 }, (_, i) => 10 + i)]);
      await waitUntil(
        async () => (await api().queryOffsets(group, topic)).map((e) => e.offset).join() === "20,20",
        "committed at the end again",
        TEST_TIMEOUT_MS,
      );

      // consumerStatus: what the member reported with its heartbeats.
      await waitUntil(
        async () => {
          const [s] = await api().consumerStatus(group);
          return (s?.runningInfo?.queues ?? []).filter((q) => q.locked && q.consumeOffset === 20).length === 2;
        },
        "consumerStatus reports both queues locked at offset 20",
        TEST_TIMEOUT_MS,
      );
      const [status] = await api().consumerStatus(group);
      assert.equal(status?.clientId, consumer.clientId);
      assert.equal(status?.runningInfo?.consumeOrderly, true);
      assert.equal(status?.runningInfo?.assignedQueues.length, 2);
      // The topic's queues (a CLUSTERING consumer also holds its %RETRY% queue, never pulled from here).
      for (const q of (status?.runningInfo?.queues ?? []).filter((q) => q.topic === topic)) {
        assert.equal(q.cachedMsgCount, 0);
        assert.ok(q.lastPullTimestamp > 0 && q.lastConsumeTimestamp > 0);
      }
      assert.deepEqual(record.violations, []);
    });

    it("a member whose subscription differs from the group's is flagged, and warned", async () => {
      const topic = uniqueName("Subs");
      const group = uniqueName("gSubs");
      await createTopic(api(), topic, 2, ["broker-a"]);
      const warnings: string[] = [];
      const members = ["TagA", "TagA", "TagB"].map((tag, i) => {
        const c = new PushConsumer({
          consumerGroup: group,
          endpoints: ctx.server.url,
          timeoutMs: TEST_TIMEOUT_MS,
          ...fastTimings(),
          instanceName: `m${i}`,
          onError: (_err, what) => {
            if (what.startsWith("warning:")) warnings.push(`${i} ${what}`);
          },
        });
        c.subscribe(topic, tag);
        c.registerMessageListener(() => "CONSUME_SUCCESS");
        open.push(c);
        return c;
      });
      await Promise.all(members.map((m) => m.start()));
      const odd = members[2] as PushConsumer;
      await waitUntil(async () => (await api().consumerConnection(group)).consumers.length === 3, "3 members live");
      const connection = await api().consumerConnection(group);
      assert.equal(connection.subscriptionsConsistent, false);
      assert.deepEqual(
        connection.consumers.map((c) => [c.clientId === odd.clientId, c.subscriptionConsistent]).sort(),
        [
          [false, true],
          [false, true],
          [true, false],
        ],
      );
      await waitUntil(() => warnings.length > 0, "the odd member logged a warning");
      assert.ok(
        warnings.every((w) => w.startsWith("2 ")),
        warnings.join("\n"),
      );
      assert.ok(warnings[0]?.includes("TagB"));
    });
  });
}
