/**
 * @module What the 5.x line's classic remoting client (rocketmq-client 5.3.3) sends beyond 4.x, on both storage
 * modes: its opt-in heartbeat v2 (`com.rocketmq.heartbeat.v2`) meets a door that does not claim it
 * (no `isSupportHeartBeatV2` in the HEART_BEAT answer), so the client keeps sending full heartbeats and its push
 * consumer gets every message; QUERY_ASSIGNMENT and SET_MESSAGE_REQUEST_MODE (a consumer with
 * `setClientRebalance(false)`) and the POP codes are refused REQUEST_CODE_NOT_SUPPORTED, nothing written.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { RequestCode, ResponseCode } from "../../lib/remoting/codes.js";
import { storedMessages } from "../grpc/producer-suite.js";
import { createTopic } from "../support/consumer-helpers.js";
import { REMOTING_CLIENTS } from "../support/remoting-java.js";
import { assertSameAsHttp, consumedLines, sentLines } from "../support/remoting-lines.js";
import { RawRemoting } from "../support/remoting-raw.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

const client5 = REMOTING_CLIENTS.find((c) => c.version.startsWith("5."));

/** 5.x's QUERY_ASSIGNMENT, SET_MESSAGE_REQUEST_MODE, POP_MESSAGE, ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME. */
const REFUSED_5X_CODES = [400, 401, 200050, 200051, 200053];

for (const mode of ["local", "aws"] as const) {
  describe(`rocketmq-client ${client5?.version}'s 5.x requests (${mode})`, () => {
    const ctx = useTestServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const namesrv = () => `127.0.0.1:${ctx.server.server.port}`;

    it("a push consumer with heartbeat v2 on gets every message; the HEART_BEAT answer does not claim v2", {
      skip: client5 === undefined ? "no 5.x client" : client5.unavailable(),
    }, async () => {
      const run = client5?.run;
      assert.ok(run);
      const topic = uniqueName("Heartbeat2");
      await createTopic(api(), topic, 2);
      const sent = sentLines((await run(["produce", namesrv(), topic, "sync", "4", "TagV"])).lines);
      const push = await run(["push-heartbeat-v2", namesrv(), uniqueName("Heartbeat2Group"), topic, "4"]);
      const read = consumedLines(push.lines);
      assert.deepEqual(read.map((r) => r.msgId).sort(), sent.map((s) => s.msgId).sort());
      for (const m of await storedMessages(api(), topic)) {
        const r = read.find((x) => x.msgId === m.msgId);
        assert.ok(r);
        assertSameAsHttp(r, m);
      }

      const c = await RawRemoting.open(ctx.server.server.port);
      try {
        const body = Buffer.from(
          JSON.stringify({
            clientID: "raw-hb2",
            producerDataSet: [],
            consumerDataSet: [],
            heartbeatFingerprint: 7,
          }),
        );
        const answer = await c.request({ code: RequestCode.HEART_BEAT, body });
        assert.equal(answer.code, ResponseCode.SUCCESS);
        assert.equal(answer.extFields.isSupportHeartBeatV2, undefined, "the client then sends full heartbeats");
      } finally {
        c.close();
      }
    });

    it("QUERY_ASSIGNMENT, SET_MESSAGE_REQUEST_MODE and the POP codes are refused, nothing written", async () => {
      const topic = uniqueName("Refused5");
      await createTopic(api(), topic, 2);
      const c = await RawRemoting.open(ctx.server.server.port);
      try {
        for (const code of REFUSED_5X_CODES) {
          const extFields = { topic, consumerGroup: "g", queueId: "0", maxMsgNums: "1" };
          const body = Buffer.from(JSON.stringify({ topic, consumerGroup: "g", clientId: "c", mode: "POP" }));
          const answer = await c.request({ code, extFields, body });
          assert.equal(answer.code, ResponseCode.REQUEST_CODE_NOT_SUPPORTED, `code ${code}`);
          assert.match(answer.remark ?? "", new RegExp(`request code ${code}`));
        }
      } finally {
        c.close();
      }
      assert.deepEqual(await api().queryOffsets("g", topic), [], "no offset, no group state written");
      assert.deepEqual(await storedMessages(api(), topic), []);
    });
  });
}
