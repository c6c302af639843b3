/**
 * @module One stored message, three doors, on both storage modes: messages that RocketMQ's remoting client
 * (rocketmq-client 4.9.8) sends read the same over gRPC (the official Node.js SimpleConsumer, and a raw
 * ReceiveMessage for the store time its MessageView lacks) and over HTTP (the SDK); messages sent over gRPC (the
 * official Node.js Producer) and over HTTP read the same through the remoting client's push consumer. Every field
 * is compared: body, tags, keys, user properties, message id, born and store times, reconsume times.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Producer, SimpleConsumer } from "rocketmq-client-nodejs";
import { NimbusApi } from "../../lib/client/index.js";
import { storedMessages } from "../grpc/producer-suite.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { quietLogger, useGrpcServer } from "../support/grpc-fixture.js";
import { millisOf, receiveRaw, type WireMessage } from "../support/grpc-receive-raw.js";
import { startPopGroup } from "../support/pop-group.js";
import { remotingClientUnavailable, runRemotingClient } from "../support/remoting-java.js";
import { assertSameAsHttp, consumedLines, sentLines } from "../support/remoting-lines.js";
import { uniqueName } from "../support/server-fixture.js";

const skip = remotingClientUnavailable();

type View = Awaited<ReturnType<SimpleConsumer["receive"]>>[number];

for (const mode of ["local", "aws"] as const) {
  describe(`a message reads the same through the remoting, gRPC and HTTP doors (${mode})`, { skip }, () => {
    const ctx = useGrpcServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const namesrv = () => `127.0.0.1:${ctx.server.port}`;

    it("sent over remoting (4.9.8), read over gRPC and HTTP: every field equal", async () => {
      const topic = uniqueName("RemotingToGrpc");
      const group = uniqueName("gRemotingToGrpc");
      const rawGroup = uniqueName("gRemotingToGrpcRaw");
      await createTopic(api(), topic, 2);
      // A POP group gets what is stored from its start on: started before the sends (docs/pop.md).
      await startPopGroup(ctx.server.context.broker, group, topic);
      await startPopGroup(ctx.server.context.broker, rawGroup, topic);
      const sent = sentLines((await runRemotingClient(["produce", namesrv(), topic, "sync", "3", "TagX"])).lines);
      assert.equal(sent.length, 3);
      const stored = await storedMessages(api(), topic);
      assert.equal(stored.length, 3);

      const consumer = new SimpleConsumer({
        endpoints: ctx.endpoint,
        namespace: "",
        consumerGroup: group,
        subscriptions: new Map([[topic, "*"]]),
        awaitDuration: 1000,
        logger: quietLogger(),
      });
      await consumer.startup();
      const views: View[] = [];
      try {
        await waitUntil(async () => {
          views.push(...(await consumer.receive(16, 20_000)));
          return views.length >= 3;
        }, "3 messages received over gRPC");
        for (const v of views) await consumer.ack(v);
      } finally {
        await consumer.shutdown();
      }
      const wire: WireMessage[] = [];
      await waitUntil(async () => {
        wire.push(...(await receiveRaw(ctx.endpoint, rawGroup, topic)));
        return wire.length >= 3;
      }, "3 messages received by a raw ReceiveMessage");

      for (const s of sent) {
        const m = stored.find((x) => x.msgId === s.msgId);
        assert.ok(m, `${s.msgId} read over HTTP`);
        const i = new TextDecoder().decode(m.body).slice("remoting ".length);
        assert.equal(m.tags, "TagX");
        assert.deepEqual(m.keys, [`k-${i}`]);
        assert.equal(m.properties.p, i);
        assert.equal(m.reconsumeTimes, 0);

        const v = views.find((x) => x.messageId === s.msgId);
        assert.ok(v, `${s.msgId} read by the official gRPC client`);
        assert.equal(v.topic, topic);
        assert.equal(v.body.toString(), new TextDecoder().decode(m.body));
        assert.equal(v.tag, m.tags);
        assert.deepEqual(v.keys, m.keys);
        assert.deepEqual(Object.fromEntries(v.properties), { p: i }, "the user properties, and no system one");
        assert.equal(v.bornTimestamp?.getTime(), m.bornTimestamp);
        assert.equal(v.deliveryAttempt, m.reconsumeTimes + 1, "first delivery");

        const w = wire.find((x) => x.systemProperties.messageId === s.msgId);
        assert.ok(w, `${s.msgId} read by a raw ReceiveMessage`);
        assert.equal(millisOf(w.systemProperties.storeTimestamp), m.storeTimestamp);
        assert.equal(millisOf(w.systemProperties.bornTimestamp), m.bornTimestamp);
        assert.equal(w.systemProperties.queueId, m.queueId);
        assert.equal(w.systemProperties.queueOffset, m.queueOffset);
        assert.deepEqual(w.userProperties, { p: i });
      }
    });

    it("sent over gRPC and HTTP, read over remoting (4.9.8): every field equal", async () => {
      const topic = uniqueName("GrpcToRemoting");
      await createTopic(api(), topic, 2);
      const producer = new Producer({ endpoints: ctx.endpoint, namespace: "", logger: quietLogger() });
      await producer.startup();
      let viaGrpc: string;
      try {
        const receipt = await producer.send({
          topic,
          tag: "TagG",
          keys: ["gk-1", "gk-2"],
          properties: new Map([["p", "g"]]),
          body: Buffer.from("over grpc"),
        });
        viaGrpc = receipt.messageId;
      } finally {
        await producer.shutdown();
      }
      const viaHttp = await api().send({
        topic,
        messages: [{ body: new TextEncoder().encode("over http"), tags: "TagH", keys: ["hk"], properties: { p: "h" } }],
      });
      const stored = await storedMessages(api(), topic);
      assert.equal(stored.length, 2);

      const push = await runRemotingClient(["push", namesrv(), uniqueName("RemotingFromGrpc"), topic, "2"]);
      const read = consumedLines(push.lines);
      assert.deepEqual(read.map((r) => r.msgId).sort(), [viaGrpc, viaHttp.msgIds[0]].sort());
      for (const m of stored) {
        const r = read.find((x) => x.msgId === m.msgId);
        assert.ok(r, `${m.msgId} read over remoting`);
        assertSameAsHttp(r, m);
        assert.equal(r.reconsumeTimes, 0);
      }
      const g = read.find((r) => r.msgId === viaGrpc);
      assert.equal(g?.body, "over grpc");
      assert.equal(g?.tags, "TagG");
      assert.equal(g?.keys, "gk-1 gk-2");
      assert.equal(g?.properties.p, "g");
      const h = read.find((r) => r.msgId === viaHttp.msgIds[0]);
      assert.equal(h?.body, "over http");
      assert.equal(h?.tags, "TagH");
      assert.equal(h?.keys, "hk");
      assert.equal(h?.properties.p, "h");
    });
  });
}
