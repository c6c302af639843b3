/**
 * @module RocketMQ's Java client (rocketmq-client-java 5.x, unchanged; test/interop/java) against the gRPC
 * endpoint on both storage modes (the embedded store; the AWS adapters on dynalite and s3rver): its Producer
 * sends with tag, keys and properties, stored as Nimbus messages; its SimpleConsumer receives the tag it
 * subscribed to from messages sent over HTTP, acks them, and gets back the one it left unacked; a changed
 * invisible duration brings a message back and, never acked, it ends in the group's dead letter queue after
 * the max attempts; its PushConsumer consumes what was sent. FIFO, delay and transactional sends with the
 * check-back: java-producer-suite.ts. The documented first flow (start a SimpleConsumer, send, receive) gets every
 * message on two brokers; tests that send before their consumer starts start its group first.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { useGrpcServer } from "../support/grpc-fixture.js";
import { javaClientUnavailable, runJavaClient, startJavaClient } from "../support/java-interop.js";
import { startPopGroup } from "../support/pop-group.js";
import { uniqueName } from "../support/server-fixture.js";
import { javaProducerCases } from "./java-producer-suite.js";
import { storedMessages } from "./producer-suite.js";

const skip = javaClientUnavailable();

/** `received <id> <tag> <attempt> <body>` lines of a Java consumer run. */
const receivedLines = (lines: string[]) =>
  lines
    .filter((l) => l.startsWith("received "))
    .map((l) => {
      const [, id = "", tag = "", attempt = "", ...body] = l.split(" ");
      return { id, tag, attempt: Number(attempt), body: body.join(" ") };
    });

