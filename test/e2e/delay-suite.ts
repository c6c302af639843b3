/**
 * @module E2E cases of delayed messages: a delay level and a deliver time are stored only when due (asserted by
 * state: a message's store time is never before its due time, never by timing precision, which is `npm run
 * bench`); 1,000 messages due in one second arrive once each; bad delays are refused with a 4xx and write nothing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Message, type MessageExt } from "../../lib/client/message.js";
import { Producer } from "../../lib/client/producer/producer.js";
import { MessageConst } from "../../lib/core/message.js";
import { MAX_PULL_MESSAGES } from "../../lib/protocol/index.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { b64, expectError, writesNothing } from "../support/http.js";
import { uniqueName } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

import { type RetryDelayFixture, WAIT_MS } from "./retry-delay-fixture.js";

export function delayCases({ ctx, api, consumer }: RetryDelayFixture): void {
  it("delay level 2 and a deliver time 3 s ahead: stored only when due, then delivered", async () => {
    const topic = uniqueName("Delayed");
    const group = uniqueName("gDelayed");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const producer = new Producer({
      producerGroup: uniqueName("pDelayed"),
      endpoints: ctx.server.url,
      sendMsgTimeout: TEST_TIMEOUT_MS,
    });
    await producer.start();
    try {
      const byLevel = new Message(topic, "L", "level-2");
      byLevel.setDelayTimeLevel(2);
      const byTime = new Message(topic, "T", "at-time");
      const at = Date.now() + 3000;
      byTime.setDeliverTimeMs(at);
      const sentLevel = await producer.send(byLevel);
      const sentTime = await producer.send(byTime);
      assert.ok(sentLevel.deliverTimeMs !== undefined && sentTime.deliverTimeMs === at, "both wait in the timer store");
      const seen: MessageExt[] = [];
      const c = consumer(group, topic, (m) => {
        seen.push(m);
        return "CONSUME_SUCCESS";
      });
      await c.start();
      await waitUntil(() => seen.length >= 2, "both delayed messages delivered", WAIT_MS);
      const level = seen.find((m) => m.msgId === sentLevel.msgId);
      const time = seen.find((m) => m.msgId === sentTime.msgId);
      assert.ok(level && time);
      // Stored (so visible to any consumer) only once due: the store time is the move's.
      assert.ok(level.storeTimestamp >= (sentLevel.deliverTimeMs ?? 0), "level 2 stored at or after its due time");
      assert.ok(time.storeTimestamp >= at, "the timer message stored at or after its deliver time");
      assert.equal(level.properties[MessageConst.DELAY], "2");
      assert.equal(time.properties[MessageConst.TIMER_DELIVER_MS], String(at));
      assert.equal(seen.length, 2);
    } finally {
      await producer.shutdown();
    }
  });

  it("the SDK's binary send (its default) carries delayTimeLevel: stored only when due", async () => {
    const topic = uniqueName("BinDelayed");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const binary = api();
    assert.equal(binary.transport.binaryBatches, true, "the default transport sends binary batches");
    const sent = await binary.send({
      topic,
      brokerName: "broker-a",
      queueId: 0,
      messages: [{ body: new TextEncoder().encode("later"), delayTimeLevel: 1 }],
    });
    const due = sent.deliverTimeMs?.[0];
    assert.ok(due !== undefined && due >= sent.storeTimestamp, "waits in the timer store, not in the queue");
    let found: { storeTimestamp: number; properties: Record<string, string>; body: Uint8Array } | undefined;
    await waitUntil(
      async () => {
        const read = await binary.pull({
          consumerGroup: "gBin",
          topic,
          brokerName: "broker-a",
          queueId: 0,
          queueOffset: 0,
        });
        found = read.messages[0];
        return found !== undefined;
      },
      "the delayed message appended when due",
      WAIT_MS,
    );
    assert.ok(found);
    assert.ok(found.storeTimestamp >= due, "stored at or after its due time");
    assert.equal(found.properties[MessageConst.DELAY], "1");
    assert.equal(new TextDecoder().decode(found.body), "later");
  });

  it("1,000 delayed messages due in one second: all delivered, none twice", async () => {
    const topic = uniqueName("Burst");
    const queues = await createTopic(api(), topic, 2, ["broker-a"]);
    const due = Date.now() + 8000;
    const batches = Array.from({ length: 10 }, (_, b) =>
      Array.from({ length: 100 }, (_, i) => ({
        body: new TextEncoder().encode(`burst-${b * 100 + i}`),
        properties: { [MessageConst.TIMER_DELIVER_MS]: String(due + ((b * 100 + i) % 1000)) },
      })),
    );
    const answers = await Promise.all(
      batches.map((messages, b) => {
        const mq = queues[b % queues.length];
        assert.ok(mq);
        return api().send({ topic, brokerName: mq.brokerName, queueId: mq.queueId, messages });
      }),
    );
    for (const a of answers) assert.equal(a.deliverTimeMs?.length, 100, "every message waits in the timer store");
    const sentIds = new Set(answers.flatMap((a) => a.msgIds));
    assert.equal(sentIds.size, 1000);
    let got = new Map<string, number>();
    let early = 0;
    /** Every message of the topic's queues, read from offset 0 page by page. */
    const readAll = async () => {
      const seen = new Map<string, number>();
      let before = 0;
      for (const mq of queues) {
        let offset = 0;
        for (;;) {
          const res = await api().pull({
            consumerGroup: "burst",
            topic,
            brokerName: mq.brokerName,
            queueId: mq.queueId,
            queueOffset: offset,
            maxMsgNums: MAX_PULL_MESSAGES,
          });
          for (const m of res.messages) {
            if (m.storeTimestamp < Number(m.properties[MessageConst.TIMER_DELIVER_MS])) before++;
            seen.set(m.msgId, (seen.get(m.msgId) ?? 0) + 1);
          }
          if (res.pullStatus !== "FOUND" || res.nextBeginOffset <= offset) break;
          offset = res.nextBeginOffset;
        }
      }
      got = seen;
      early = before;
      return seen.size === 1000;
    };
    await waitUntil(readAll, "all 1,000 appended", WAIT_MS, 500);
    const status = await api().topicStatus(topic);
    assert.equal(
      status.reduce((n, q) => n + q.maxOffset, 0),
      1000,
      "exactly 1,000 messages appended (none twice)",
    );
    assert.deepEqual(
      [...got.values()].filter((n) => n > 1),
      [],
      "no msgId twice",
    );
    assert.deepEqual(
      [...got.keys()].filter((id) => !sentIds.has(id)),
      [],
    );
    assert.equal(early, 0, "none stored before its deliver time");
  });

  describe("bad input: a 4xx with {code, message}, nothing written", () => {
    it("delay levels out of range, deliver times too far back or ahead, conflicting timers, bad numbers", async () => {
      const topic = uniqueName("BadDelay");
      await createTopic(api(), topic, 1, ["broker-a"]);
      const fresh = uniqueName("NeverCreated");
      const now = Date.now();
      const bad: [Record<string, unknown>, string][] = [
        [{ delayTimeLevel: 4 }, "PARAMETER_ILLEGAL"],
        [{ properties: { DELAY: "4" } }, "PARAMETER_ILLEGAL"],
        [{ properties: { DELAY: "-1" } }, "PARAMETER_ILLEGAL"],
        [{ properties: { DELAY: "two" } }, "PARAMETER_ILLEGAL"],
        [{ delayTimeLevel: 1, properties: { DELAY: "2" } }, "MESSAGE_ILLEGAL"],
        [{ properties: { TIMER_DELIVER_MS: String(now - 3_600_000) } }, "PARAMETER_ILLEGAL"],
        [{ properties: { TIMER_DELIVER_MS: String(now + 8 * 86_400_000) } }, "PARAMETER_ILLEGAL"],
        [{ properties: { TIMER_DELAY_SEC: String(8 * 86_400) } }, "PARAMETER_ILLEGAL"],
        [{ properties: { TIMER_DELAY_MS: "-5" } }, "PARAMETER_ILLEGAL"],
        [{ properties: { TIMER_DELIVER_MS: "soon" } }, "PARAMETER_ILLEGAL"],
        [{ properties: { DELAY: "1", TIMER_DELAY_SEC: "5" } }, "PARAMETER_ILLEGAL"],
      ];
      await writesNothing(ctx.http, [topic, fresh], async () => {
        for (const [fields, code] of bad) {
          for (const t of [topic, fresh]) {
            const answer = await ctx.http.post("/send", { topic: t, messages: [{ body: b64("x"), ...fields }] });
            expectError(answer, 400, code);
          }
        }
        // A batch is delayed as a whole or not at all.
        const mixed = [{ body: b64("now") }, { body: b64("later"), properties: { DELAY: "1" } }];
        expectError(await ctx.http.post("/send", { topic, messages: mixed }), 400, "MESSAGE_ILLEGAL");
        // Too large to wait in the timer store.
        const big = { body: b64("x".repeat(400 * 1024)), properties: { DELAY: "1" } };
        expectError(await ctx.http.post("/send", { topic, messages: [big] }), 413, "MESSAGE_BODY_TOO_LARGE");
        // A transactional message cannot be delayed.
        const half = { producerGroup: "pg", topic, message: { body: b64("x"), properties: { DELAY: "1" } } };
        expectError(await ctx.http.post("/transactions", half), 400, "PARAMETER_ILLEGAL");
      });
    });
  });
}
