/**
 * @module E2E cases of SQL92 filters through the SDK like a user: a PushConsumer and a LitePullConsumer that
 * subscribe with `MessageSelector.bySql` receive exactly the messages whose properties match (a missing
 * property or a non-numeric one compared with a number is never delivered), the skipped messages count as
 * consumed, the group reports its SQL92 subscription; a bad expression is refused at `subscribe`, at the
 * heartbeat and at the pull (400 PARAMETER_ILLEGAL, nothing registered, nothing written).
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { LitePullConsumer } from "../../lib/client/consumer/lite-pull-consumer.js";
import { MessageSelector } from "../../lib/client/consumer/message-selector.js";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { Message, type MessageExt } from "../../lib/client/message.js";
import { Producer } from "../../lib/client/producer/producer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { createTopic, fastTimings, Received, waitUntil } from "../support/consumer-helpers.js";
import { expectError, ok, type PullAnswer, text, writesNothing } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

/** One test message: its tag and user properties, and the body that names it. */
interface Spec {
  body: string;
  tags: string;
  properties: Record<string, string>;
}

/**
 * 26 messages: `amount` 0, 10, ..., 190 and `region` us/eu alternating for the first 20; then four without
 * `amount`, and two whose `amount` is not a number. Odd ones are tagged TagB, even ones TagA.
 */
function specs(): Spec[] {
  return Array.from({ length: 26 }, (_, i) => {
    const region = i % 2 === 1 ? "eu" : "us";
    const properties: Record<string, string> =
      i < 20 ? { amount: String(i * 10), region } : i < 24 ? { region } : { amount: "abc", region };
    return { body: `m${i}`, tags: i % 2 === 1 ? "TagB" : "TagA", properties };
  });
}

