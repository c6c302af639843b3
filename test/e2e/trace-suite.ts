/**
 * @module E2E cases of message traces (docs/trace.md) through the SDK: a traced Producer's message consumed by
 * two traced PushConsumer groups, one failing once (redelivered through its retry topic), read back with
 * `queryMessageTrace`; a SimpleConsumer's receive and ack; a customized trace topic; the dispatcher's bounded
 * queue drops what does not fit and counts it; the cases of trace-clients-suite.ts (a TransactionProducer's
 * check-back answers, a LitePullConsumer's polls) on the same server.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { SimpleConsumer } from "../../lib/client/consumer/simple-consumer.js";
import { Message } from "../../lib/client/message.js";
import { Producer } from "../../lib/client/producer/producer.js";
import { queryMessageTrace, TRACE_QUEUE_MAX, TraceDispatcher, type TraceRecord } from "../../lib/client/trace/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { createTopic, fastTimings, waitUntil } from "../support/consumer-helpers.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";
import { traceClientCases } from "./trace-clients-suite.js";
import { FAST_CHECKS } from "./transactions-suite.js";

/** Level 3 (a first retry: 3 + reconsumeTimes) is 1 s here. */
const FAST_DELAY_LEVELS = "1s 1s 1s";
const WAIT_MS = 60_000;

const summary = (records: TraceRecord[]) =>
  records.map((r) => `${r.traceType} ${r.groupName} ${r.success} ${r.reconsumeTimes ?? "-"}`);

