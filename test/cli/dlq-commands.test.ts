/**
 * @module The built `nimbus resendDlqMsg` against a local broker: a message sent back straight to its group's
 * dead-letter queue is resent to its original topic with its msgId, body, tags, keys and user properties
 * (not the retry bookkeeping); a missing offset fails with QUERY_NOT_FOUND and sends nothing.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { MessageConst } from "../../lib/core/message.js";
import { dlqTopic } from "../../lib/core/names.js";
import { ensureBuilt, nimbus, startTestBroker, type TestBroker } from "../support/cli-runner.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

describe("nimbus resendDlqMsg (the built CLI)", () => {
  let broker: TestBroker;
  let api: NimbusApi;
  const run = (...args: string[]) => nimbus(args, { url: broker.url });
  const topic = "DlqOrders";
  const group = "dlq-group";

  before(async () => {
    await ensureBuilt();
    broker = await startTestBroker();
    api = new NimbusApi({ endpoints: broker.url, timeoutMs: TEST_TIMEOUT_MS });
    await api.updateTopic(topic, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
    await api.send({
      topic,
      brokerName: "broker-a",
      queueId: 0,
      messages: [{ body: new TextEncoder().encode("dead"), tags: "TagD", keys: ["k9"], properties: { region: "eu" } }],
    });
    // Delay level -1: straight to the dead-letter queue (what maxReconsumeTimes does after the last retry).
    const back = await api.sendBack({
      consumerGroup: group,
      topic,
      brokerName: "broker-a",
      queueId: 0,
      queueOffset: 0,
      delayLevel: -1,
    });
    assert.equal(back.result, "DLQ");
  });
  after(async () => {
    await broker.close();
  });

  it("queryMsgByOffset reads the dead letter, with its original topic", async () => {
    const r = await run("queryMsgByOffset", "-t", dlqTopic(group), "-b", "broker-a", "-i", "0", "-o", "0", "--json");
    assert.equal(r.code, 0, r.stderr);
    const m = JSON.parse(r.stdout) as { bodyText: string; properties: Record<string, string> };
    assert.equal(m.bodyText, "dead");
    assert.equal(m.properties[MessageConst.RETRY_TOPIC], topic);
  });

  it("resends the dead letter to its original topic", async () => {
    const r = await run("resendDlqMsg", "-g", group, "-b", "broker-a", "-o", "0", "--json");
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { msgId: string; to: { topic: string; queueOffset: number } };
    assert.equal(out.to.topic, topic);
    assert.equal(out.to.queueOffset, 1);
    const page = await api.pull({ consumerGroup: "check", topic, brokerName: "broker-a", queueId: 0, queueOffset: 0 });
    assert.equal(page.messages.length, 2);
    const [first, resent] = page.messages;
    assert.ok(first && resent);
    assert.equal(resent.msgId, first.msgId, "the msgId stays");
    assert.equal(out.msgId, first.msgId);
    assert.equal(new TextDecoder().decode(resent.body), "dead");
    assert.equal(resent.tags, "TagD");
    assert.deepEqual(resent.keys, ["k9"]);
    assert.equal(resent.properties.region, "eu");
    assert.equal(resent.reconsumeTimes, 0);
    for (const p of [MessageConst.RETRY_TOPIC, MessageConst.ORIGIN_MESSAGE_ID]) {
      assert.equal(resent.properties[p], undefined, `${p} is left behind`);
    }
    const dead = await api.pull({
      consumerGroup: "check",
      topic: dlqTopic(group),
      brokerName: "broker-a",
      queueId: 0,
      queueOffset: 0,
    });
    assert.equal(dead.messages.length, 1, "the dead letter stays in the DLQ");
  });

  it("fails on a missing offset and sends nothing; a missing option is a usage error", async () => {
    const before = (await api.topicStatus(topic))[0]?.maxOffset;
    const missing = await run("resendDlqMsg", "-g", group, "-b", "broker-a", "-o", "7");
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /QUERY_NOT_FOUND/);
    assert.equal((await api.topicStatus(topic))[0]?.maxOffset, before);
    const usage = await run("resendDlqMsg", "-b", "broker-a", "-o", "0");
    assert.equal(usage.code, 2);
  });
});
