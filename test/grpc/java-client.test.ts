/**
 * @module RocketMQ's Java client (rocketmq-client-java 5.x, unchanged; test/interop/java) against the gRPC
 * endpoint on the embedded store: its Producer sends with tag, keys and properties, stored as Nimbus messages;
 * its SimpleConsumer receives the tag it subscribed to from messages sent over HTTP, acks them, and gets back
 * the one it left unacked; its PushConsumer consumes what was sent. A new POP group starts at the end of the
 * queues on its first receive, so each consumer test starts its group before sending.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { createTopic } from "../support/consumer-helpers.js";
import { useGrpcServer } from "../support/grpc-fixture.js";
import { javaClientUnavailable, runJavaClient } from "../support/java-interop.js";
import { startPopGroup } from "../support/pop-group.js";
import { uniqueName } from "../support/server-fixture.js";
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

describe("RocketMQ's Java client over gRPC", { skip }, () => {
  // A short longest wait: the Java PushConsumer's close waits for its receives in flight.
  const ctx = useGrpcServer("local", { popMaxLongPollMs: 2000 });
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
});