export function traceCases(mode: ServerMode): void {
  describe("message traces (enableMsgTrace)", () => {
    // Check-backs 300 ms after a half message, then every 200 ms (trace-clients-suite.ts's transactions).
    const ctx = useTestServer(mode, { messageDelayLevel: FAST_DELAY_LEVELS, ...FAST_CHECKS });
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
    const open: { shutdown(): Promise<void> }[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((c) => c.shutdown()));
    });

    function pushConsumer(group: string, topic: string, answer: (reconsumeTimes: number) => boolean): PushConsumer {
      const c = new PushConsumer({
        consumerGroup: group,
        endpoints: ctx.server.url,
        timeoutMs: TEST_TIMEOUT_MS,
        consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
        enableMsgTrace: true,
        ...fastTimings(),
      });
      c.subscribe(topic, "*");
      c.registerMessageListener((msgs) =>
        msgs.every((m) => answer(m.reconsumeTimes)) ? "CONSUME_SUCCESS" : "RECONSUME_LATER",
      );
      open.push(c);
      return c;
    }

    it("traces a message sent by a Producer and consumed by two groups, one failing once", async () => {
      const topic = uniqueName("Traced");
      await createTopic(api(), topic, 1);
      const producerGroup = uniqueName("PTrace");
      const producer = new Producer({ producerGroup, endpoints: ctx.server.url, enableMsgTrace: true });
      await producer.start();
      const sent = await producer.send(new Message(topic, "TagA", "order-42", "paid"));
      await producer.shutdown();

      const calls = { ok: 0, flaky: 0 };
      const good = uniqueName("gTraceOk");
      const flaky = uniqueName("gTraceFlaky");
      const a = pushConsumer(good, topic, () => ++calls.ok > 0);
      // Fails its first delivery (RECONSUME_LATER: sent back to %RETRY%<group>), succeeds on the redelivery.
      const b = pushConsumer(flaky, topic, (reconsumeTimes) => ++calls.flaky > 0 && reconsumeTimes > 0);
      await Promise.all([a.start(), b.start()]);
      await waitUntil(() => calls.ok >= 1 && calls.flaky >= 2, "both groups consumed, the flaky one twice", WAIT_MS);
      // Shutting down flushes the consumers' trace records (a bounded wait).
      await Promise.all(open.splice(0).map((c) => c.shutdown()));

      let records: TraceRecord[] = [];
      await waitUntil(
        async () => {
          records = await queryMessageTrace(api(), sent.msgId);
          return records.length >= 7;
        },
        "the trace's 7 records",
        WAIT_MS,
        100,
      );
      assert.equal(records.length, 7, summary(records).join("\n"));
      const pub = records.filter((r) => r.traceType === "Pub");
      assert.equal(pub.length, 1);
      assert.deepEqual(
        [pub[0]?.groupName, pub[0]?.topic, pub[0]?.tags, pub[0]?.keys, pub[0]?.success, pub[0]?.bodyLength],
        [producerGroup, topic, "TagA", ["order-42"], true, 4],
      );
      assert.deepEqual(
        [pub[0]?.brokerName, pub[0]?.queueId, pub[0]?.queueOffset, pub[0]?.clientId],
        [sent.messageQueue.brokerName, sent.messageQueue.queueId, sent.queueOffset, producer.clientId],
      );
      assert.equal(records[0]?.traceType, "Pub", "the Pub comes first");
      const of = (group: string) => summary(records.filter((r) => r.groupName === group));
      assert.deepEqual(of(good), [`SubBefore ${good} true 0`, `SubAfter ${good} true 0`]);
      assert.deepEqual(of(flaky), [
        `SubBefore ${flaky} true 0`,
        `SubAfter ${flaky} false 0`,
        `SubBefore ${flaky} true 1`,
        `SubAfter ${flaky} true 1`,
      ]);
      const flakyAfter = records.filter((r) => r.groupName === flaky && r.traceType === "SubAfter");
      assert.deepEqual(
        flakyAfter.map((r) => r.consumeStatus),
        ["RECONSUME_LATER", "CONSUME_SUCCESS"],
      );
      for (const r of records.filter((x) => x.traceType !== "Pub")) {
        assert.equal(r.topic, topic, "a redelivered message is traced under its own topic");
        assert.equal(r.clientId, r.groupName === good ? a.clientId : b.clientId);
        assert.ok(r.requestId, "SubBefore and SubAfter share a request id");
      }
      // Each SubAfter pairs with the SubBefore of its call.
      const before = new Set(records.filter((r) => r.traceType === "SubBefore").map((r) => r.requestId));
      assert.ok(records.filter((r) => r.traceType === "SubAfter").every((r) => before.has(r.requestId)));
    });

    it("traces a SimpleConsumer's receive and ack, in a customized trace topic", async () => {
      const topic = uniqueName("TracedPop");
      const traceTopic = uniqueName("MyTraces");
      await createTopic(api(), topic, 1, ["broker-a"]);
      await createTopic(api(), traceTopic, 1, ["broker-a"]);
      const group = uniqueName("gTracePop");
      const consumer = new SimpleConsumer({
        consumerGroup: group,
        endpoints: ctx.server.url,
        subscriptions: { [topic]: "*" },
        awaitDuration: 1000,
        enableMsgTrace: true,
        customizedTraceTopic: traceTopic,
      });
      open.push(consumer);
      await consumer.startup();
      await consumer.receive(1, 30_000); // the group starts at the queue's end: before the send
      const producer = new Producer({
        producerGroup: uniqueName("PTracePop"),
        endpoints: ctx.server.url,
        enableMsgTrace: true,
        customizedTraceTopic: traceTopic,
      });
      await producer.start();
      const sent = await producer.send(new Message(topic, "TagB", "k-1", "hello"));
      await producer.shutdown();
      let got: Awaited<ReturnType<SimpleConsumer["receive"]>> = [];
      await waitUntil(
        async () => {
          got = await consumer.receive(1, 30_000);
          return got.length > 0;
        },
        "a received message",
        WAIT_MS,
      );
      assert.equal(got[0]?.messageId, sent.msgId);
      await consumer.ackAll(got);
      await consumer.shutdown();
      let records: TraceRecord[] = [];
      await waitUntil(
        async () => {
          records = await queryMessageTrace(api(), sent.msgId, { traceTopic });
          return records.length >= 3;
        },
        "the trace's 3 records",
        WAIT_MS,
        100,
      );
      assert.deepEqual(summary(records), [
        `Pub ${producer.producerGroup} true -`,
        `SubBefore ${group} true 0`,
        `SubAfter ${group} true 0`,
      ]);
      // The default trace topic holds none of them (it may not even exist yet: TOPIC_NOT_EXIST).
      const inDefault = await queryMessageTrace(api(), sent.msgId).catch(() => []);
      assert.equal(inDefault.length, 0);
    });

    it("keeps at most TRACE_QUEUE_MAX records waiting, drops and counts the rest, flushes them at close", async () => {
      const dispatcher = new TraceDispatcher({
        api: api(),
        traceTopic: "RMQ_SYS_TRACE_TOPIC",
        // A bound a loaded machine cannot reach: the test is of what close() flushes, not of its deadline.
        closeTimeoutMs: WAIT_MS,
      });
      const msgId = uniqueName("traced-id");
      const record: TraceRecord = {
        traceType: "Pub",
        timeStamp: Date.now(),
        groupName: "pg",
        clientId: "127.0.0.1@test",
        msgId,
        topic: "T",
        tags: "",
        keys: [],
        costTime: 1,
        success: true,
      };
      dispatcher.append(Array.from({ length: TRACE_QUEUE_MAX + 76 }, () => record));
      assert.equal(dispatcher.dropped, 76);
      await dispatcher.close();
      assert.deepEqual([dispatcher.sent, dispatcher.failed, dispatcher.dropped], [TRACE_QUEUE_MAX, 0, 76]);
      dispatcher.append([record]);
      assert.equal(dispatcher.dropped, 77, "a closed dispatcher takes nothing more");
      const page = await api().queryMessagesByKey({ topic: "RMQ_SYS_TRACE_TOPIC", key: msgId, maxNum: 64 });
      assert.equal(page.messages.length, 64);
      assert.ok(page.nextCursor !== undefined, "more pages of the same key");
    });

    traceClientCases(ctx, api);
  });
}
