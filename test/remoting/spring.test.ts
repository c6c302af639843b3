/**
 * @module A Spring Boot application on rocketmq-spring-boot-starter 2.3.4 (test/interop/spring-remoting; the
 * starter's RocketMQTemplate and @RocketMQMessageListener over RocketMQ's classic remoting client 5.3.2) with
 * `rocketmq.name-server` pointing at the remoting door, on both storage modes: the N messages that
 * `RocketMQTemplate.syncSend` sends are received by the listener and read over HTTP with the same body, tags,
 * keys and user properties, every field the listener saw equal to HTTP's read.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { MessageConst } from "../../lib/core/message.js";
import { storedMessages } from "../grpc/producer-suite.js";
import { createTopic } from "../support/consumer-helpers.js";
import { assertSameAsHttp, consumedLines, sentLines } from "../support/remoting-lines.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";
import { runSpringApp, springAppUnavailable } from "../support/spring-remoting.js";

const skip = springAppUnavailable();
const COUNT = 6;

for (const mode of ["local", "aws"] as const) {
  describe(`a Spring Boot application on rocketmq-spring-boot-starter (${mode})`, { skip }, () => {
    const ctx = useTestServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });

    it("RocketMQTemplate.syncSend's messages reach the @RocketMQMessageListener and HTTP, fields equal", async () => {
      const topic = uniqueName("Spring");
      await createTopic(api(), topic, 2);
      const namesrv = `127.0.0.1:${ctx.server.server.port}`;
      const run = await runSpringApp({
        namesrv,
        topic,
        group: uniqueName("SpringListener"),
        count: COUNT,
        tag: "TagS",
      });
      const sent = sentLines(run.lines);
      const received = consumedLines(run.lines);
      assert.equal(sent.length, COUNT, "every syncSend answered");
      assert.equal(received.length, COUNT, "the listener received every message");
      assert.deepEqual(received.map((m) => m.msgId).sort(), sent.map((s) => s.msgId).sort());

      const stored = await storedMessages(api(), topic);
      assert.equal(stored.length, COUNT);
      for (const s of sent) {
        const m = stored.find((x) => x.msgId === s.msgId);
        assert.ok(m, `sent ${s.msgId} is stored`);
        const i = new TextDecoder().decode(m.body).slice("spring ".length);
        assert.equal(new TextDecoder().decode(m.body), `spring ${i}`);
        assert.equal(m.tags, "TagS");
        assert.deepEqual(m.keys, [`sk-${i}`]);
        assert.equal(m.properties.p, i, "a message header is a user property");
        assert.equal(m.properties[MessageConst.UNIQ_KEY], s.msgId);
        assert.equal(m.brokerName, s.brokerName);
        assert.equal(m.queueId, s.queueId);
        assert.equal(m.queueOffset, s.queueOffset);
        const read = received.find((r) => r.msgId === s.msgId);
        assert.ok(read);
        assertSameAsHttp(read, m);
      }
    });
  });
}