for (const mode of ["local", "aws"] as const) {
  describe(`RocketMQ's Java client over gRPC (${mode})`, { skip }, () => {
    // A short longest wait: the Java PushConsumer's close waits for its receives in flight.
    // Two deliveries before the dead letter queue, as consumer-suite.ts's server.
    const ctx = useGrpcServer(mode, { popMaxLongPollMs: 2000, popMaxDeliveryAttempts: 2 });
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const popReceive = (group: string, topic: string, expression: string, longPollMs: number) =>
      ctx.server.context.broker.pop.receive({
        group,
        topic,
        filter: { type: "TAG", expression },
        maxMessages: 16,
        invisibleMs: 1000,
        longPollMs,
      });
    const sendOverHttp = async (topic: string, tags: string, i: number) =>
      (
        await api().send({
          topic,
          messages: [{ body: new TextEncoder().encode(`http ${i}`), tags, keys: [`hk-${i}`] }],
        })
      ).msgIds[0] ?? "";

    it("its Producer's messages are stored with their ids, tag, keys and properties", async () => {
      const topic = uniqueName("JavaProduce");
      await createTopic(api(), topic, 2);
      const run = await runJavaClient(["produce", ctx.endpoint, topic, "3", "TagJ"]);
      const ids = run.lines.filter((l) => l.startsWith("sent ")).map((l) => l.slice("sent ".length));
      assert.equal(ids.length, 3, run.stderr);
      const stored = (await storedMessages(api(), topic)).filter((m) => ids.includes(m.msgId));
      assert.equal(stored.length, 3);
      for (const m of stored) {
        const n = Number(m.properties.n);
        assert.equal(m.tags, "TagJ");
        assert.deepEqual(m.keys, [`java-key-${n}`]);
        assert.equal(new TextDecoder().decode(m.body), `java ${n}`);
      }
    });

    it("the documented first flow: start a SimpleConsumer, send 10 then 100, receive every one (two brokers)", async () => {
      for (const count of [10, 100]) {
        const topic = uniqueName("JavaFirstFlow");
        await createTopic(api(), topic, 2);
        const run = await runJavaClient(["first-flow", ctx.endpoint, uniqueName("gJavaFirst"), topic, String(count)]);
        const sent = run.lines.filter((l) => l.startsWith("sent ")).map((l) => l.slice("sent ".length));
        assert.equal(sent.length, count);
        assert.deepEqual(new Set(receivedLines(run.lines).map((r) => r.id)), new Set(sent), `all ${count} received`);
        const status = await api().topicStatus(topic);
        for (const b of ["broker-a", "broker-b"])
          assert.ok(
            status.some((q) => q.brokerName === b && q.maxOffset > 0),
            `messages on ${b}`,
          );
      }
    });

    it("its SimpleConsumer receives its tag, acks, and gets back the message it left unacked", async () => {
      const topic = uniqueName("JavaSimple");
      const group = uniqueName("gJavaSimple");
      await createTopic(api(), topic, 2);
      await startPopGroup(ctx.server.context.broker, group, topic);
      const tagA: string[] = [];
      for (let i = 0; i < 6; i++) {
        const id = await sendOverHttp(topic, i % 2 === 0 ? "TagA" : "TagB", i);
        if (i % 2 === 0) tagA.push(id);
      }
      const run = await runJavaClient(["consume", ctx.endpoint, group, topic, "3", "TagA"]);
      const received = receivedLines(run.lines);
      assert.deepEqual(new Set(received.map((r) => r.id)), new Set(tagA), "the TagA messages, by their HTTP ids");
      for (const r of received) {
        assert.equal(r.tag, "TagA");
        assert.equal(r.body, `http ${tagA.indexOf(r.id) * 2}`);
      }
      const left = received[0]?.id;
      assert.deepEqual(
        received.filter((r) => r.id === left).map((r) => r.attempt),
        [1, 2],
        "left unacked, it came back as its second delivery",
      );
      assert.equal(received.filter((r) => r.id !== left).length, 2, "each acked message delivered once");
      // Every message's 1 s invisible time has ended (the unacked one came back): acked, none comes again.
      const again = await popReceive(group, topic, "TagA", 2000);
      assert.deepEqual(
        again.messages.map((m) => m.msgId),
        [],
      );
    });

    it("its PushConsumer consumes what was sent", async () => {
      const topic = uniqueName("JavaPush");
      const group = uniqueName("gJavaPush");
      await createTopic(api(), topic, 2);
      await startPopGroup(ctx.server.context.broker, group, topic);
      const sent: string[] = [];
      for (let i = 0; i < 4; i++) sent.push(await sendOverHttp(topic, "TagP", i));
      const run = await runJavaClient(["push", ctx.endpoint, group, topic, "4"]);
      const consumed = run.lines.filter((l) => l.startsWith("consumed ")).map((l) => l.split(" ")[1]);
      assert.deepEqual(new Set(consumed), new Set(sent));
    });

    it("its SimpleConsumer's changed invisible duration brings a message back; unacked it ends in %DLQ%", async () => {
      const topic = uniqueName("JavaRedeliver");
      const group = uniqueName("gJavaRedeliver");
      await createTopic(api(), topic, 1);
      await startPopGroup(ctx.server.context.broker, group, topic);
      const sent = await sendOverHttp(topic, "TagD", 0);
      const run = startJavaClient(["dead-letter", ctx.endpoint, group, topic]);
      try {
        // Received with a 60 s invisible time: back long before that only through the changed 1 s.
        await waitUntil(() => receivedLines(run.lines).length >= 2, "the message received twice", 60_000);
        assert.ok(run.lines.includes(`changed ${sent} 1`), run.lines.join("\n"));
        assert.deepEqual(
          receivedLines(run.lines).map((r) => [r.id, r.attempt]),
          [
            [sent, 1],
            [sent, 2],
          ],
          "redelivered as its second attempt after the changed invisible duration",
        );
        // Never acked, its second delivery changed to 1 s too: once that ends, the consumer's next receive
        // finds it past the group's 2 attempts and moves it to %DLQ%<group>.
        await waitUntil(
          async () => (await storedMessages(api(), `%DLQ%${group}`).catch(() => [])).length === 1,
          "the message in the dead letter queue after 2 attempts",
          60_000,
          200,
        );
        const [dead] = await storedMessages(api(), `%DLQ%${group}`);
        assert.equal(new TextDecoder().decode(dead?.body), "http 0");
      } finally {
        run.stop();
        await run.done;
      }
      assert.equal(receivedLines(run.lines).length, 2, "not delivered a third time");
    });
  });
  javaProducerCases(mode, skip);
}
