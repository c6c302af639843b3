/**
 * @module The remoting door within the process's bound on answers its clients have not taken
 * (lib/core/untaken-answers.ts, which the gRPC door's connections share): with the process's ledger near its bound
 * (as other connections' unread answers would hold it), a pull's answer of about 80 KiB is not queued and SYSTEM_BUSY
 * goes in its place, which a small answer's room lets through; past that room too, the connection is closed; with
 * the room back, the same pull is answered. A connection's share is given back when it closes. Asserted on answers,
 * never on time.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { PROCESS_UNTAKEN_ANSWERS, UNTAKEN_ANSWERS_FULL } from "../../lib/core/untaken-answers.js";
import { RequestCode, ResponseCode } from "../../lib/remoting/index.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { RawRemoting } from "../support/remoting-raw.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

const MESSAGES = 20;
const MESSAGE_BYTES = 4 * 1024;

describe("the remoting door within the process's bound on untaken answers", () => {
  const ctx = useTestServer("local");
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });

  it("answers SYSTEM_BUSY in place of an answer past it, closes a connection past the small answers' room too", async () => {
    const topic = uniqueName("Untaken");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const pull = (c: RawRemoting) =>
      c.request({
        code: RequestCode.PULL_MESSAGE,
        extFields: {
          consumerGroup: `${topic}G`,
          topic,
          queueId: "0",
          queueOffset: "0",
          maxMsgNums: "32",
          sysFlag: String(0x4),
          commitOffset: "0",
          subscription: "*",
          subVersion: "0",
          expressionType: "TAG",
        },
      });
    const ledger = PROCESS_UNTAKEN_ANSWERS;
    // Other connections' unread answers, as their shares would count them.
    const others = ledger.share();
    const c = await RawRemoting.open(ctx.server.server.port);
    try {
      for (let i = 0; i < MESSAGES; i++) {
        const sent = await c.request({
          code: RequestCode.SEND_MESSAGE_V2,
          extFields: { a: `${topic}P`, b: topic, e: "0", f: "0", g: String(Date.now()), h: "0", i: "" },
          body: new Uint8Array(MESSAGE_BYTES).fill(i),
        });
        assert.equal(sent.code, ResponseCode.SUCCESS, sent.remark);
      }
      const served = await pull(c);
      assert.equal(served.code, ResponseCode.SUCCESS, served.remark);
      assert.equal(served.extFields.nextBeginOffset, String(MESSAGES));

      others.set(ledger.maxBytes - 32 * 1024);
      const busy = await pull(c);
      assert.equal(busy.code, ResponseCode.SYSTEM_BUSY);
      assert.equal(busy.remark, UNTAKEN_ANSWERS_FULL);
      assert.equal(busy.body, undefined, "no message went with it");

      others.set(ledger.maxBytes * 2);
      let [closed, answered] = [false, false];
      void c.closed.then(() => {
        closed = true;
      });
      void pull(c).then(() => {
        answered = true;
      });
      await waitUntil(() => closed || answered, "the pull's connection closed, or the pull answered");
      assert.equal(answered, false, "no answer at all: the connection is closed");

      others.release();
      const again = await RawRemoting.open(ctx.server.server.port);
      try {
        const served = await pull(again);
        assert.equal(served.code, ResponseCode.SUCCESS, served.remark);
        assert.equal(served.extFields.nextBeginOffset, String(MESSAGES));
      } finally {
        again.close();
      }
    } finally {
      others.release();
      c.close();
    }
    await waitUntil(() => ledger.held === 0, "every connection's share is given back");
  });
});
