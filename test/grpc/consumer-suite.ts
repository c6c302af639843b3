/**
 * @module RocketMQ's official Node.js client consuming through the gRPC endpoint on POP: a SimpleConsumer
 * receives with a tag filter and acks, changes a message's invisible duration and gets it again, sees a
 * message it never acks come back and end in `%DLQ%<group>` after the max attempts (a POP group gets what is sent
 * from its start, so tests that send before their consumer starts start its group first); the documented first
 * flow (start, send, receive) gets every message on two brokers; a PushConsumer consumes
 * what was sent; a PushConsumer of a FIFO group is told so in its Settings (with its group's max attempts and
 * the server's long polling) and consumes one message group in send order; and messages sent over HTTP by the
 * Nimbus SDK arrive with their id, tag, keys and properties.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConsumeResult, Producer, PushConsumer as RocketPushConsumer, SimpleConsumer } from "rocketmq-client-nodejs";
import { NimbusApi } from "../../lib/client/index.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { quietLogger, useGrpcServer } from "../support/grpc-fixture.js";
import { startPopGroup } from "../support/pop-group.js";
import { type ServerMode, uniqueName } from "../support/server-fixture.js";
import { storedMessages } from "./producer-suite.js";

type View = Awaited<ReturnType<SimpleConsumer["receive"]>>[number];

export function consumerCases(mode: ServerMode): void {
  describe(`the official Node.js client consumes over gRPC (${mode})`, () => {
    const fifoGroup = uniqueName("gFifo");
    // A short longest wait: a PushConsumer's shutdown waits for its receives in flight (up to that long).
    const ctx = useGrpcServer(mode, { popMaxDeliveryAttempts: 2, popFifoGroups: [fifoGroup], popMaxLongPollMs: 2000 });
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const simple = async (group: string, topic: string, expression = "*") => {
      const c = new SimpleConsumer({
        endpoints: ctx.endpoint,
        namespace: "",
        consumerGroup: group,
        subscriptions: new Map([[topic, expression]]),
        awaitDuration: 1000,
        logger: quietLogger(),
      });
      await c.startup();
      return c;
    };
    const receiveAll = async (c: SimpleConsumer, want: number, invisibleMs = 20_000): Promise<View[]> => {
      const got: View[] = [];
      await waitUntil(async () => {
        got.push(...(await c.receive(16, invisibleMs)));
        return got.length >= want;
      }, `${want} messages received`);
      return got;
    };
    /** Tests that send before their consumer starts start its group first (docs/pop.md). */
    const startGroup = (group: string, topic: string) => startPopGroup(ctx.server.context.broker, group, topic);
    const pushConsumer = (group: string, topic: string, onMessage: (m: { messageId: string }) => void) =>
      new RocketPushConsumer({
        endpoints: ctx.endpoint,
        namespace: "",
        consumerGroup: group,
        subscriptions: new Map([[topic, "*"]]),
        messageListener: {
          consume: async (m: { messageId: string }) => {
            onMessage(m);
            return ConsumeResult.SUCCESS;
          },
        },
        logger: quietLogger(),
      });
    const sendOverHttp = (topic: string, tags: string, i: number) =>
      api().send({
        topic,
        messages: [
          { body: new TextEncoder().encode(`http ${i}`), tags, keys: [`hk-${i}`], properties: { n: String(i) } },
        ],
      });

    it("the documented first flow: start a SimpleConsumer, send 10 then 100, receive every one (two brokers)", async () => {
      const topic = uniqueName("GrpcFirstFlow");
      const group = uniqueName("gFirstFlow");
      await createTopic(api(), topic, 2);
      const c = await simple(group, topic);
      const p = new Producer({ endpoints: ctx.endpoint, namespace: "", logger: quietLogger() });
      await p.startup();
      try {
        for (const count of [10, 100]) {
          const sent = new Set<string>();
          for (let i = 0; i < count; i++) {
            const receipt = await p.send({ topic, tag: "T", body: Buffer.from(`first flow ${i}`) });
            sent.add(receipt.messageId);
          }
          const got = await receiveAll(c, count);
          assert.deepEqual(new Set(got.map((m) => m.messageId)), sent, `all ${count} received`);
          for (const m of got) await c.ack(m);
        }
        // The messages went to both brokers, which the client asks one at a time.
        const status = await api().topicStatus(topic);
        for (const b of ["broker-a", "broker-b"])
          assert.ok(
            status.some((q) => q.brokerName === b && q.maxOffset > 0),
            `messages on ${b}`,
          );
      } finally {
        await p.shutdown();
        await c.shutdown();
      }
    });

    it("a SimpleConsumer receives the tag it subscribed to, with every field of an HTTP-sent message, and acks", async () => {
      const topic = uniqueName("GrpcSimple");
      const group = uniqueName("gSimple");
      await createTopic(api(), topic, 2);
      await startGroup(group, topic);
      const sent = [];
      for (let i = 0; i < 4; i++) sent.push(await sendOverHttp(topic, i % 2 === 0 ? "TagA" : "TagB", i));
      const c = await simple(group, topic, "TagA");
      try {
        const got = await receiveAll(c, 2);
        assert.deepEqual(new Set(got.map((m) => m.messageId)), new Set([sent[0]?.msgIds[0], sent[2]?.msgIds[0]]));
        for (const m of got) {
          const n = Number(m.properties.get("n"));
          assert.equal(m.tag, "TagA");
          assert.deepEqual(m.keys, [`hk-${n}`]);
          assert.equal(m.body.toString(), `http ${n}`);
          await c.ack(m);
        }
        assert.deepEqual(await c.receive(16, 20_000), [], "nothing left once acked");
      } finally {
        await c.shutdown();
      }
    });

    it("a changed invisible duration brings the message back; unacked it ends in %DLQ% after the max attempts", async () => {
      const topic = uniqueName("GrpcRedeliver");
      const group = uniqueName("gRedeliver");
      await createTopic(api(), topic, 1);
      await startGroup(group, topic);
      const sent = await sendOverHttp(topic, "T", 0);
      const c = await simple(group, topic);
      try {
        const [first] = await receiveAll(c, 1);
        assert.ok(first);
        await c.changeInvisibleDuration(first, 1000);
        const [second] = await receiveAll(c, 1, 1000);
        assert.equal(second?.messageId, sent.msgIds[0], "redelivered after the changed invisible time");
        assert.ok(first.receiptHandle !== second?.receiptHandle, "a new receipt handle");
        // Never acked: once its second invisible time ends, the next receive finds it past the max attempts.
        await waitUntil(async () => {
          await c.receive(16, 1000);
          return (await storedMessages(api(), `%DLQ%${group}`).catch(() => [])).length === 1;
        }, "the message in the dead letter queue after 2 attempts");
      } finally {
        await c.shutdown();
      }
    });

    // The consume service's own file logger would keep the process alive: grpc-fixture.ts routes it.
    it("a PushConsumer consumes what the Producer sends over gRPC", async () => {
      const topic = uniqueName("GrpcPush");
      const group = uniqueName("gPush");
      await createTopic(api(), topic, 2);
      await startGroup(group, topic);
      const consumed = new Set<string>();
      const consumer = pushConsumer(group, topic, (m) => consumed.add(m.messageId));
      const producer = new Producer({ endpoints: ctx.endpoint, namespace: "", logger: quietLogger() });
      await consumer.startup();
      await producer.startup();
      try {
        const told = consumer.getPushConsumerSettings();
        assert.equal(told.isFifo(), false, "a group that is not FIFO is told so");
        assert.equal(told.getLongPollingTimeout(), 2000, "the server's longest wait");
        const ids: string[] = [];
        for (let i = 0; i < 5; i++)
          ids.push((await producer.send({ topic, body: Buffer.from(`push ${i}`) })).messageId);
        await waitUntil(() => ids.every((id) => consumed.has(id)), "every message consumed by the PushConsumer");
      } finally {
        await producer.shutdown();
        await consumer.shutdown();
      }
    });

    it("a PushConsumer of a FIFO group is told fifo in its Settings and consumes one message group in order", async () => {
      const topic = uniqueName("GrpcPushFifo");
      await createTopic(api(), topic, 2);
      await startGroup(fifoGroup, topic);
      const order: string[] = [];
      const consumer = pushConsumer(fifoGroup, topic, (m) => order.push(m.messageId));
      const producer = new Producer({ endpoints: ctx.endpoint, namespace: "", logger: quietLogger() });
      await consumer.startup();
      await producer.startup();
      try {
        const told = consumer.getPushConsumerSettings();
        assert.equal(told.isFifo(), true, "Settings.subscription.fifo for a FIFO group");
        assert.equal(told.getRetryPolicy()?.getMaxAttempts(), 2, "the group's deliveries before the DLQ");
        const ids: string[] = [];
        for (let i = 0; i < 6; i++)
          ids.push((await producer.send({ topic, messageGroup: "order-7", body: Buffer.from(`step ${i}`) })).messageId);
        await waitUntil(() => order.length >= ids.length, "every message of the group consumed");
        assert.deepEqual(order, ids, "consumed once each, in send order");
      } finally {
        await producer.shutdown();
        await consumer.shutdown();
      }
    });
  });
}
