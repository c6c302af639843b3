/**
 * @module E2E of the SDK's Producer against a local server: retries that leave a dead broker, client-side
 * batching, and one-way sends.
 *
 * A dead broker is real here: the test re-registers broker-a with the name server at the address of a
 * port that was just closed (or of a socket that never answers), so the route the server hands out
 * points the producer at it, as a route would point at a crashed broker.
 */
import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { describe, it } from "node:test";
import { Message, type SendResult } from "../../lib/client/message.js";
import { MessageConst } from "../../lib/core/message.js";
import { MessageQueue } from "../../lib/core/message-queue.js";
import {
  countRequests,
  createTopic,
  deadAddress,
  isCode,
  pullAll,
  registerAt,
  server,
  startProducer,
  text,
  useProducerServer,
} from "../support/producer-fixture.js";

useProducerServer();

describe("Producer: retries", () => {
  it("a send that fails on a dead broker-a is retried on broker-b", async () => {
    const topic = await createTopic(2);
    const dead = await deadAddress();
    const registration = await registerAt(dead);
    const counter = countRequests();
    try {
      const producer = await startProducer();
      const results: SendResult[] = [];
      for (let i = 0; i < 8; i++) results.push(await producer.send(new Message(topic, `r${i}`)));
      assert.ok(results.every((r) => r.messageQueue.brokerName === "broker-b"));
      // Round robin over a0 a1 b0 b1 puts every other first attempt on broker-a (a retry's pick moves
      // the counter too): 3 or 4 of the 8 sends failed over, depending on the random start.
      const failedOver = counter.count((u) => u.startsWith(dead));
      assert.ok(failedOver === 3 || failedOver === 4, `${failedOver} sends failed over`);
      for (const r of results) {
        const stored = (await pullAll(r.messageQueue)).find((m) => m.queueOffset === r.queueOffset);
        assert.equal(stored?.msgId, r.msgId);
      }
    } finally {
      counter.restore();
      await registration.restore();
    }
  });

  it("without retries, the sends that pick broker-a fail with SYSTEM_BUSY", async () => {
    const topic = await createTopic(2);
    const dead = await deadAddress();
    const registration = await registerAt(dead);
    try {
      const producer = await startProducer({ retryTimesWhenSendFailed: 0 });
      const outcomes = await Promise.allSettled(
        Array.from({ length: 4 }, (_, i) => producer.send(new Message(topic, `n${i}`))),
      );
      const failed = outcomes.filter((o) => o.status === "rejected");
      assert.equal(failed.length, 2);
      for (const f of failed) assert.ok(isCode("SYSTEM_BUSY")(f.reason));
    } finally {
      await registration.restore();
    }
  });

  it("a send to a fixed queue on the dead broker retries that queue, never another", async () => {
    const topic = await createTopic(2);
    const dead = await deadAddress();
    const registration = await registerAt(dead);
    const counter = countRequests();
    try {
      const producer = await startProducer({ retryTimesWhenSendFailed: 2 });
      const mq = new MessageQueue(topic, "broker-a", 1);
      await assert.rejects(producer.send(new Message(topic, "f"), mq), isCode("SYSTEM_BUSY"));
      assert.equal(
        counter.count((u) => u.startsWith(dead)),
        3,
      );
      assert.equal(
        counter.count((u) => u.startsWith(server.url) && u.endsWith("/send")),
        0,
      );
    } finally {
      counter.restore();
      await registration.restore();
    }
  });

  it("attempts stop when the send timeout is spent (a broker that never answers)", async () => {
    const topic = await createTopic(2);
    const sockets = new Set<Socket>();
    const silent: Server = createServer((s) => sockets.add(s));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const address = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    const registration = await registerAt(address, ["broker-a", "broker-b"]);
    const counter = countRequests();
    try {
      const producer = await startProducer({ retryTimesWhenSendFailed: 2 });
      await assert.rejects(producer.send(new Message(topic, "t"), 300), isCode("SYSTEM_BUSY"));
      // 3 attempts were allowed; the first one used up (nearly) all of the 300 ms.
      assert.ok(counter.count((u) => u.startsWith(address)) < 3);
    } finally {
      counter.restore();
      await registration.restore();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe("Producer: client-side batching", () => {
  it("100 sends within the linger time go out as 4 requests; each caller gets its own offset and id", async () => {
    const topic = await createTopic(2);
    const producer = await startProducer({ batching: { lingerMs: 50, maxMessages: 32, maxBytes: 1 << 20 } });
    await producer.fetchPublishMessageQueues(topic); // the route lookup is not counted below
    const msgs = Array.from({ length: 100 }, (_, i) => new Message(topic, `linger-${i}`));
    const counter = countRequests();
    let results: SendResult[];
    try {
      results = await Promise.all(msgs.map((m) => producer.send(m)));
    } finally {
      counter.restore();
    }
    assert.equal(
      counter.count((u) => u.endsWith("/send")),
      4,
    ); // 32 + 32 + 32 + 4
    assert.equal(new Set(results.map((r) => `${r.messageQueue.key()}@${r.queueOffset}`)).size, 100);
    for (const [i, r] of results.entries()) {
      assert.equal(r.msgId, msgs[i]?.msgId);
      const prev = results[i - 1];
      if (i % 32 !== 0 && prev) {
        assert.ok(prev.messageQueue.equals(r.messageQueue));
        assert.equal(r.queueOffset, prev.queueOffset + 1);
      }
    }
    for (const [i, r] of results.entries()) {
      if (i % 32 !== 0) continue;
      const stored = await pullAll(r.messageQueue);
      for (let j = i; j < Math.min(i + 32, 100); j++) {
        const m = stored.find((s) => s.queueOffset === results[j]?.queueOffset);
        assert.equal(m && text(m.body), `linger-${j}`);
      }
    }
  });

  it("a batch the broker refuses rejects every caller in it", async () => {
    const topic = await createTopic(1, ["broker-a"]);
    const producer = await startProducer({ batching: { lingerMs: 50 } });
    const bad = new Message(topic, "bad");
    bad.putUserProperty(MessageConst.TAGS, "reserved"); // the broker refuses the whole batch
    const outcomes = await Promise.allSettled([
      producer.send(new Message(topic, "a")),
      producer.send(bad),
      producer.send(new Message(topic, "b")),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ["rejected", "rejected", "rejected"],
    );
    for (const o of outcomes) if (o.status === "rejected") assert.ok(isCode("MESSAGE_ILLEGAL")(o.reason));
    assert.deepEqual(await pullAll({ topic, brokerName: "broker-a", queueId: 0 }), []);
  });

  it("shutdown sends the batch that is still waiting", async () => {
    const topic = await createTopic(1, ["broker-a"]);
    const producer = await startProducer({ batching: { lingerMs: 60_000 } });
    const pending = producer.send(new Message(topic, "waiting"));
    await producer.shutdown();
    const result = await pending;
    assert.equal(result.queueOffset, 0);
    assert.deepEqual(
      (await pullAll(result.messageQueue)).map((m) => text(m.body)),
      ["waiting"],
    );
  });
});

describe("Producer: sendOneway", () => {
  it("sends without a result, and never rejects", async () => {
    const topic = await createTopic(1, ["broker-a"]);
    const errors: unknown[] = [];
    const producer = await startProducer({ onError: (err) => errors.push(err) });
    assert.equal(await producer.sendOneway(new Message(topic, "one-way")), undefined);
    assert.deepEqual(
      (await pullAll({ topic, brokerName: "broker-a", queueId: 0 })).map((m) => text(m.body)),
      ["one-way"],
    );
    assert.deepEqual(errors, []);
    await producer.sendOneway(new Message("bad topic name", "x"));
    await producer.sendOneway(new Message(topic, "x"), new MessageQueue(topic, "broker-a", 9));
    assert.equal(errors.length, 2);
    assert.ok(errors.every((e) => isCode("PARAMETER_ILLEGAL")(e)));
  });
});
