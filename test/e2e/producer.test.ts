/**
 * @module E2E of the SDK's Producer against a local server: lifecycle (heartbeat, unregister, route refresh,
 * client ids) and sending (round robin read back with pull, UNIQ_KEY, auto-create, explicit queues, batches,
 * per-key order through a selector, non-retryable failures).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { queryAll } from "../../lib/broker/store/query-all.js";
import { CLIENTS_TABLE, keys } from "../../lib/broker/store/tables.js";
import { Message, type SendResult } from "../../lib/client/message.js";
import { Producer, SelectMessageQueueByHash } from "../../lib/client/producer/producer.js";
import { MessageConst } from "../../lib/core/message.js";
import { MessageQueue } from "../../lib/core/message-queue.js";
import {
  api,
  countRequests,
  createTopic,
  isCode,
  pullAll,
  server,
  startProducer,
  text,
  unique,
  until,
  useProducerServer,
} from "../support/producer-fixture.js";

useProducerServer();

describe("Producer: lifecycle", () => {
  it("refuses to send before start, and after shutdown", async () => {
    const producer = new Producer({ producerGroup: unique("PG"), endpoints: server.url });
    await assert.rejects(producer.send(new Message("T", "x")), isCode("SERVICE_NOT_AVAILABLE"));
    await producer.start();
    await producer.shutdown();
    await assert.rejects(producer.send(new Message("T", "x")), isCode("SERVICE_NOT_AVAILABLE"));
  });

  it("heartbeats at start under its client id, and shutdown unregisters it from the group", async () => {
    const group = unique("PG");
    const producer = new Producer({ producerGroup: group, endpoints: server.url, instanceName: "orders-1" });
    assert.match(producer.clientId, /^[0-9.]+@orders-1$/);
    const rows = () => queryAll(server.storage.table(CLIENTS_TABLE), keys.producers(group), { consistent: true });
    await producer.start();
    assert.deepEqual(
      (await rows()).map((r) => r.sk),
      [producer.clientId],
    );
    await producer.shutdown();
    assert.deepEqual(await rows(), []);
  });

  it("re-fetches routes and heartbeats on its intervals", async () => {
    const topic = await createTopic(2);
    const group = unique("PG");
    const producer = await startProducer({
      producerGroup: group,
      pollNameServerInterval: 20,
      heartbeatBrokerInterval: 20,
    });
    assert.equal((await producer.fetchPublishMessageQueues(topic)).length, 4);
    await api.updateTopic(topic, { readQueueNums: 3, writeQueueNums: 3 });
    const heartbeatAt = async () =>
      Number((await queryAll(server.storage.table(CLIENTS_TABLE), keys.producers(group)))[0]?.lastHeartbeat);
    const firstHeartbeat = await heartbeatAt();
    await until(async () => (await producer.fetchPublishMessageQueues(topic)).length === 6);
    await until(async () => (await heartbeatAt()) > firstHeartbeat);
  });

  it("a DEFAULT instance name becomes pid#nanoTime, so two producers have two client ids", () => {
    const a = new Producer({ producerGroup: "PG", endpoints: server.url });
    const b = new Producer({ producerGroup: "PG", endpoints: server.url });
    assert.match(a.clientId, new RegExp(`@${process.pid}#\\d+$`));
    assert.notEqual(a.clientId, b.clientId);
  });
});

describe("Producer: sending", () => {
  it("round-robins over the writable queues; the data reads back with pull", async () => {
    const topic = await createTopic(2);
    const producer = await startProducer();
    const results: SendResult[] = [];
    for (let i = 0; i < 8; i++) {
      const msg = new Message(topic, "TagA", [`k${i}`, "order"], `body-${i}`);
      msg.putUserProperty("seq", String(i));
      results.push(await producer.send(msg));
    }
    const perQueue = new Map<string, number>();
    for (const r of results) perQueue.set(r.messageQueue.key(), (perQueue.get(r.messageQueue.key()) ?? 0) + 1);
    assert.deepEqual([...perQueue.values()], [2, 2, 2, 2]);
    for (const [i, r] of results.entries()) {
      const stored = (await pullAll(r.messageQueue)).find((m) => m.queueOffset === r.queueOffset);
      assert.ok(stored, `message ${i} at ${r.messageQueue.key()}@${r.queueOffset}`);
      assert.equal(text(stored.body), `body-${i}`);
      assert.equal(stored.tags, "TagA");
      assert.deepEqual(stored.keys, [`k${i}`, "order"]);
      assert.equal(stored.properties.seq, String(i));
      assert.equal(stored.msgId, r.msgId);
      assert.equal(stored.properties[MessageConst.UNIQ_KEY], r.msgId);
    }
  });

  it("sets UNIQ_KEY on the message before sending, and keeps one the message already has", async () => {
    const topic = await createTopic(1);
    const producer = await startProducer();
    const msg = new Message(topic, "hi");
    const result = await producer.send(msg);
    assert.equal(msg.msgId, result.msgId);
    const again = await producer.send(msg);
    assert.equal(again.msgId, result.msgId);
  });

  it("sends to a topic without a route (auto-create), then uses its route", async () => {
    const topic = unique("AutoTopic");
    const producer = await startProducer();
    const first = await producer.send(new Message(topic, "first"));
    assert.equal(first.messageQueue.topic, topic);
    const queues = await producer.fetchPublishMessageQueues(topic);
    assert.equal(queues.length, 8); // 4 queues on each of broker-a and broker-b
    const second = await producer.send(new Message(topic, "second"));
    assert.ok(queues.some((q) => q.equals(second.messageQueue)));
  });

  it("send(msg, mq) writes to that queue", async () => {
    const topic = await createTopic(4);
    const producer = await startProducer();
    const mq = new MessageQueue(topic, "broker-b", 3);
    for (let i = 0; i < 3; i++) {
      const r = await producer.send(new Message(topic, `q${i}`), mq);
      assert.ok(r.messageQueue.equals(mq));
      assert.equal(r.queueOffset, i);
    }
    await assert.rejects(
      producer.send(new Message(topic, "x"), new MessageQueue("Other", "broker-a", 0)),
      isCode("PARAMETER_ILLEGAL"),
    );
    await assert.rejects(
      producer.send(new Message(topic, "x"), new MessageQueue(topic, "broker-z", 0)),
      isCode("PARAMETER_ILLEGAL"),
    );
  });

  it("send(msgs[]) is one request into one queue at consecutive offsets", async () => {
    const topic = await createTopic(2);
    const producer = await startProducer();
    await producer.send(new Message(topic, "warm-up")); // the route lookup is not counted below
    const msgs = Array.from({ length: 10 }, (_, i) => new Message(topic, `batch-${i}`));
    const counter = countRequests();
    let result: SendResult;
    try {
      result = await producer.send(msgs);
    } finally {
      counter.restore();
    }
    assert.equal(
      counter.count((u) => u.endsWith("/send")),
      1,
    );
    assert.deepEqual(
      result.msgIds,
      msgs.map((m) => m.msgId),
    );
    const stored = (await pullAll(result.messageQueue)).filter((m) => m.queueOffset >= result.queueOffset);
    assert.deepEqual(
      stored.map((m) => text(m.body)),
      msgs.map((_, i) => `batch-${i}`),
    );
    assert.deepEqual(
      stored.map((m) => m.queueOffset),
      msgs.map((_, i) => result.queueOffset + i),
    );
    await assert.rejects(
      producer.send([new Message(topic, "a"), new Message(`${topic}x`, "b")]),
      isCode("PARAMETER_ILLEGAL"),
    );
  });

  it("a selector keeps each key's messages in one queue, in send order", async () => {
    const topic = await createTopic(4);
    const producer = await startProducer();
    const byHash = new SelectMessageQueueByHash();
    const keyCount = 24;
    const perKey = 12;
    const sent = await Promise.all(
      Array.from({ length: keyCount }, async (_, k) => {
        const results: SendResult[] = [];
        for (let i = 0; i < perKey; i++) {
          results.push(await producer.send(new Message(topic, "", `key-${k}`, `${k}:${i}`), byHash, `key-${k}`));
        }
        return results;
      }),
    );
    const usedQueues = new Set<string>();
    for (const [k, results] of sent.entries()) {
      const queue = results[0]?.messageQueue.key();
      assert.ok(
        results.every((r) => r.messageQueue.key() === queue),
        `key-${k} stayed in one queue`,
      );
      usedQueues.add(queue ?? "");
      const offsets = results.map((r) => r.queueOffset);
      assert.deepEqual(
        offsets,
        [...offsets].sort((a, b) => a - b),
        `key-${k}'s offsets increase with send order`,
      );
    }
    assert.ok(usedQueues.size > 1);
    for (const key of usedQueues) {
      const bodies = (await pullAll(MessageQueue.fromKey(key))).map((m) => text(m.body).split(":").map(Number));
      for (let k = 0; k < keyCount; k++) {
        const order = bodies.filter(([key]) => key === k).map(([, i]) => i);
        assert.deepEqual(
          order,
          [...order].sort((a = 0, b = 0) => a - b),
        );
      }
    }
  });

  it("a selector on a topic without a route fails with TOPIC_NOT_EXIST", async () => {
    const producer = await startProducer();
    const msg = new Message(unique("NoRoute"), "x");
    await assert.rejects(producer.send(msg, new SelectMessageQueueByHash(), 1), isCode("TOPIC_NOT_EXIST"));
  });

  it("non-retryable failures throw at once: NO_PERMISSION, too large, bad timeout", async () => {
    const topic = await createTopic(2);
    await api.updateTopic(topic, { readQueueNums: 2, writeQueueNums: 2, perm: 4, brokerNames: ["broker-a"] });
    const producer = await startProducer();
    assert.deepEqual(
      (await producer.fetchPublishMessageQueues(topic)).map((q) => q.brokerName),
      ["broker-b", "broker-b"],
    );
    const counter = countRequests();
    try {
      await assert.rejects(
        producer.send(new Message(topic, "x"), new MessageQueue(topic, "broker-a", 0)),
        isCode("NO_PERMISSION"),
      );
      assert.equal(
        counter.count((u) => u.endsWith("/send")),
        1,
      );
      const big = new Message(topic, new Uint8Array(4 * 1024 * 1024 + 1));
      await assert.rejects(producer.send(big), isCode("MESSAGE_BODY_TOO_LARGE"));
      await assert.rejects(producer.send(new Message(topic, "")), isCode("MESSAGE_ILLEGAL"));
      await assert.rejects(producer.send(new Message(topic, "x"), -5), isCode("PARAMETER_ILLEGAL"));
      assert.equal(
        counter.count((u) => u.endsWith("/send")),
        1,
      );
    } finally {
      counter.restore();
    }
  });
});
