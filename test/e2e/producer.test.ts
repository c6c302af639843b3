/**
 * @module E2E of the SDK's Producer against a local server: sends read back with `NimbusApi.pull`,
 * batches, per-key order through a selector, retries that leave a dead broker, client-side batching,
 * one-way sends, and shutdown unregistering the producer.
 *
 * A dead broker is real here: the test re-registers broker-a with the name server at the address of a
 * port that was just closed (or of a socket that never answers), so the route the server hands out
 * points the producer at it, as a route would point at a crashed broker.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { queryAll } from "../../lib/broker/query-all.js";
import { CLIENTS_TABLE, keys } from "../../lib/broker/tables.js";
import { NimbusApi, type PulledMessage } from "../../lib/client/api-client.js";
import { Message, type SendResult } from "../../lib/client/message.js";
import { Producer, type ProducerOptions, SelectMessageQueueByHash } from "../../lib/client/producer.js";
import { isNimbusError } from "../../lib/core/errors.js";
import { MessageConst } from "../../lib/core/message.js";
import { MessageQueue } from "../../lib/core/message-queue.js";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";

let server: LocalServer;
let api: NimbusApi;
let dataDir: string;
let seq = 0;
const producers: Producer[] = [];
const unique = (prefix: string) => `${prefix}-${process.pid}-${++seq}`;
const text = (b: Uint8Array) => new TextDecoder().decode(b);

before(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-producer-"));
  // Registration only at start: the dead-broker tests re-register broker-a by hand.
  server = await startLocalServer({ port: 0, storage: { kind: "local", dataDir }, registerIntervalMs: 3_600_000 });
  api = new NimbusApi({ endpoints: server.url });
});

after(async () => {
  for (const p of producers) await p.shutdown();
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startProducer(options: Partial<ProducerOptions> = {}): Promise<Producer> {
  const producer = new Producer({ producerGroup: unique("PG"), endpoints: server.url, ...options });
  producers.push(producer);
  await producer.start();
  return producer;
}

async function createTopic(queues: number, brokerNames?: string[], perm?: number): Promise<string> {
  const topic = unique("ProducerTopic");
  await api.updateTopic(topic, {
    readQueueNums: queues,
    writeQueueNums: queues,
    ...(brokerNames ? { brokerNames } : {}),
    ...(perm === undefined ? {} : { perm }),
  });
  return topic;
}

async function pullAll(mq: { topic: string; brokerName: string; queueId: number }): Promise<PulledMessage[]> {
  const out: PulledMessage[] = [];
  for (let offset = 0; ; ) {
    const res = await api.pull({ consumerGroup: "ProducerProbe", ...mq, queueOffset: offset, maxMsgNums: 32 });
    if (res.pullStatus !== "FOUND") return out;
    out.push(...res.messages);
    offset = res.nextBeginOffset;
  }
}

/** Counts requests by wrapping `fetch` (the server does not use it); `restore()` unwraps. */
function countRequests() {
  const original = globalThis.fetch;
  const urls: string[] = [];
  globalThis.fetch = ((input, init) => {
    urls.push(input instanceof Request ? input.url : String(input));
    return original(input, init);
  }) as typeof fetch;
  return {
    count: (pred: (url: string) => boolean) => urls.filter(pred).length,
    restore: () => {
      globalThis.fetch = original;
    },
  };
}

/** Points broker-a (or every broker) of the name server at `address` until `restore()`. */
async function registerAt(address: string, brokerNames = ["broker-a"]) {
  await server.context.broker.nameServer.register(
    brokerNames.map((brokerName) => ({ cluster: "DefaultCluster", brokerName, brokerId: 0, address, perm: 6 })),
  );
  return { restore: () => server.context.broker.registerBrokers() };
}

/** An address where nothing listens: a port opened and closed again. */
async function deadAddress(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Waits for a condition that background timers make true (no timing is asserted). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail("the condition never held");
}

const isCode = (code: string) => (err: unknown) => isNimbusError(err) && err.code === code;

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
