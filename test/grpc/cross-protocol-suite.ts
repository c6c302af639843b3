/**
 * @module One stored message, two doors: a message RocketMQ's official Node.js client sends over gRPC is
 * consumed by the Nimbus SDK's PushConsumer over HTTP with its message id, tag, keys and user properties
 * intact (and the reverse, HTTP to gRPC, in consumer-suite.ts once POP serves receives).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Producer } from "rocketmq-client-nodejs";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { createTopic, fastTimings, Received, waitUntil } from "../support/consumer-helpers.js";
import { quietLogger, useGrpcServer } from "../support/grpc-fixture.js";
import { type ServerMode, uniqueName } from "../support/server-fixture.js";

export function crossProtocolCases(mode: ServerMode): void {
  describe(`gRPC and HTTP share messages (${mode})`, () => {
    const ctx = useGrpcServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });

    it("sent by the official client over gRPC, consumed by the SDK's PushConsumer with every field", async () => {
      const topic = uniqueName("GrpcToHttp");
      const group = uniqueName("gGrpcToHttp");
      await createTopic(api(), topic, 2);
      const received = new Received();
      const consumer = new PushConsumer({
        consumerGroup: group,
        endpoints: ctx.server.url,
        consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
        ...fastTimings(),
      });
      consumer.subscribe(topic, "TagA");
      consumer.registerMessageListener(received.listener("sdk"));
      const producer = new Producer({ endpoints: ctx.endpoint, namespace: "", logger: quietLogger() });
      await producer.startup();
      try {
        await consumer.start();
        const sent = [];
        for (let i = 0; i < 4; i++) {
          sent.push(
            await producer.send({
              topic,
              tag: i % 2 === 0 ? "TagA" : "TagB",
              keys: [`key-${i}`],
              properties: new Map([["n", String(i)]]),
              body: Buffer.from(`grpc ${i}`),
            }),
          );
        }
        const tagA = [sent[0]?.messageId ?? "", sent[2]?.messageId ?? ""];
        await waitUntil(() => received.has(tagA), "the TagA messages consumed over HTTP");
        const got = received.byConsumer.get("sdk") ?? [];
        assert.deepEqual(new Set(got.map((m) => m.msgId)), new Set(tagA), "the tag filter applies to gRPC messages");
        for (const m of got) {
          const i = Number(m.properties.n);
          assert.equal(m.tags, "TagA");
          assert.deepEqual(m.keys, [`key-${i}`]);
          assert.equal(m.bodyText, `grpc ${i}`);
        }
      } finally {
        await consumer.shutdown();
        await producer.shutdown();
      }
    });
  });
}
