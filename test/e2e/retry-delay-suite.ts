/**
 * @module E2E cases of retries, dead letters and delayed messages, through the SDK like a user: a
 * RECONSUME_LATER message comes back through `%RETRY%<group>` with reconsumeTimes 0, 1, 2 while the original
 * queue's offset moves on; one that always fails ends in `%DLQ%<group>` after maxReconsumeTimes; a consumer
 * restarted meanwhile loses nothing; BROADCASTING drops (and reports) a failed message; a delay level and a
 * deliver time are stored only when due; 1,000 messages due in one second arrive once each; bad input is
 * refused with a 4xx and writes nothing. The deployment's delay levels are short ("1s 2s 2s") so the cases
 * do not wait minutes; visibility is asserted by state (a message's store time is never before its due
 * time), never by timing precision (that is `npm run bench`).
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { PushConsumerOptions } from "../../lib/client/consumer/consumer-options.js";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { Message, type MessageExt } from "../../lib/client/message.js";
import { Producer } from "../../lib/client/producer/producer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { MessageConst } from "../../lib/core/message.js";
import { dlqTopic, retryTopic } from "../../lib/core/names.js";
import { MAX_PULL_MESSAGES } from "../../lib/protocol/index.js";
import { createTopic, fastTimings, waitUntil } from "../support/consumer-helpers.js";
import { b64, expectError, ok, writesNothing } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

/** Level 1 is 1 s, level 2 and 3 (retries: 3 + reconsumeTimes, clamped to the last) are 2 s. */
export const FAST_DELAY_LEVELS = "1s 2s 2s";
const WAIT_MS = 90_000;

interface Delivery {
  msgId: string;
  topic: string;
  body: string;
  reconsumeTimes: number;
  properties: Record<string, string>;
}

