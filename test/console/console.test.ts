/**
 * The console in a real browser (headless Chromium via playwright-core) against a fresh local broker: a
 * topic created through the form (and a refused one showing the API's message), messages sent with the
 * SDK, a consumer group with a known lag, then the cluster, topics, group (lag table and chart), message,
 * producer and transaction views checked for that data, requests signed once AWS keys are entered, at
 * 1280×800 and at a phone width (the console's files, its connection settings and keyboard: console-shell.test.ts).
 * Screenshots of each view go to a temp folder, or to docs/console/ with UPDATE_CONSOLE_SCREENSHOTS=1.
 * Skipped (with the reason) only when /usr/bin/chromium is missing. Every wait is a wait for a state,
 * bounded by TEST_TIMEOUT_MS only as a failure bound.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { after, describe, it } from "node:test";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { Message } from "../../lib/client/message.js";
import { Producer } from "../../lib/client/producer/producer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { fastTimings, waitUntil } from "../support/consumer-helpers.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";
import { CONSOLE_SKIP as skip, useConsolePage, WAIT as wait } from "./browser.js";

describe("the console in Chromium", { skip }, () => {
  const ctx = useTestServer("local");
  const topic = uniqueName("ConsoleOrders");
  const group = uniqueName("consoleGroup");
  const producerGroup = uniqueName("consoleProducers");
  const sent: { msgId: string; brokerName: string; queueId: number; queueOffset: number; n: number }[] = [];
  let producer: Producer;
  let consumer: PushConsumer | undefined;
  let releaseHeld: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    releaseHeld = resolve;
  });
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
  const session = useConsolePage(() => ctx.server.url);
  const { consoleUrl, shot } = session;

  after(async () => {
    releaseHeld();
    await consumer?.shutdown();
    await producer?.shutdown();
  });

  it("cluster: both brokers, master, address and live", async () => {
    await session.page.goto(consoleUrl("#/cluster"));
    await session.page.getByTestId("broker-row").nth(1).waitFor(wait);
    const rows = await session.page.getByTestId("broker-row").allInnerTexts();
    assert.equal(rows.length, 2);
    for (const [i, name] of ["broker-a", "broker-b"].entries()) {
      assert.match(rows[i] ?? "", new RegExp(`${name}\\s+0 \\(master\\)\\s+${ctx.server.url.replace(/\./g, "\\.")}`));
      assert.match(rows[i] ?? "", /live/);
    }
    await shot("cluster");
  });

  it("topics: a refused create shows the API's message; a good one opens the topic with its route", async () => {
    await session.page.goto(consoleUrl("#/topics"));
    const form = session.page.getByRole("form", { name: "Create topic" });
    await form.getByLabel("Topic", { exact: true }).fill(topic);
    await form.getByLabel("Read queues").fill("5000");
    await form.getByRole("button", { name: "Create topic" }).click();
    const error = form.getByRole("alert");
    await error.waitFor(wait);
    assert.match(await error.innerText(), /^PARAMETER_ILLEGAL: .*readQueueNums/s);
    assert.deepEqual((await api().listTopics()).includes(topic), false, "a refused create writes nothing");

    await form.getByLabel("Read queues").fill("2");
    await form.getByLabel("Write queues").fill("2");
    await form.getByRole("button", { name: "Create topic" }).click();
    await session.page.getByTestId("route-row").nth(1).waitFor(wait);
    const route = await session.page.getByTestId("route-row").allInnerTexts();
    assert.match(route[0] ?? "", /broker-a\s+2\s+2\s+RW- \(6\)/);
    assert.match(route[1] ?? "", /broker-b\s+2\s+2\s+RW- \(6\)/);
  });

  it("topic: update (read-only perm) and delete through the forms", async () => {
    const other = uniqueName("ConsoleScratch");
    await api().updateTopic(other, { readQueueNums: 1, writeQueueNums: 1 });
    await session.page.goto(consoleUrl(`#/topics/${other}`));
    // The page shows the new topic's route (1 queue per broker) before the form is used.
    // Polled through locators, never a string predicate: the console's CSP refuses eval in the page.
    await waitUntil(
      async () =>
        (await session.page.getByTestId("route-row").allInnerTexts()).some((r) => /^broker-a\t1\t1\t/.test(r)),
      "the new topic's route row",
      TEST_TIMEOUT_MS,
    );
    const update = session.page.getByRole("form", { name: "Update topic" });
    await update.getByLabel("Perm").fill("4");
    await update.getByRole("button", { name: "Update topic" }).click();
    await session.page.getByTestId("route-row").filter({ hasText: "R-- (4)" }).nth(1).waitFor(wait);
    assert.deepEqual(
      (await api().topicRoute(other)).queueDatas.map((q) => q.perm),
      [4, 4],
    );

    await session.page.getByRole("button", { name: "Delete topic…" }).click();
    await session.page.getByRole("button", { name: `Delete ${other} now` }).click();
    await session.page.getByRole("heading", { name: "Topics", exact: true }).waitFor(wait);
    assert.equal((await api().listTopics()).includes(other), false);
  });

  it("the SDK sends, a consumer group consumes all but 4 held messages", async () => {
    producer = new Producer({ producerGroup, endpoints: ctx.server.url, sendMsgTimeout: TEST_TIMEOUT_MS });
    await producer.start();
    const send = async (n: number, tags: string) => {
      const m = new Message(topic, tags, [`order-${n}`], JSON.stringify({ order: n, item: "widget", qty: n % 3 }));
      m.putUserProperty("region", "eu");
      const r = await producer.send(m);
      sent.push({ msgId: r.msgId, ...r.messageQueue, queueOffset: r.queueOffset, n });
    };
    for (let n = 0; n < 8; n++) await send(n, "done");

    const c = new PushConsumer({
      consumerGroup: group,
      endpoints: ctx.server.url,
      consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
      ...fastTimings(),
    });
    consumer = c;
    c.subscribe(topic, "*");
    c.registerMessageListener(async (msgs) => {
      if (msgs.some((m) => m.tags === "hold")) await held;
      return "CONSUME_SUCCESS" as const;
    });
    await c.start();
    // The group's rows of the topic (it also has offsets of its retry topic, %RETRY%<group>).
    const lag = async () => (await api().progress(group, topic)).reduce((sum, r) => sum + r.diff, 0);
    await waitUntil(async () => (await api().progress(group, topic)).length === 4 && (await lag()) === 0, "lag 0");
    // Open the group now, so the chart samples lag 0 before the held messages arrive.
    await session.page.goto(consoleUrl(`#/groups/${group}`));
    await session.page.getByTestId("total-lag").filter({ hasText: /^0$/ }).waitFor(wait);
    for (let n = 8; n < 12; n++) await send(n, "hold");
    await waitUntil(async () => (await lag()) === 4, "lag 4");
  });

  it("group: members, the consumerProgress table, total lag and the lag chart", async () => {
    await session.page.getByTestId("total-lag").filter({ hasText: /^4$/ }).waitFor(wait);
    const member = session.page.getByTestId("member-row");
    await member.first().waitFor(wait);
    assert.match(await member.first().innerText(), new RegExp(`${consumer?.clientId}.*CLUSTERING.*${topic}: \\*`, "s"));
    const rows = (await session.page.getByTestId("progress-row").allInnerTexts()).filter((r) =>
      r.startsWith(`${topic}\t`),
    );
    assert.equal(rows.length, 4);
    const diffs = rows.map((r) => Number(r.split("\t")[5]));
    assert.equal(
      diffs.reduce((a, b) => a + b, 0),
      4,
    );
    // The chart has sampled both the 0 and the 4.
    const chart = session.page.getByTestId("lag-chart");
    await waitUntil(
      async () => Number(await chart.getAttribute("data-samples")) >= 2,
      "the chart sampled twice",
      TEST_TIMEOUT_MS,
    );
    assert.ok(await chart.locator("canvas").count(), "uPlot drew a canvas");
    const caption = await session.page.locator("figure.chart figcaption").innerText();
    assert.match(caption, /latest lag 4/);
    const stored = (await session.page.evaluate(
      `Object.entries(localStorage).filter(([k]) => k.startsWith("nimbus-console-lag:"))
        .flatMap(([, v]) => JSON.parse(v).map((s) => s.lag))`,
    )) as number[];
    assert.ok(stored.includes(0) && stored.at(-1) === 4, `samples ${stored.join(",")} went from 0 to 4`);
    await shot("group");
  });

  it("topics page: the list filter and per-queue offsets", async () => {
    await session.page.goto(consoleUrl("#/topics"));
    await session.page.getByLabel("Filter").fill(topic.slice(0, -2));
    await session.page.getByRole("link", { name: topic }).waitFor(wait);
    await shot("topics");
    await session.page.getByRole("link", { name: topic }).click();
    await session.page.getByTestId("queue-row").nth(3).waitFor(wait);
    const queues = await session.page.getByTestId("queue-row").allInnerTexts();
    const maxOffsets = queues.map((q) => Number(q.split("\t")[3]));
    assert.equal(
      maxOffsets.reduce((a, b) => a + b, 0),
      12,
    );
    await shot("topic");
  });

  it("messages: pick a queue of a topic, browse it, view one message as text, hex and JSON, re-send it", async () => {
    const first = sent[0];
    assert.ok(first);
    // A topic alone lists its queues; its queue's link browses its last 20 messages (all of them here).
    await session.page.goto(consoleUrl(`#/messages?topic=${topic}`));
    await session.page.getByRole("link", { name: `${first.brokerName}/${first.queueId}`, exact: true }).click();
    await session.page.getByTestId("message-row").first().waitFor(wait);
    const inQueue = sent.filter((s) => s.brokerName === first.brokerName && s.queueId === first.queueId);
    assert.equal(await session.page.getByTestId("message-row").count(), inQueue.length);
    await session.page.getByLabel("Find msgId or key in this range").fill(`order-${first.n}`);
    await session.page.getByTestId("message-row").filter({ hasText: first.msgId }).waitFor(wait);
    assert.equal(await session.page.getByTestId("message-row").count(), 1);
    await shot("messages");

    await session.page.getByRole("link", { name: String(first.queueOffset), exact: true }).click();
    const headers = session.page.getByTestId("message-headers");
    await headers.waitFor(wait);
    const text = await headers.innerText();
    assert.match(text, new RegExp(first.msgId));
    assert.match(text, /done/);
    assert.match(text, new RegExp(`order-${first.n}`));
    const props = await session.page.getByTestId("property-row").allInnerTexts();
    assert.ok(
      props.some((p) => /region\s+eu/.test(p)),
      props.join("|"),
    );
    const body = session.page.getByTestId("message-body");
    assert.equal(await body.innerText(), JSON.stringify({ order: first.n, item: "widget", qty: first.n % 3 }));
    await session.page.getByRole("tab", { name: "Hex" }).click();
    assert.match(await body.innerText(), /^00000000 {2}7b 22 6f 72 64 65 72/);
    await session.page.getByRole("tab", { name: "JSON" }).click();
    assert.equal(await body.innerText(), JSON.stringify({ order: first.n, item: "widget", qty: first.n % 3 }, null, 2));
    await shot("message");

    await session.page.getByRole("button", { name: "Re-send message" }).click();
    const result = session.page.getByTestId("resend-result");
    await result.waitFor(wait);
    const [, newId, broker, queue, offset] =
      /Sent as (\S+) to (\S+)\/(\d+) at offset (\d+)/.exec(await result.innerText()) ?? [];
    assert.ok(newId && broker && queue && offset);
    assert.notEqual(newId, first.msgId);
    const copy = (
      await api().pull({
        consumerGroup: "check",
        topic,
        brokerName: broker,
        queueId: Number(queue),
        queueOffset: Number(offset),
        maxMsgNums: 1,
      })
    ).messages[0];
    assert.equal(copy?.msgId, newId);
    // ORIGIN_MESSAGE_ID is the broker's (retry bookkeeping): a client's send may not set it.
    assert.equal(copy?.properties.ORIGIN_MESSAGE_ID, undefined);
    assert.equal(copy?.properties.region, "eu");
    assert.equal(
      new TextDecoder().decode(copy?.body),
      JSON.stringify({ order: first.n, item: "widget", qty: first.n % 3 }),
    );

    // A system topic as the target: the API's refusal, as the API words it.
    const resend = session.page.getByRole("form", { name: "Re-send" });
    await resend.getByLabel("To topic").fill("TBW102");
    await resend.getByRole("button", { name: "Re-send message" }).click();
    const refusal = resend.getByRole("alert");
    await refusal.waitFor(wait);
    assert.match(await refusal.innerText(), /^PARAMETER_ILLEGAL: .*TBW102/s);
  });

  it("group: consumer status shows the live member, its assigned queues, and consistent subscriptions", async () => {
    await session.page.goto(consoleUrl(`#/groups/${group}`));
    const member = session.page.getByTestId("status-member").filter({ hasText: consumer?.clientId ?? "?" });
    await member.waitFor(wait);
    // Its four queues of the topic, as its heartbeat reports them (the held batch is cached on one of them).
    await waitUntil(
      async () => (await session.page.getByTestId("status-queue-row").count()) >= 4,
      "its four queue rows",
      TEST_TIMEOUT_MS,
    );
    assert.match(await member.getByTestId("status-assigned").innerText(), new RegExp(topic));
    assert.equal(await session.page.getByTestId("subscriptions-consistent").innerText(), "consistent");
    assert.equal(await session.page.getByTestId("status-inconsistent").count(), 0);
  });

  it("dead letters: a message sent back with delayLevel -1 shows in the group's DLQ view and its message view", async () => {
    const deadGroup = uniqueName("consoleDead");
    const first = sent[0];
    assert.ok(first);
    await session.page.goto(consoleUrl(`#/groups/${deadGroup}`));
    await session.page
      .getByTestId("dead-letter-total")
      .filter({ hasText: /No dead letters/ })
      .waitFor(wait);
    const back = await api().sendBack({
      consumerGroup: deadGroup,
      topic,
      brokerName: first.brokerName,
      queueId: first.queueId,
      queueOffset: first.queueOffset,
      delayLevel: -1,
    });
    assert.equal(back.result, "DLQ");
    await session.page.reload();
    await session.page
      .getByTestId("dead-letter-total")
      .filter({ hasText: new RegExp(`^1 in %DLQ%${deadGroup}$`) })
      .waitFor(wait);
    await shot("dead-letters");
    await session.page.getByRole("link", { name: `Browse dead letters ${back.brokerName}/${back.queueId}` }).click();
    const row = session.page.getByTestId("message-row").filter({ hasText: back.msgId });
    await row.waitFor(wait);
    await session.page.getByRole("link", { name: String(back.queueOffset), exact: true }).click();
    const headers = session.page.getByTestId("message-headers");
    await headers.waitFor(wait);
    assert.match(await headers.innerText(), new RegExp(`%DLQ%${deadGroup}`));
    const body = session.page.getByTestId("message-body");
    assert.equal(await body.innerText(), JSON.stringify({ order: first.n, item: "widget", qty: first.n % 3 }));
    // Re-send goes back to the topic the message came from (its RETRY_TOPIC property) by default.
    const resend = session.page.getByRole("form", { name: "Re-send" });
    assert.equal(await resend.getByLabel("To topic").inputValue(), topic);
  });

  it("group: reset offset by time to first from the page; an unknown topic shows the API's refusal", async () => {
    const resetGroup = uniqueName("consoleReset");
    // The group has consumed everything (offsets at each queue's max), without a live consumer to move them.
    const queues = await api().topicStatus(topic);
    await api().commitOffsets(
      resetGroup,
      topic,
      queues.map((q) => ({ brokerName: q.brokerName, queueId: q.queueId, offset: q.maxOffset })),
    );
    const count = queues.reduce((n, q) => n + q.maxOffset - q.minOffset, 0);
    await session.page.goto(consoleUrl(`#/groups/${resetGroup}`));
    await session.page.getByTestId("total-lag").filter({ hasText: /^0$/ }).waitFor(wait);

    const form = session.page.getByRole("form", { name: "Reset offset by time" });
    await form.getByLabel("Topic", { exact: true }).fill("NoSuchConsoleTopic");
    await form.locator("select[name=resetTarget]").selectOption("first");
    await form.getByRole("button", { name: "Reset offsets" }).click();
    const refusal = form.getByRole("alert");
    await refusal.waitFor(wait);
    assert.match(await refusal.innerText(), /^TOPIC_NOT_EXIST: /);

    await form.getByLabel("Topic", { exact: true }).fill(topic);
    await form.getByRole("button", { name: "Reset offsets" }).click();
    await session.page.getByTestId("reset-result").waitFor(wait);
    await session.page
      .getByTestId("total-lag")
      .filter({ hasText: new RegExp(`^${count}$`) })
      .waitFor(wait);
    const rows = await session.page.getByTestId("progress-row").allInnerTexts();
    assert.equal(rows.length, queues.length);
    for (const r of rows) {
      const cells = r.split("\t");
      assert.equal(cells[4], "0", r);
      assert.equal(cells[5], cells[3], r);
    }
    await shot("group-reset");
  });

  it("producers: the SDK producer's heartbeat shows in its group", async () => {
    await session.page.goto(consoleUrl(`#/producers/${producerGroup}`));
    const row = session.page.getByTestId("producer-row").first();
    await row.waitFor(wait);
    assert.match(await row.innerText(), /TYPESCRIPT/);
    await shot("producers");
  });

  it("phone width: no view is wider than the screen", async () => {
    const phone = await session.browser.context.newPage();
    try {
      await phone.setViewportSize({ width: 390, height: 844 });
      for (const [hash, ready] of [
        ["#/cluster", "broker-row"],
        [`#/groups/${group}`, "progress-row"],
        [`#/topics/${topic}`, "queue-row"],
      ] as const) {
        await phone.goto(consoleUrl(hash));
        await phone.getByTestId(ready).first().waitFor(wait);
        const width = Number(await phone.evaluate("document.documentElement.scrollWidth"));
        assert.ok(width <= 390, `${hash} is ${width} px wide`);
      }
      await phone.screenshot({ path: path.join(session.shots, "phone-topic.png"), fullPage: true });
    } finally {
      await phone.close();
    }
  });
});

if (skip) describe("the console in Chromium", () => it(`skipped: ${skip}`, { skip }, () => {}));
