/**
 * @module RocketMQ's classic remoting client (rocketmq-client 4.9.8, unchanged; test/interop/remoting-java; and the
 * same scenarios built against the 5.x line's classic API, rocketmq-client 5.3.3: test/interop/remoting-java5) against
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
import { storedMessages } from "../grpc/producer-suite.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { REMOTING_CLIENTS } from "../support/remoting-java.js";
import {
  assertSameAsHttp as assertSame,
  type Consumed,
  consumedLines,
  type Sent,
  sentLines,
} from "../support/remoting-lines.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

/** Each client version on each storage mode. */
const RUNS = REMOTING_CLIENTS.flatMap((client) => (["local", "aws"] as const).map((mode) => ({ client, mode })));

for (const { client, mode } of RUNS) {
  const runRemotingClient = client.run;
  describe(`RocketMQ ${client.version}'s remoting client (${mode})`, { skip: client.unavailable() }, () => {
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
