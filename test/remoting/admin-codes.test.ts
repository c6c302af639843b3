/**
 * @module mqadmin's request codes spoken frame by frame (test/support/remoting-raw.ts), on both storage modes:
 * each broker address answers its own broker's queues (GET_TOPIC_STATS_INFO, GET_CONSUME_STATS) in fastjson's
 * text for maps keyed by a queue; QUERY_TOPIC_CONSUME_BY_WHO names the groups; refused input gets an error answer
 * and writes nothing (an unknown topic, a group with no consumer online, a client not connected here, a reset
 * without its group or with a timestamp that is not a time).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { RequestCode, ResponseCode } from "../../lib/remoting/index.js";
import { createTopic } from "../support/consumer-helpers.js";
import { json, RawRemoting } from "../support/remoting-raw.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

const text = (body: Uint8Array | undefined) => (body === undefined ? "" : Buffer.from(body).toString("utf8"));

for (const mode of ["local", "aws"] as const) {
  describe(`mqadmin's codes on the remoting door (${mode})`, () => {
    const ctx = useTestServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });

    it("each broker's address answers its own queues; consumers of a topic; refusals write nothing", async () => {
      const topic = uniqueName("RawAdmin");
      const group = uniqueName("RawAdminG");
      await createTopic(api(), topic, 2);
      await api().send({ topic, messages: [{ body: new TextEncoder().encode("x") }] });
      await api().commitOffsets(group, topic, [{ brokerName: "broker-b", queueId: 1, offset: 0 }]);
      const a = await RawRemoting.open(ctx.server.server.port);
      const b = await RawRemoting.open(ctx.server.server.remoting?.portOf("broker-b") ?? 0);
      try {
        const stats = await b.request({ code: RequestCode.GET_TOPIC_STATS_INFO, extFields: { topic } });
        assert.equal(stats.code, ResponseCode.SUCCESS);
        const statsText = text(stats.body);
        assert.match(statsText, /^\{"offsetTable":\{\{"brokerName":"broker-b","queueId":0,"topic":"/);
        assert.equal(statsText.match(/"brokerName":"broker-b"/g)?.length, 2);
        assert.doesNotMatch(statsText, /broker-a/);

        const consume = await a.request({ code: RequestCode.GET_CONSUME_STATS, extFields: { consumerGroup: group } });
        assert.equal(consume.code, ResponseCode.SUCCESS);
        assert.doesNotMatch(text(consume.body), /broker-b/, "broker-a's address answers broker-a's queues");
        const consumeB = await b.request({ code: RequestCode.GET_CONSUME_STATS, extFields: { consumerGroup: group } });
        assert.match(text(consumeB.body), /"queueId":1,"topic":"[^"]+"\}:\{"brokerOffset":\d+,"consumerOffset":0,/);

        const who = await a.request({ code: RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, extFields: { topic } });
        assert.deepEqual(json(who), { groupList: [group] });

        const missing = await a.request({ code: RequestCode.GET_TOPIC_STATS_INFO, extFields: { topic: "NoSuchT" } });
        assert.equal(missing.code, ResponseCode.TOPIC_NOT_EXIST);
        const offline = await a.request({
          code: RequestCode.GET_CONSUMER_CONNECTION_LIST,
          extFields: { consumerGroup: group },
        });
        assert.equal(offline.code, ResponseCode.CONSUMER_NOT_ONLINE);
        const notHere = await a.request({
          code: RequestCode.GET_CONSUMER_RUNNING_INFO,
          extFields: { consumerGroup: group, clientId: "10.0.0.1@nobody", jstackEnable: "false" },
        });
        assert.equal(notHere.code, ResponseCode.SYSTEM_ERROR);
        assert.match(notHere.remark ?? "", /not online/);

        const before = await api().queryOffsets(group, topic);
        for (const extFields of [
          { topic, timestamp: "0", isForce: "true" },
          { topic, group, timestamp: "-5", isForce: "true" },
          { topic, group, timestamp: "soon", isForce: "true" },
        ]) {
          const refused = await a.request({ code: RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, extFields });
          assert.equal(refused.code, ResponseCode.MESSAGE_ILLEGAL, JSON.stringify(extFields));
        }
        assert.deepEqual(await api().queryOffsets(group, topic), before, "a refused reset writes nothing");
      } finally {
        a.close();
        b.close();
      }
    });
  });
}
