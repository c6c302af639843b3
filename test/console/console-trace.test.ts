/**
 * The console's trace timeline in a real browser (headless Chromium) against a fresh local broker: a message sent
 * by a traced Producer and consumed by a traced PushConsumer shows its Pub, SubBefore and SubAfter rows in the
 * message view; a message sent without tracing says it has no trace. Every wait is a wait for a state, bounded
 * by TEST_TIMEOUT_MS only as a failure bound.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { Message } from "../../lib/client/message.js";
import { Producer } from "../../lib/client/producer/producer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { fastTimings, waitUntil } from "../support/consumer-helpers.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";
import { CONSOLE_SKIP as skip, useConsolePage, WAIT as wait } from "./browser.js";

describe("the console's message trace in Chromium", { skip }, () => {
  const ctx = useTestServer("local");
  const session = useConsolePage(() => ctx.server.url);
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

  it("shows a traced message's timeline, and says when a message has none", async () => {
    const topic = uniqueName("TraceView");
    await api().updateTopic(topic, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
    const producer = new Producer({
      producerGroup: uniqueName("PView"),
      endpoints: ctx.server.url,
      enableMsgTrace: true,
    });
    await producer.start();
    const sent = await producer.send(new Message(topic, "TagA", "order-9", "hello"));
    await producer.shutdown();
    const plain = await api().send({ topic, messages: [{ body: new TextEncoder().encode("untraced") }] });
    let consumed = 0;
    const consumer = new PushConsumer({
      consumerGroup: uniqueName("gView"),
      endpoints: ctx.server.url,
      consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
      enableMsgTrace: true,
      ...fastTimings(),
    });
    consumer.subscribe(topic, "TagA");
    consumer.registerMessageListener((msgs) => {
      consumed += msgs.length;
      return "CONSUME_SUCCESS";
    });
    try {
      await consumer.start();
      await waitUntil(() => consumed >= 1, "the traced message consumed", TEST_TIMEOUT_MS);
    } finally {
      await consumer.shutdown(); // flushes its trace records
    }
    const { brokerName, queueId } = sent.messageQueue;
    await session.page.goto(session.consoleUrl(`#/message/${topic}/${brokerName}/${queueId}/${sent.queueOffset}`));
    const rows = session.page.getByTestId("trace-row");
    await rows.nth(2).waitFor(wait);
    assert.equal(await rows.count(), 3);
    const steps = await Promise.all([0, 1, 2].map((i) => rows.nth(i).locator("td").nth(1).textContent()));
    assert.deepEqual(steps, ["Pub", "SubBefore", "SubAfter"]);
    assert.match((await rows.nth(2).textContent()) ?? "", /CONSUME_SUCCESS/);
    await session.shot("trace");
    await session.page.goto(
      session.consoleUrl(
        `#/message/${topic}/${plain.messageQueue.brokerName}/${plain.messageQueue.queueId}/${plain.queueOffset}`,
      ),
    );
    await session.page.getByText("No trace: sent and consumed without enableMsgTrace").waitFor(wait);
    assert.equal(await rows.count(), 0);
  });
});
