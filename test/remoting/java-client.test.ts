/**
 * @module RocketMQ's classic remoting client (rocketmq-client 4.9.8, unchanged; test/interop/remoting-java) against
 * the remoting door on `nimbus dev`'s HTTP port, on both storage modes: its DefaultMQProducer's sync, async, oneway
 * and batch sends are stored with their ids, tags, keys, properties and queue offsets (read back over HTTP); its
 * DefaultMQPushConsumer (clustering, on both brokers: the second broker's address is a port of its own) receives
 * them and what HTTP sent, every field equal to what HTTP reads; its DefaultLitePullConsumer assigned every queue
 * reads them too.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { MessageConst } from "../../lib/core/message.js";
import type { PulledMessage } from "../../lib/protocol/index.js";
import { storedMessages } from "../grpc/producer-suite.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { remotingClientUnavailable, runRemotingClient } from "../support/remoting-java.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

const skip = remotingClientUnavailable();

interface Sent {
  msgId: string;
  offsetMsgId: string;
  brokerName: string;
  queueId: number;
  queueOffset: number;
}

const sentLines = (lines: string[]): Sent[] =>
  lines
    .filter((l) => l.startsWith("sent "))
    .map((l) => {
      const [, msgId = "", offsetMsgId = "", brokerName = "", queueId = "", queueOffset = ""] = l.split(" ");
      return { msgId, offsetMsgId, brokerName, queueId: Number(queueId), queueOffset: Number(queueOffset) };
    });

interface Consumed {
  msgId: string;
  topic: string;
  tags: string | null;
  keys: string | null;
  body: string;
  brokerName: string;
  queueId: number;
  queueOffset: number;
  bornTimestamp: number;
  storeTimestamp: number;
  reconsumeTimes: number;
  flag: number;
  properties: Record<string, string>;
}

const consumedLines = (lines: string[]): Consumed[] =>
  lines.filter((l) => l.startsWith("msg ")).map((l) => JSON.parse(l.slice(4)) as Consumed);

/** A message as the 4.x client read it equals the message as HTTP reads it, field by field. */
function assertSame(read: Consumed, stored: PulledMessage): void {
  assert.equal(read.msgId, stored.msgId);
  assert.equal(read.topic, stored.topic);
  assert.equal(read.tags ?? "", stored.tags);
  assert.equal(read.keys ?? "", stored.keys.join(" "));
  assert.equal(read.body, new TextDecoder().decode(stored.body));
  assert.equal(read.brokerName, stored.brokerName);
  assert.equal(read.queueId, stored.queueId);
  assert.equal(read.queueOffset, stored.queueOffset);
  assert.equal(read.bornTimestamp, stored.bornTimestamp);
  assert.equal(read.storeTimestamp, stored.storeTimestamp);
  assert.equal(read.reconsumeTimes, stored.reconsumeTimes);
  assert.equal(read.flag, stored.flag);
  // The client adds its own bookkeeping (MIN_OFFSET, MAX_OFFSET, CONSUME_START_TIME); every stored one is there.
  for (const [k, v] of Object.entries(stored.properties)) assert.equal(read.properties[k], v, `property ${k}`);
}

for (const mode of ["local", "aws"] as const) {
  describe(`RocketMQ 4.9.8's remoting client (${mode})`, { skip }, () => {
    const ctx = useTestServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const namesrv = () => `127.0.0.1:${ctx.server.server.port}`;

    it("sync, async, oneway and batch sends are stored as sent; a push consumer receives them and HTTP's, fields equal", async () => {
      const topic = uniqueName("Remoting");
      await createTopic(api(), topic, 2);
      const sent: Sent[] = [];
      for (const how of ["sync", "async", "batch"]) {
        const run = await runRemotingClient(["produce", namesrv(), topic, how, "3", "TagR"]);
        sent.push(...sentLines(run.lines));
      }
      const oneway = await runRemotingClient(["produce", namesrv(), topic, "oneway", "2", "TagR"]);
      assert.deepEqual(oneway.lines, ["oneway 2"]);
      assert.equal(sent.length, 9);
      const viaHttp = await api().send({
        topic,
        messages: [{ body: new TextEncoder().encode("over http"), tags: "TagH", keys: ["hk"], properties: { p: "h" } }],
      });

      const stored = await storedMessages(api(), topic);
      assert.equal(stored.length, 12, "9 acknowledged sends, 2 oneway, 1 over HTTP");
      for (const s of sent) {
        const m = stored.find((x) => x.msgId === s.msgId);
        assert.ok(m, `sent ${s.msgId} is stored`);
        assert.equal(m.tags, "TagR");
        assert.equal(m.brokerName, s.brokerName);
        assert.equal(m.queueId, s.queueId);
        assert.equal(m.properties[MessageConst.UNIQ_KEY], s.msgId);
        assert.match(new TextDecoder().decode(m.body), /^remoting \d$/);
        const i = new TextDecoder().decode(m.body).slice("remoting ".length);
        assert.deepEqual(m.keys, [`k-${i}`]);
        assert.equal(m.properties.p, i);
        assert.match(s.offsetMsgId, /^[0-9A-F]{32}$/);
      }
      for (const s of sent.filter((_, i) => i < 6)) {
        assert.equal(stored.find((x) => x.msgId === s.msgId)?.queueOffset, s.queueOffset, "sync and async offsets");
      }

      const group = uniqueName("RemotingPush");
      const push = await runRemotingClient(["push", namesrv(), group, topic, "12"]);
      const consumed = consumedLines(push.lines);
      assert.equal(consumed.length, 12);
      for (const m of stored) {
        const read = consumed.find((c) => c.msgId === m.msgId);
        assert.ok(read, `${m.msgId} was consumed`);
        assertSame(read, m);
      }
      assert.ok(consumed.some((c) => c.msgId === viaHttp.msgIds[0]));
      // Its offsets were committed through the door (oneway requests at shutdown: the door may still be writing
      // them when the JVM has exited).
      await waitUntil(
        async () => (await api().queryOffsets(group, topic)).reduce((n, o) => n + o.offset, 0) > 0,
        "the push consumer committed offsets",
      );
    });

    it("a DefaultLitePullConsumer assigned every queue reads what was sent", async () => {
      const topic = uniqueName("RemotingLite");
      await createTopic(api(), topic, 2);
      const run = await runRemotingClient(["produce", namesrv(), topic, "sync", "4", "TagL"]);
      const sent = sentLines(run.lines);
      const lite = await runRemotingClient(["lite-assign", namesrv(), uniqueName("RemotingLite"), topic, "4"]);
      const read = consumedLines(lite.lines);
      assert.deepEqual(read.map((m) => m.msgId).sort(), sent.map((s) => s.msgId).sort());
      const stored = await storedMessages(api(), topic);
      for (const m of stored) assertSame(read.find((r) => r.msgId === m.msgId) as Consumed, m);
    });
  });
}