export function sql92FilterCases(mode: ServerMode): void {
  describe("SQL92 filters through the SDK", () => {
    const ctx = useTestServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
    const open: { shutdown(): Promise<void> }[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((c) => c.shutdown()));
    });

    /** A topic with two queues on each broker, holding every spec, sent through the Producer. */
    async function filledTopic(prefix: string): Promise<{ topic: string; sent: Spec[] }> {
      const topic = uniqueName(prefix);
      await createTopic(api(), topic, 2);
      const producer = new Producer({
        producerGroup: uniqueName("PG"),
        endpoints: ctx.server.url,
        sendMsgTimeout: TEST_TIMEOUT_MS,
      });
      await producer.start();
      const sent = specs();
      try {
        for (const s of sent) {
          const msg = new Message(topic, s.tags, s.body);
          for (const [k, v] of Object.entries(s.properties)) msg.putUserProperty(k, v);
          assert.equal((await producer.send(msg)).sendStatus, "SEND_OK");
        }
      } finally {
        await producer.shutdown();
      }
      return { topic, sent };
    }

    const bodies = (msgs: readonly MessageExt[]) => msgs.map((m) => m.bodyText).sort();
    const expectedBodies = (sent: Spec[], matches: (s: Spec) => boolean) =>
      sent
        .filter(matches)
        .map((s) => s.body)
        .sort();

    it("a PushConsumer with bySql gets exactly the matching messages, skips the rest for good, and reports SQL92", async () => {
      const { topic, sent } = await filledTopic("SqlPush");
      const group = uniqueName("gSqlPush");
      const sql = "amount >= 100 AND region = 'eu'";
      const consumer = new PushConsumer({
        consumerGroup: group,
        endpoints: ctx.server.url,
        timeoutMs: TEST_TIMEOUT_MS,
        consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
        ...fastTimings(),
      });
      open.push(consumer);
      consumer.subscribe(topic, MessageSelector.bySql(sql));
      const received = new Received();
      consumer.registerMessageListener(received.listener("c1"));
      await consumer.start();
      // m24/m25 ("abc") and m20..m23 (no amount) never match; m11, m13, ..., m19 do.
      const expected = expectedBodies(sent, (s) => Number(s.properties.amount) >= 100 && s.properties.region === "eu");
      assert.deepEqual(expected, ["m11", "m13", "m15", "m17", "m19"]);
      // Every queue's committed offset reaches its end: the skipped messages count as consumed.
      await waitUntil(async () => {
        const rows = await api().progress(group, topic);
        return rows.length === 4 && rows.every((r) => r.diff === 0);
      }, "the group consumed (or skipped) every message");
      const got = [...received.byConsumer.values()].flat();
      assert.deepEqual(bodies(got), expected);
      assert.equal(received.duplicates, 0);
      for (const m of got) assert.equal(m.properties.region, "eu");

      const connection = await api().consumerConnection(group);
      const [member] = connection.consumers;
      const own = member?.subscriptionDataSet.find((s) => s.topic === topic);
      assert.deepEqual(own, { topic, subString: sql, expressionType: "SQL92" });
      assert.equal(connection.subscriptionsConsistent, true);
    });

    /** A LitePullConsumer of a new group on `topic` with `subscription`: the bodies of its polls, once `n` came. */
    async function polled(topic: string, subscription: string | MessageSelector, n: number): Promise<string[]> {
      const consumer = new LitePullConsumer({
        consumerGroup: uniqueName("gSqlLite"),
        endpoints: ctx.server.url,
        timeoutMs: TEST_TIMEOUT_MS,
        consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
        ...fastTimings(),
      });
      open.push(consumer);
      consumer.subscribe(topic, subscription);
      await consumer.start();
      const got: MessageExt[] = [];
      await waitUntil(async () => {
        got.push(...(await consumer.poll(200)));
        return got.length >= n;
      }, `${n} messages polled`);
      return bodies(got);
    }

    it("a LitePullConsumer with bySql polls only matching messages; TAGS and IS NULL work over the stored message", async () => {
      const { topic, sent } = await filledTopic("SqlLite");
      const expected = expectedBodies(
        sent,
        (s) => (s.tags === "TagB" && Number(s.properties.amount) < 50) || s.properties.amount === undefined,
      );
      assert.deepEqual(expected, ["m1", "m20", "m21", "m22", "m23", "m3"]);
      const sql = MessageSelector.bySql("(TAGS = 'TagB' AND amount < 50) OR amount IS NULL");
      assert.deepEqual(await polled(topic, sql, expected.length), expected);
    });

    it("subscribe with a string or byTag is a tag expression, as before", async () => {
      const { topic, sent } = await filledTopic("SqlTag");
      const expected = expectedBodies(sent, (s) => s.tags === "TagA");
      assert.deepEqual(await polled(topic, "TagA", expected.length), expected);
      assert.deepEqual(await polled(topic, MessageSelector.byTag("TagA || TagC"), expected.length), expected);
    });

    it("a bad expression is refused at subscribe, at the heartbeat and at the pull: 400, nothing registered or written", async () => {
      const { topic } = await filledTopic("SqlBad");
      const group = uniqueName("gSqlBad");
      const consumer = new PushConsumer({ consumerGroup: group, endpoints: ctx.server.url, ...fastTimings() });
      assert.throws(
        () => consumer.subscribe(topic, MessageSelector.bySql("amount >")),
        (err: unknown) => isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL) && /at position 8$/.test(err.message),
      );

      const heartbeat = (subString: string, expressionType: string) => ({
        clientId: "10.0.0.1@sql92",
        consumerDataSet: [{ groupName: group, subscriptionDataSet: [{ topic, subString, expressionType }] }],
      });
      for (const [subString, type] of [
        ["a = NULL", "SQL92"],
        ["", "SQL92"],
        ["a > 1 AND (b < 2", "SQL92"],
        ["x".repeat(100_000), "SQL92"],
        ["||", "TAG"],
        ["*", "XPATH"],
      ] as const) {
        const body = await writesNothing(ctx.http, [topic, `%RETRY%${group}`], async () =>
          expectError(await ctx.http.post("/heartbeat", heartbeat(subString, type)), 400, "PARAMETER_ILLEGAL"),
        );
        assert.ok(body.message.length < 300, body.message);
      }
      assert.deepEqual((await api().consumerConnection(group)).consumers, [], "nothing registered");

      const pull = (subExpression: string, expressionType: string) =>
        ctx.http.post("/pull", {
          consumerGroup: group,
          topic,
          brokerName: "broker-a",
          queueId: 0,
          queueOffset: 0,
          subExpression,
          expressionType,
        });
      for (const [subExpression, type] of [
        ["amount > 'x'", "SQL92"],
        ["amount = 1 )", "SQL92"],
        [`${"(".repeat(70)}a = 1${")".repeat(70)}`, "SQL92"],
        ["x".repeat(100_000), "SQL92"],
      ] as const) {
        const body = await writesNothing(
          ctx.http,
          [topic],
          async () => expectError(await pull(subExpression, type), 400, "PARAMETER_ILLEGAL"),
          [group],
        );
        assert.ok(body.message.length < 300, body.message);
      }
    });

    it("the broker filters: a raw pull with SQL92 answers only matching messages, and moves past the rest", async () => {
      const { topic } = await filledTopic("SqlRaw");
      const found: string[] = [];
      for (const brokerName of ["broker-a", "broker-b"]) {
        for (const queueId of [0, 1]) {
          const request = { consumerGroup: "CG", topic, brokerName, queueId, queueOffset: 0, maxMsgNums: 32 };
          const answer = ok(
            await ctx.http.post<PullAnswer>("/pull", {
              ...request,
              subExpression: "amount > 150",
              expressionType: "SQL92",
            }),
          );
          // Past every message of the queue, matched or not: the skipped ones are skipped for good.
          assert.equal(answer.nextBeginOffset, answer.maxOffset);
          found.push(...answer.messages.map((m) => text(m.body)));
        }
      }
      assert.deepEqual(found.sort(), ["m16", "m17", "m18", "m19"]);
    });
  });
}
