/**
 * @module E2E cases of the message index through the HTTP API and the SDK: a message found by its id on every
 * broker and queue; a key on many messages answered a bounded page at a time, oldest first, with a cursor that
 * ends; a time range; a topic with key indexing off says so (and still finds ids); bad input is 400 with
 * `{code, message}` and writes nothing; an unknown id is 404.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Message } from "../../lib/client/message.js";
import { Producer } from "../../lib/client/producer/producer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { MessageIdGenerator } from "../../lib/core/message-id.js";
import type { PulledMessage, SendResponse } from "../../lib/protocol/index.js";
import { createTopic } from "../support/consumer-helpers.js";
import { b64, expectError, ok, writesNothing } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

const QUEUES = [
  ["broker-a", 0],
  ["broker-a", 1],
  ["broker-b", 0],
  ["broker-b", 1],
] as const;

export function queryCases(mode: ServerMode): void {
  describe("queries by id and by key (the message index)", () => {
    const ctx = useTestServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

    async function send(topic: string, brokerName: string, queueId: number, keys: string[][]): Promise<SendResponse> {
      const messages = keys.map((k, i) => ({ body: b64(`m${i}`), keys: k }));
      return ok(await ctx.http.post<SendResponse>("/send", { topic, brokerName, queueId, messages }));
    }

    it("finds a message by its id on every broker and queue, through the SDK's Producer too", async () => {
      const topic = uniqueName("QId");
      await createTopic(api(), topic, 2);
      const sent = [];
      for (const [brokerName, queueId] of QUEUES) {
        const answer = await send(topic, brokerName, queueId, [["a"], ["b"], ["c"]]);
        sent.push({ brokerName, queueId, answer });
      }
      for (const { brokerName, queueId, answer } of sent) {
        const id = answer.msgIds[1] as string;
        const [found, ...more] = await api().queryMessageById({ topic, msgId: id });
        assert.equal(more.length, 0);
        assert.deepEqual(
          [found?.msgId, found?.brokerName, found?.queueId, found?.queueOffset, found?.keys],
          [id, brokerName, queueId, answer.queueOffset + 1, ["b"]],
        );
      }
      // A send retried after a lost answer keeps its UNIQ_KEY: both copies are answered, each where it is.
      const again = new MessageIdGenerator().next();
      for (const [brokerName, queueId] of [QUEUES[0], QUEUES[3], QUEUES[0]]) {
        const messages = [{ body: b64("again"), properties: { UNIQ_KEY: again } }];
        ok(await ctx.http.post("/send", { topic, brokerName, queueId, messages }));
      }
      const copies = await api().queryMessageById({ topic, msgId: again });
      assert.deepEqual(copies.map((m) => `${m.brokerName}/${m.queueId}`).sort(), [
        "broker-a/0",
        "broker-a/0",
        "broker-b/1",
      ]);
      const producer = new Producer({ producerGroup: uniqueName("PG"), endpoints: ctx.server.url });
      await producer.start();
      try {
        const result = await producer.send(new Message(topic, "TagA", "order-7", "hello"));
        const [found] = await api().queryMessageById({ topic, msgId: result.msgId });
        assert.equal(Buffer.from(found?.body ?? []).toString(), "hello");
        assert.equal(found?.queueOffset, result.queueOffset);
      } finally {
        await producer.shutdown();
      }
    });

    it("pages a key on many messages oldest first, bounded, until the cursor ends; a time range narrows it", async () => {
      const topic = uniqueName("QKey");
      await createTopic(api(), topic, 2);
      const sends: SendResponse[] = [];
      // 5 sends of 30 messages over the four queues, 2 of every 3 keyed "hot" (100 in all), one "cold".
      for (let s = 0; s < 5; s++) {
        const [brokerName, queueId] = QUEUES[s % QUEUES.length] as (typeof QUEUES)[number];
        const keys = Array.from({ length: 30 }, (_, i) => (i % 3 === 2 ? ["cold", `c${s}-${i}`] : ["hot"]));
        sends.push(await send(topic, brokerName, queueId, keys));
      }
      const pages: PulledMessage[][] = [];
      let cursor: string | undefined;
      for (let n = 0; n < 10; n++) {
        const page = await api().queryMessagesByKey({ topic, key: "hot", maxNum: 32, ...(cursor ? { cursor } : {}) });
        assert.ok(page.messages.length <= 32);
        pages.push(page.messages);
        cursor = page.nextCursor;
        if (cursor === undefined) break;
      }
      assert.equal(cursor, undefined, "the cursor ends");
      const all = pages.flat();
      assert.equal(all.length, 100);
      assert.equal(new Set(all.map((m) => m.msgId)).size, 100, "no message twice");
      assert.ok(all.every((m) => m.keys.includes("hot")));
      const times = all.map((m) => m.storeTimestamp);
      assert.deepEqual(
        times,
        [...times].sort((a, b) => a - b),
        "oldest first",
      );
      assert.equal(pages[0]?.length, 32);

      const third = sends[2] as SendResponse;
      const fourth = sends[3] as SendResponse;
      const ranged = await api().queryMessagesByKey({
        topic,
        key: "hot",
        begin: third.storeTimestamp,
        end: fourth.storeTimestamp,
      });
      const expected = sends.filter(
        (s) => s.storeTimestamp >= third.storeTimestamp && s.storeTimestamp <= fourth.storeTimestamp,
      ).length;
      assert.equal(ranged.messages.length, expected * 20);
      assert.ok(ranged.messages.every((m) => m.storeTimestamp >= third.storeTimestamp));
      const one = await api().queryMessagesByKey({ topic, key: "c4-2" });
      assert.deepEqual(
        one.messages.map((m) => m.msgId),
        [(sends[4] as SendResponse).msgIds[2]],
      );
    });

    it("a topic with key indexing off says so and still finds its messages by id", async () => {
      const topic = uniqueName("QOff");
      await api().updateTopic(topic, { readQueueNums: 1, writeQueueNums: 1, keyIndex: false });
      const answer = await send(topic, "broker-a", 0, [["k1"]]);
      const refused = expectError(
        await ctx.http.post("/messages/by-key", { topic, key: "k1" }),
        400,
        "PARAMETER_ILLEGAL",
      );
      assert.match(refused.message, /does not index its messages' keys/);
      const [found] = await api().queryMessageById({ topic, msgId: answer.msgIds[0] as string });
      assert.deepEqual(found?.keys, ["k1"]);
      await api().updateTopic(topic, { keyIndex: true });
      const later = await send(topic, "broker-a", 0, [["k1"]]);
      const page = await api().queryMessagesByKey({ topic, key: "k1" });
      assert.deepEqual(
        page.messages.map((m) => m.msgId),
        later.msgIds,
        "keys are indexed again from then on",
      );
    });

    it("refuses bad queries with 400 {code, message}, writing nothing; an unknown id is 404", async () => {
      const topic = uniqueName("QBad");
      await createTopic(api(), topic, 1);
      await send(topic, "broker-a", 0, [["k"]]);
      const bad: unknown[] = [
        { topic, key: "has space" },
        { topic, key: "" },
        { topic, key: "k", maxNum: 65 },
        { topic, key: "k", begin: 10, end: 5 },
        { topic, key: "k", cursor: "not-a-cursor" },
        { topic, key: "x".repeat(256) },
        { topic, key: "k", extra: 1 },
      ];
      for (const body of bad) {
        const error = await writesNothing(ctx.http, [topic], async () =>
          expectError(await ctx.http.post("/messages/by-key", body), 400, "PARAMETER_ILLEGAL"),
        );
        assert.ok(error.message.length > 0 && error.message.length < 2000);
      }
      await writesNothing(ctx.http, [topic], async () =>
        expectError(await ctx.http.post("/messages/by-id", { topic, msgId: "a b" }), 400, "PARAMETER_ILLEGAL"),
      );
      const unknown = new MessageIdGenerator().next();
      const missing = expectError(
        await ctx.http.post("/messages/by-id", { topic, msgId: unknown }),
        404,
        "QUERY_NOT_FOUND",
      );
      assert.match(missing.message, /no message with id/);
      expectError(
        await ctx.http.post("/messages/by-key", { topic: uniqueName("None"), key: "k" }),
        404,
        "TOPIC_NOT_EXIST",
      );
    });
  });
}