export function retryDelayCases(mode: ServerMode): void {
  const ctx = useTestServer(mode, { messageDelayLevel: FAST_DELAY_LEVELS });
  const open: PushConsumer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.shutdown()));
  });
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

  function consumer(
    group: string,
    topic: string,
    listen: (m: MessageExt) => "CONSUME_SUCCESS" | "RECONSUME_LATER",
    extra: Partial<PushConsumerOptions> = {},
  ): PushConsumer {
    const c = new PushConsumer({
      consumerGroup: group,
      endpoints: ctx.server.url,
      timeoutMs: TEST_TIMEOUT_MS,
      consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
      ...fastTimings(),
      ...extra,
    });
    c.subscribe(topic, "*");
    c.registerMessageListener((msgs) =>
      msgs.some((m) => listen(m) === "RECONSUME_LATER") ? "RECONSUME_LATER" : "CONSUME_SUCCESS",
    );
    open.push(c);
    return c;
  }

  const record = (m: MessageExt): Delivery => ({
    msgId: m.msgId,
    topic: m.topic,
    body: m.bodyText,
    reconsumeTimes: m.reconsumeTimes,
    properties: { ...m.properties },
  });

  async function sendOne(topic: string, body: string): Promise<string> {
    const res = await api().send({
      topic,
      brokerName: "broker-a",
      queueId: 0,
      messages: [{ body: new TextEncoder().encode(body), tags: "T", keys: ["k1"], properties: { color: "red" } }],
    });
    return res.msgIds[0] as string;
  }

  const committed = async (group: string, topic: string) => (await api().queryOffsets(group, topic))[0]?.offset ?? -1;

  it("RECONSUME_LATER twice, then success: 3 deliveries, reconsumeTimes 0,1,2, the original queue's offset moves on", async () => {
    const topic = uniqueName("Retry");
    const group = uniqueName("gRetry");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const seen: Delivery[] = [];
    const c = consumer(group, topic, (m) => {
      seen.push(record(m));
      return m.reconsumeTimes < 2 ? "RECONSUME_LATER" : "CONSUME_SUCCESS";
    });
    await c.start();
    const msgId = await sendOne(topic, "retry-me");
    await waitUntil(() => seen.length >= 3, "three deliveries", WAIT_MS);
    // The failed message was handed to the broker: the original queue committed past it before it succeeded.
    await waitUntil(async () => (await committed(group, topic)) === 1, "original offset 1 committed", WAIT_MS);
    await waitUntil(async () => (await committed(group, retryTopic(group))) === 2, "retry queue consumed", WAIT_MS);
    assert.equal(seen.length, 3, "delivered exactly three times");
    assert.deepEqual(
      seen.map((d) => d.reconsumeTimes),
      [0, 1, 2],
    );
    for (const d of seen) {
      assert.equal(d.msgId, msgId, "the msgId stays");
      assert.equal(d.topic, topic, "the listener sees the original topic");
      assert.equal(d.body, "retry-me");
      assert.equal(d.properties.color, "red", "user properties stay");
    }
    for (const d of seen.slice(1)) {
      assert.equal(d.properties[MessageConst.RETRY_TOPIC], topic);
      assert.equal(d.properties[MessageConst.ORIGIN_MESSAGE_ID], msgId);
    }
    assert.deepEqual(
      seen.slice(1).map((d) => d.properties[MessageConst.RECONSUME_TIME]),
      ["1", "2"],
    );
  });

  it("always RECONSUME_LATER with maxReconsumeTimes 2: in %DLQ%<group> after the third try, with its topic, body and msgId", async () => {
    const topic = uniqueName("Dlq");
    const group = uniqueName("gDlq");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const seen: Delivery[] = [];
    const c = consumer(
      group,
      topic,
      (m) => {
        seen.push(record(m));
        return "RECONSUME_LATER";
      },
      { maxReconsumeTimes: 2 },
    );
    await c.start();
    const msgId = await sendOne(topic, "dead-letter");
    const dlq = dlqTopic(group);
    await waitUntil(
      async () => {
        try {
          return (await api().topicStatus(dlq)).some((q) => q.maxOffset > 0);
        } catch {
          return false;
        }
      },
      "a message in the DLQ",
      WAIT_MS,
    );
    assert.deepEqual(
      seen.map((d) => d.reconsumeTimes),
      [0, 1, 2],
      "three tries before the DLQ",
    );
    const route = await api().topicRoute(dlq);
    assert.deepEqual(
      route.queueDatas.map((q) => [q.brokerName, q.readQueueNums, q.writeQueueNums, q.perm]),
      [["broker-a", 1, 1, 6]],
      "one queue, RocketMQ's DLQ permission (read and write)",
    );
    const pulled = await api().pull({
      consumerGroup: "tools",
      topic: dlq,
      brokerName: "broker-a",
      queueId: 0,
      queueOffset: 0,
    });
    assert.equal(pulled.messages.length, 1);
    const dead = pulled.messages[0];
    assert.ok(dead);
    assert.equal(dead.msgId, msgId);
    assert.equal(new TextDecoder().decode(dead.body), "dead-letter");
    assert.equal(dead.properties[MessageConst.RETRY_TOPIC], topic, "its original topic");
    assert.equal(dead.tags, "T");
    assert.deepEqual(dead.keys, ["k1"]);
    assert.equal(dead.reconsumeTimes, 2);
    // Nothing subscribes to the DLQ: the consumer's retry queue is consumed to its end and nothing more comes.
    await waitUntil(async () => (await committed(group, retryTopic(group))) === 2, "retry queue consumed", WAIT_MS);
    assert.equal(seen.length, 3);
  });

  it("a consumer restarted while its failed message waits in the retry topic loses nothing", async () => {
    const topic = uniqueName("Restart");
    const group = uniqueName("gRestart");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const first: Delivery[] = [];
    const c1 = consumer(group, topic, (m) => {
      first.push(record(m));
      return "RECONSUME_LATER";
    });
    await c1.start();
    const msgId = await sendOne(topic, "survivor");
    // c1 failed it and the broker holds it: the original queue is committed past it.
    await waitUntil(async () => (await committed(group, topic)) === 1, "c1 sent it back", WAIT_MS);
    await c1.shutdown();
    const second: Delivery[] = [];
    const c2 = consumer(group, topic, (m) => {
      second.push(record(m));
      return "CONSUME_SUCCESS";
    });
    await c2.start();
    const later = await sendOne(topic, "after-restart");
    await waitUntil(
      () => second.some((d) => d.msgId === msgId) && second.some((d) => d.msgId === later),
      "c2 got the retried message and the new one",
      WAIT_MS,
    );
    assert.ok(first.length >= 1 && first.every((d) => d.msgId === msgId));
    const retried = second.find((d) => d.msgId === msgId);
    assert.equal(retried?.reconsumeTimes, 1);
    assert.equal(retried?.topic, topic);
  });

  it("BROADCASTING drops a failed message and reports it, sending nothing back", async () => {
    const topic = uniqueName("BroadcastFail");
    const group = uniqueName("gBroadcastFail");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const errors: string[] = [];
    const seen: Delivery[] = [];
    const { mkdtempSync, rmSync } = await import("node:fs");
    const os = await import("node:os");
    const path = await import("node:path");
    const dir = mkdtempSync(path.join(os.tmpdir(), "nimbus-broadcast-fail-"));
    try {
      const c = consumer(
        group,
        topic,
        (m) => {
          seen.push(record(m));
          return "RECONSUME_LATER";
        },
        { messageModel: "BROADCASTING", offsetStoreDir: dir, onError: (_e, what) => errors.push(what) },
      );
      await c.start();
      await sendOne(topic, "dropped");
      await waitUntil(() => errors.some((e) => e.includes("BROADCASTING drops")), "the drop reported", WAIT_MS);
      await c.shutdown();
      assert.equal(seen.length, 1, "delivered once, not retried");
      await assert.rejects(api().topicRoute(retryTopic(group)), /TOPIC_NOT_EXIST|does not exist|No topic route/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("delay level 2 and a deliver time 3 s ahead: stored only when due, then delivered", async () => {
    const topic = uniqueName("Delayed");
    const group = uniqueName("gDelayed");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const producer = new Producer({
      producerGroup: uniqueName("pDelayed"),
      endpoints: ctx.server.url,
      sendMsgTimeout: TEST_TIMEOUT_MS,
    });
    await producer.start();
    try {
      const byLevel = new Message(topic, "L", "level-2");
      byLevel.setDelayTimeLevel(2);
      const byTime = new Message(topic, "T", "at-time");
      const at = Date.now() + 3000;
      byTime.setDeliverTimeMs(at);
      const sentLevel = await producer.send(byLevel);
      const sentTime = await producer.send(byTime);
      assert.ok(sentLevel.deliverTimeMs !== undefined && sentTime.deliverTimeMs === at, "both wait in the timer store");
      const seen: MessageExt[] = [];
      const c = consumer(group, topic, (m) => {
        seen.push(m);
        return "CONSUME_SUCCESS";
      });
      await c.start();
      await waitUntil(() => seen.length >= 2, "both delayed messages delivered", WAIT_MS);
      const level = seen.find((m) => m.msgId === sentLevel.msgId);
      const time = seen.find((m) => m.msgId === sentTime.msgId);
      assert.ok(level && time);
      // Stored (so visible to any consumer) only once due: the store time is the move's.
      assert.ok(level.storeTimestamp >= (sentLevel.deliverTimeMs ?? 0), "level 2 stored at or after its due time");
      assert.ok(time.storeTimestamp >= at, "the timer message stored at or after its deliver time");
      assert.equal(level.properties[MessageConst.DELAY], "2");
      assert.equal(time.properties[MessageConst.TIMER_DELIVER_MS], String(at));
      assert.equal(seen.length, 2);
    } finally {
      await producer.shutdown();
    }
  });

  it("the SDK's binary send (its default) carries delayTimeLevel: stored only when due", async () => {
    const topic = uniqueName("BinDelayed");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const binary = api();
    assert.equal(binary.transport.binaryBatches, true, "the default transport sends binary batches");
    const sent = await binary.send({
      topic,
      brokerName: "broker-a",
      queueId: 0,
      messages: [{ body: new TextEncoder().encode("later"), delayTimeLevel: 1 }],
    });
    const due = sent.deliverTimeMs?.[0];
    assert.ok(due !== undefined && due >= sent.storeTimestamp, "waits in the timer store, not in the queue");
    let found: { storeTimestamp: number; properties: Record<string, string>; body: Uint8Array } | undefined;
    await waitUntil(
      async () => {
        const read = await binary.pull({
          consumerGroup: "gBin",
          topic,
          brokerName: "broker-a",
          queueId: 0,
          queueOffset: 0,
        });
        found = read.messages[0];
        return found !== undefined;
      },
      "the delayed message appended when due",
      WAIT_MS,
    );
    assert.ok(found);
    assert.ok(found.storeTimestamp >= due, "stored at or after its due time");
    assert.equal(found.properties[MessageConst.DELAY], "1");
    assert.equal(new TextDecoder().decode(found.body), "later");
  });

  it("1,000 delayed messages due in one second: all delivered, none twice", async () => {
    const topic = uniqueName("Burst");
    const queues = await createTopic(api(), topic, 2, ["broker-a"]);
    const due = Date.now() + 8000;
    const batches = Array.from({ length: 10 }, (_, b) =>
      Array.from({ length: 100 }, (_, i) => ({
        body: new TextEncoder().encode(`burst-${b * 100 + i}`),
        properties: { [MessageConst.TIMER_DELIVER_MS]: String(due + ((b * 100 + i) % 1000)) },
      })),
    );
    const answers = await Promise.all(
      batches.map((messages, b) => {
        const mq = queues[b % queues.length];
        assert.ok(mq);
        return api().send({ topic, brokerName: mq.brokerName, queueId: mq.queueId, messages });
      }),
    );
    for (const a of answers) assert.equal(a.deliverTimeMs?.length, 100, "every message waits in the timer store");
    const sentIds = new Set(answers.flatMap((a) => a.msgIds));
    assert.equal(sentIds.size, 1000);
    let got = new Map<string, number>();
    let early = 0;
    /** Every message of the topic's queues, read from offset 0 page by page. */
    const readAll = async () => {
      const seen = new Map<string, number>();
      let before = 0;
      for (const mq of queues) {
        let offset = 0;
        for (;;) {
          const res = await api().pull({
            consumerGroup: "burst",
            topic,
            brokerName: mq.brokerName,
            queueId: mq.queueId,
            queueOffset: offset,
            maxMsgNums: MAX_PULL_MESSAGES,
          });
          for (const m of res.messages) {
            if (m.storeTimestamp < Number(m.properties[MessageConst.TIMER_DELIVER_MS])) before++;
            seen.set(m.msgId, (seen.get(m.msgId) ?? 0) + 1);
          }
          if (res.pullStatus !== "FOUND" || res.nextBeginOffset <= offset) break;
          offset = res.nextBeginOffset;
        }
      }
      got = seen;
      early = before;
      return seen.size === 1000;
    };
    await waitUntil(readAll, "all 1,000 appended", WAIT_MS, 500);
    const status = await api().topicStatus(topic);
    assert.equal(
      status.reduce((n, q) => n + q.maxOffset, 0),
      1000,
      "exactly 1,000 messages appended (none twice)",
    );
    assert.deepEqual(
      [...got.values()].filter((n) => n > 1),
      [],
      "no msgId twice",
    );
    assert.deepEqual(
      [...got.keys()].filter((id) => !sentIds.has(id)),
      [],
    );
    assert.equal(early, 0, "none stored before its deliver time");
  });

  describe("bad input: a 4xx with {code, message}, nothing written", () => {
    it("delay levels out of range, deliver times too far back or ahead, conflicting timers, bad numbers", async () => {
      const topic = uniqueName("BadDelay");
      await createTopic(api(), topic, 1, ["broker-a"]);
      const fresh = uniqueName("NeverCreated");
      const now = Date.now();
      const bad: [Record<string, unknown>, string][] = [
        [{ delayTimeLevel: 4 }, "PARAMETER_ILLEGAL"],
        [{ properties: { DELAY: "4" } }, "PARAMETER_ILLEGAL"],
        [{ properties: { DELAY: "-1" } }, "PARAMETER_ILLEGAL"],
        [{ properties: { DELAY: "two" } }, "PARAMETER_ILLEGAL"],
        [{ delayTimeLevel: 1, properties: { DELAY: "2" } }, "MESSAGE_ILLEGAL"],
        [{ properties: { TIMER_DELIVER_MS: String(now - 3_600_000) } }, "PARAMETER_ILLEGAL"],
        [{ properties: { TIMER_DELIVER_MS: String(now + 8 * 86_400_000) } }, "PARAMETER_ILLEGAL"],
        [{ properties: { TIMER_DELAY_SEC: String(8 * 86_400) } }, "PARAMETER_ILLEGAL"],
        [{ properties: { TIMER_DELAY_MS: "-5" } }, "PARAMETER_ILLEGAL"],
        [{ properties: { TIMER_DELIVER_MS: "soon" } }, "PARAMETER_ILLEGAL"],
        [{ properties: { DELAY: "1", TIMER_DELAY_SEC: "5" } }, "PARAMETER_ILLEGAL"],
      ];
      await writesNothing(ctx.http, [topic, fresh], async () => {
        for (const [fields, code] of bad) {
          for (const t of [topic, fresh]) {
            const answer = await ctx.http.post("/send", { topic: t, messages: [{ body: b64("x"), ...fields }] });
            expectError(answer, 400, code);
          }
        }
        // A batch is delayed as a whole or not at all.
        const mixed = [{ body: b64("now") }, { body: b64("later"), properties: { DELAY: "1" } }];
        expectError(await ctx.http.post("/send", { topic, messages: mixed }), 400, "MESSAGE_ILLEGAL");
        // Too large to wait in the timer store.
        const big = { body: b64("x".repeat(400 * 1024)), properties: { DELAY: "1" } };
        expectError(await ctx.http.post("/send", { topic, messages: [big] }), 413, "MESSAGE_BODY_TOO_LARGE");
        // A transactional message cannot be delayed.
        const half = { producerGroup: "pg", topic, message: { body: b64("x"), properties: { DELAY: "1" } } };
        expectError(await ctx.http.post("/transactions", half), 400, "PARAMETER_ILLEGAL");
      });
    });

    it("send-back of a missing message, a level out of range or a bad request", async () => {
      const topic = uniqueName("BadBack");
      const group = uniqueName("gBadBack");
      await createTopic(api(), topic, 1, ["broker-a"]);
      ok(await ctx.http.post("/send", { topic, brokerName: "broker-a", queueId: 0, messages: [{ body: b64("m") }] }));
      const base = { consumerGroup: group, topic, brokerName: "broker-a", queueId: 0, queueOffset: 0 };
      await writesNothing(ctx.http, [topic, retryTopic(group), dlqTopic(group)], async () => {
        expectError(await ctx.http.post("/send-back", { ...base, queueOffset: 5 }), 404, "QUERY_NOT_FOUND");
        expectError(await ctx.http.post("/send-back", { ...base, delayLevel: 4 }), 400, "PARAMETER_ILLEGAL");
        expectError(await ctx.http.post("/send-back", { ...base, delayLevel: -2 }), 400, "PARAMETER_ILLEGAL");
        expectError(await ctx.http.post("/send-back", { ...base, maxReconsumeTimes: -1 }), 400, "PARAMETER_ILLEGAL");
        expectError(
          await ctx.http.post("/send-back", { ...base, consumerGroup: "bad group" }),
          400,
          "PARAMETER_ILLEGAL",
        );
        expectError(await ctx.http.post("/send-back", { ...base, extra: 1 }), 400, "PARAMETER_ILLEGAL");
        expectError(
          await ctx.http.post("/send-back", { ...base, topic: uniqueName("Missing") }),
          404,
          "TOPIC_NOT_EXIST",
        );
      });
    });
  });
}
