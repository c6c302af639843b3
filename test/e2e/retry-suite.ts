/**
 * @module E2E cases of retries and dead letters through the SDK like a user: a RECONSUME_LATER message comes
 * back through `%RETRY%<group>` with reconsumeTimes 0, 1, 2 while the original queue's offset moves on; one that
 * always fails ends in `%DLQ%<group>` after maxReconsumeTimes; a consumer restarted meanwhile loses nothing;
 * BROADCASTING drops (and reports) a failed message; bad send-backs are refused with a 4xx and write nothing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MessageConst } from "../../lib/core/message.js";
import { dlqTopic, retryTopic } from "../../lib/core/names.js";
import { createTopic, freshTopicOnBrokerA, waitUntil } from "../support/consumer-helpers.js";
import { b64, expectError, ok, writesNothing } from "../support/http.js";
import { uniqueName } from "../support/server-fixture.js";

import { type Delivery, type RetryDelayFixture, WAIT_MS } from "./retry-delay-fixture.js";

export function retryCases({ ctx, api, consumer, record, recordingInto, sendOne, committed }: RetryDelayFixture): void {
  it("RECONSUME_LATER twice, then success: 3 deliveries, reconsumeTimes 0,1,2, the original queue's offset moves on", async () => {
    const { topic, group } = await freshTopicOnBrokerA(api(), "Retry");
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
    const { topic, group } = await freshTopicOnBrokerA(api(), "Dlq");
    const seen: Delivery[] = [];
    const c = consumer(group, topic, recordingInto(seen, "RECONSUME_LATER"), { maxReconsumeTimes: 2 });
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
    const { topic, group } = await freshTopicOnBrokerA(api(), "Restart");
    const first: Delivery[] = [];
    const c1 = consumer(group, topic, recordingInto(first, "RECONSUME_LATER"));
    await c1.start();
    const msgId = await sendOne(topic, "survivor");
    // c1 failed it and the broker holds it: the original queue is committed past it.
    await waitUntil(async () => (await committed(group, topic)) === 1, "c1 sent it back", WAIT_MS);
    await c1.shutdown();
    const second: Delivery[] = [];
    const c2 = consumer(group, topic, recordingInto(second, "CONSUME_SUCCESS"));
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
    const { topic, group } = await freshTopicOnBrokerA(api(), "BroadcastFail");
    const errors: string[] = [];
    const seen: Delivery[] = [];
    const { mkdtempSync, rmSync } = await import("node:fs");
    const os = await import("node:os");
    const path = await import("node:path");
    const dir = mkdtempSync(path.join(os.tmpdir(), "nimbus-broadcast-fail-"));
    try {
      const c = consumer(group, topic, recordingInto(seen, "RECONSUME_LATER"), {
        messageModel: "BROADCASTING",
        offsetStoreDir: dir,
        onError: (_e, what) => errors.push(what),
      });
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

  describe("bad input: a 4xx with {code, message}, nothing written", () => {
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
