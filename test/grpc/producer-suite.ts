/**
 * @module RocketMQ's official Node.js client (`rocketmq-client-nodejs`, unchanged) producing through the gRPC
 * endpoint: normal, FIFO, delay and transactional messages (commit, rollback, and a check-back answered by
 * another producer after the sender is gone), each read back over Nimbus' HTTP API as the stored message it
 * became; an unknown topic refused with nothing created.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Producer } from "rocketmq-client-nodejs";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { MessageConst } from "../../lib/core/message.js";
import type { PulledMessage } from "../../lib/protocol/index.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { quietLogger, useGrpcServer } from "../support/grpc-fixture.js";
import { type ServerMode, uniqueName } from "../support/server-fixture.js";

/** TransactionResolution of apache.rocketmq.v2 (the client's checker answers these numbers). */
const COMMIT = 1;

/** Every message of `topic` on every queue, read over HTTP. */
export async function storedMessages(api: NimbusApi, topic: string): Promise<PulledMessage[]> {
  const route = await api.topicRoute(topic);
  const out: PulledMessage[] = [];
  for (const qd of route.queueDatas) {
    for (let queueId = 0; queueId < qd.readQueueNums; queueId++) {
      const page = await api.pull({
        consumerGroup: "grpc-test-reader",
        topic,
        brokerName: qd.brokerName,
        queueId,
        queueOffset: 0,
      });
      out.push(...page.messages);
    }
  }
  return out;
}

export function producerCases(mode: ServerMode): void {
  describe(`the official Node.js client produces over gRPC (${mode})`, () => {
    const ctx = useGrpcServer(mode, { transactionTimeoutMs: 500, transactionCheckIntervalMs: 600_000 });
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const producer = async (options: Record<string, unknown> = {}) => {
      const logger = quietLogger();
      const p = new Producer({ endpoints: ctx.endpoint, namespace: "", logger, ...options });
      await p.startup();
      return p;
    };

    it("a normal message is stored with its id, tag, keys and properties", async () => {
      const topic = uniqueName("GrpcNormal");
      await createTopic(api(), topic, 2);
      const p = await producer();
      try {
        const receipt = await p.send({
          topic,
          tag: "TagA",
          keys: ["k1", "k2"],
          properties: new Map([["color", "red"]]),
          body: Buffer.from("hello over gRPC"),
        });
        const [stored] = (await storedMessages(api(), topic)).filter((m) => m.msgId === receipt.messageId);
        assert.ok(stored, "the message is in one of the topic's queues");
        assert.equal(new TextDecoder().decode(stored.body), "hello over gRPC");
        assert.equal(stored.tags, "TagA");
        assert.deepEqual(stored.keys, ["k1", "k2"]);
        assert.equal(stored.properties.color, "red");
        assert.equal(stored.properties[MessageConst.UNIQ_KEY], receipt.messageId);
        assert.equal(stored.queueOffset, Number(receipt.offset));
      } finally {
        await p.shutdown();
      }
    });

    it("FIFO messages of one group land in one queue in send order, the group kept", async () => {
      const topic = uniqueName("GrpcFifo");
      await createTopic(api(), topic, 4);
      const p = await producer();
      try {
        const ids: string[] = [];
        for (let i = 0; i < 8; i++) {
          const r = await p.send({ topic, messageGroup: "order-42", body: Buffer.from(`step ${i}`) });
          ids.push(r.messageId);
        }
        const stored = (await storedMessages(api(), topic)).filter((m) => ids.includes(m.msgId));
        assert.equal(stored.length, 8);
        assert.equal(new Set(stored.map((m) => `${m.brokerName}/${m.queueId}`)).size, 1, "one queue");
        assert.deepEqual(
          stored.sort((a, b) => a.queueOffset - b.queueOffset).map((m) => m.msgId),
          ids,
          "in send order",
        );
        assert.ok(stored.every((m) => m.properties[MessageConst.SHARDING_KEY] === "order-42"));
      } finally {
        await p.shutdown();
      }
    });

    it("a delay message waits in the timer store until its delivery time", async () => {
      const topic = uniqueName("GrpcDelay");
      await createTopic(api(), topic, 1);
      const p = await producer();
      try {
        const deliverAt = Date.now() + 1500;
        const r = await p.send({ topic, deliveryTimestamp: new Date(deliverAt), body: Buffer.from("later") });
        assert.deepEqual(await storedMessages(api(), topic), [], "not in the queue before it is due");
        await waitUntil(async () => {
          await ctx.server.context.broker.moveDueMessages();
          return (await storedMessages(api(), topic)).some((m) => m.msgId === r.messageId);
        }, "the delay message delivered once due");
        const [m] = await storedMessages(api(), topic);
        assert.ok(m && Date.now() >= deliverAt - 60_000);
        assert.equal(m?.properties[MessageConst.TIMER_DELIVER_MS], String(deliverAt));
      } finally {
        await p.shutdown();
      }
    });

    it("a transactional message is delivered on commit and dropped on rollback", async () => {
      const topic = uniqueName("GrpcTx");
      await createTopic(api(), topic, 1);
      const p = await producer({ topics: [topic], checker: { check: async () => COMMIT } });
      try {
        const commit = p.beginTransaction();
        const committed = await p.send({ topic, tag: "tx", body: Buffer.from("commit me") }, commit);
        assert.deepEqual(await storedMessages(api(), topic), [], "a half message is invisible");
        await commit.commit();
        const rollback = p.beginTransaction();
        const rolledBack = await p.send({ topic, body: Buffer.from("roll me back") }, rollback);
        await rollback.rollback();
        const stored = await storedMessages(api(), topic);
        assert.deepEqual(
          stored.map((m) => m.msgId),
          [committed.messageId],
        );
        const info = await api().transactionInfo(rolledBack.transactionId, topic);
        assert.equal(info.state, "ROLLED_BACK");
      } finally {
        await p.shutdown();
      }
    });

    it("a check-back reaches another producer of the topic after the sender is gone, and commits", async () => {
      const topic = uniqueName("GrpcCheck");
      await createTopic(api(), topic, 1);
      const sender = await producer({ topics: [topic], checker: { check: async () => null } });
      const tx = sender.beginTransaction();
      const sent = await sender.send({ topic, body: Buffer.from("decided later") }, tx);
      await sender.shutdown();
      const asked: string[] = [];
      const checker = await producer({
        topics: [topic],
        checker: {
          check: async (view: { messageId: string }) => {
            asked.push(view.messageId);
            return COMMIT;
          },
        },
      });
      try {
        const broker = ctx.server.context.broker;
        await waitUntil(async () => {
          await broker.checkTransactions();
          return asked.length > 0;
        }, "the check-back reached the second producer");
        assert.deepEqual(asked, [sent.messageId]);
        await waitUntil(
          async () => (await storedMessages(api(), topic)).some((m) => m.msgId === sent.messageId),
          "the committed message delivered",
        );
      } finally {
        await checker.shutdown();
      }
    });

    it("an unknown topic is refused TOPIC_NOT_FOUND and not created", async () => {
      const topic = uniqueName("GrpcNoSuchTopic");
      const p = await producer({ maxAttempts: 1 });
      try {
        await assert.rejects(p.send({ topic, body: Buffer.from("x") }), (err: Error & { code?: number }) => {
          assert.equal(err.code, 40402, String(err));
          return true;
        });
        assert.ok(!(await api().listTopics()).includes(topic));
      } finally {
        await p.shutdown();
      }
    });
  });
}
