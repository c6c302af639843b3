/**
 * @module E2E cases of `POST /send`: batches and their offsets, message ids, the round trip of every
 * message field (binary bodies, large bodies that go to the object store), queue picking, concurrent
 * senders on one queue, and auto-create.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { b64, type MessageIn, ok, type RouteAnswer, type SendAnswer, text } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { pullFrom, statusOf } from "./queues-suite.js";

export function sendCases(mode: ServerMode): void {
  describe("POST /send", () => {
    const ctx = useTestServer(mode);
    const send = (topic: string, messages: MessageIn[], where: { brokerName?: string; queueId?: number } = {}) =>
      ctx.http.post<SendAnswer>("/send", { topic, ...where, messages });
    const createTopic = (topic: string, nums = 4) =>
      ctx.http.put(`/topics/${topic}`, { readQueueNums: nums, writeQueueNums: nums });

    it("a batch of N lands in one queue with consecutive offsets from queueOffset", async () => {
      const topic = uniqueName("Batch");
      ok(await createTopic(topic));
      const first = ok(await send(topic, [{ body: b64("first") }], { brokerName: "broker-a", queueId: 2 }));
      const batch = Array.from({ length: 10 }, (_, i) => ({ body: b64(`m${i}`) }));
      const sent = ok(await send(topic, batch, { brokerName: "broker-a", queueId: 2 }));
      assert.equal(first.queueOffset, 0);
      assert.equal(sent.queueOffset, 1);
      assert.deepEqual(sent.messageQueue, { topic, brokerName: "broker-a", queueId: 2 });
      assert.equal(sent.msgIds.length, 10);
      const pulled = ok(await pullFrom(ctx.http, topic, "broker-a", 2, 1));
      assert.deepEqual(
        pulled.messages.map((m) => [m.queueOffset, text(m.body), m.msgId]),
        batch.map((_, i) => [1 + i, `m${i}`, sent.msgIds[i]]),
      );
      assert.equal(new Set(pulled.messages.map((m) => m.storeTimestamp)).size, 1, "one batch, one store time");
      // Unaddressed batches land whole in one queue too.
      const anywhere = ok(await send(topic, batch));
      const again = ok(
        await pullFrom(
          ctx.http,
          topic,
          anywhere.messageQueue.brokerName,
          anywhere.messageQueue.queueId,
          anywhere.queueOffset,
        ),
      );
      assert.deepEqual(
        again.messages.slice(0, 10).map((m) => m.msgId),
        anywhere.msgIds,
      );
    });

    it("msgIds are unique, pulled back as msgId and UNIQ_KEY; a client-given UNIQ_KEY is kept", async () => {
      const topic = uniqueName("MsgIds");
      ok(await createTopic(topic, 1));
      const where = { brokerName: "broker-b", queueId: 0 };
      const a = ok(
        await send(
          topic,
          Array.from({ length: 20 }, () => ({ body: b64("x") })),
          where,
        ),
      );
      const b = ok(
        await send(
          topic,
          Array.from({ length: 20 }, () => ({ body: b64("y") })),
          where,
        ),
      );
      assert.equal(new Set([...a.msgIds, ...b.msgIds]).size, 40);
      const given = ok(
        await send(topic, [{ body: b64("z"), properties: { UNIQ_KEY: "MY-OWN-KEY-1" } }, { body: b64("w") }], where),
      );
      assert.equal(given.msgIds[0], "MY-OWN-KEY-1");
      assert.notEqual(given.msgIds[1], "MY-OWN-KEY-1");
      const pulled = ok(await pullFrom(ctx.http, topic, "broker-b", 0, 0, { maxMsgNums: 64 })).messages;
      assert.deepEqual(
        pulled.map((m) => m.msgId),
        [...a.msgIds, ...b.msgIds, ...given.msgIds],
      );
      for (const m of pulled) assert.equal(m.properties.UNIQ_KEY, m.msgId);
    });

    it("tags, keys, properties and binary bodies (every byte value) round trip", async () => {
      const topic = uniqueName("RoundTrip");
      ok(await createTopic(topic, 1));
      const everyByte = Uint8Array.from({ length: 512 }, (_, i) => (i * 7 + (i >> 8)) % 256);
      assert.equal(new Set(everyByte).size, 256);
      const messages: MessageIn[] = [
        { body: b64(everyByte), tags: "TagA", keys: ["order-1", "user-9"], properties: { a: "1", "x-y_z": "ü ✓ 漢" } },
        { body: b64("plain"), keys: "single-key" },
        { body: b64(new Uint8Array([0])), properties: {} },
        { body: b64("ünïcødé ✓ 漢字 🚀"), tags: "Tag With Inner Spaces" },
      ];
      const sent = ok(await send(topic, messages, { brokerName: "broker-a", queueId: 0 }));
      const pulled = ok(await pullFrom(ctx.http, topic, "broker-a", 0)).messages;
      assert.equal(pulled.length, 4);
      const [m0, m1, m2, m3] = pulled;
      assert.deepEqual(Buffer.from(m0?.body ?? "", "base64"), Buffer.from(everyByte));
      assert.deepEqual([m0?.tags, m0?.keys], ["TagA", ["order-1", "user-9"]]);
      assert.deepEqual(m0?.properties, { a: "1", "x-y_z": "ü ✓ 漢", UNIQ_KEY: sent.msgIds[0] });
      assert.deepEqual([text(m1?.body ?? ""), m1?.tags, m1?.keys], ["plain", "", ["single-key"]]);
      assert.deepEqual([m2?.body, m2?.keys, m2?.properties], ["AA==", [], { UNIQ_KEY: sent.msgIds[2] }]);
      assert.deepEqual([text(m3?.body ?? ""), m3?.tags], ["ünïcødé ✓ 漢字 🚀", "Tag With Inner Spaces"]);
    });

    it("large bodies (stored as objects, past the inline threshold) round trip", async () => {
      const topic = uniqueName("Large");
      ok(await createTopic(topic, 1));
      const big = randomBytes(300 * 1024);
      const bigger = randomBytes(2 * 1024 * 1024);
      const small = Array.from({ length: 30 }, () => ({ body: b64(randomBytes(1024)) }));
      const where = { brokerName: "broker-b", queueId: 0 };
      ok(await send(topic, [{ body: b64(big) }], where));
      ok(await send(topic, small, where));
      ok(await send(topic, [{ body: b64(bigger), tags: "Big" }], where));
      const pulled = ok(await pullFrom(ctx.http, topic, "broker-b", 0, 0, { maxMsgNums: 64 })).messages;
      assert.equal(pulled.length, 32);
      assert.ok(Buffer.from(pulled[0]?.body ?? "", "base64").equals(big));
      assert.deepEqual(
        pulled.slice(1, 31).map((m) => m.body),
        small.map((m) => m.body),
      );
      assert.ok(Buffer.from(pulled[31]?.body ?? "", "base64").equals(bigger));
      // Reading from the middle of a stored batch.
      const mid = ok(await pullFrom(ctx.http, topic, "broker-b", 0, 17, { maxMsgNums: 2 })).messages;
      assert.deepEqual(
        mid.map((m) => m.body),
        [small[16]?.body, small[17]?.body],
        "offset 17 is the 17th small message",
      );
    });

    it("a body just under the 4 MiB limit is accepted and round trips", async () => {
      const topic = uniqueName("AlmostFourMiB");
      ok(await createTopic(topic, 1));
      const body = randomBytes(4 * 1024 * 1024 - 4 * 1024);
      const sent = ok(await send(topic, [{ body: b64(body) }], { brokerName: "broker-a", queueId: 0 }));
      assert.equal(sent.queueOffset, 0);
      const [m] = ok(await pullFrom(ctx.http, topic, "broker-a", 0)).messages;
      assert.ok(Buffer.from(m?.body ?? "", "base64").equals(body));
    });

    it("without brokerName/queueId the broker picks writable queues, spread over more than one", async () => {
      const topic = uniqueName("Spread");
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 4, writeQueueNums: 3, brokerNames: ["broker-a"] }));
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 2, writeQueueNums: 2, brokerNames: ["broker-b"] }));
      const picked = new Set<string>();
      for (let i = 0; i < 20; i++) {
        const q = ok(await send(topic, [{ body: b64(`s${i}`) }])).messageQueue;
        assert.ok(q.brokerName === "broker-a" ? q.queueId < 3 : q.queueId < 2, JSON.stringify(q));
        picked.add(`${q.brokerName}:${q.queueId}`);
      }
      assert.ok(picked.size > 1, `every send went to ${[...picked].join()}`);
      const stored = (await statusOf(ctx.http, topic)).reduce((n, r) => n + r.maxOffset, 0);
      assert.equal(stored, 20);
      // brokerName without queueId: a writable queue of that broker.
      for (let i = 0; i < 6; i++) {
        const q = ok(await send(topic, [{ body: b64("b") }], { brokerName: "broker-b" })).messageQueue;
        assert.equal(q.brokerName, "broker-b");
        assert.ok(q.queueId < 2);
      }
    });

    it("concurrent sends to one queue get distinct, gap-free offsets", async () => {
      const topic = uniqueName("Concurrent");
      ok(await createTopic(topic, 1));
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          send(topic, [{ body: b64(`c${i}-0`) }, { body: b64(`c${i}-1`) }], { brokerName: "broker-a", queueId: 0 }),
        ),
      );
      const starts = answers.map((a) => ok(a).queueOffset).sort((x, y) => x - y);
      assert.deepEqual(
        starts,
        Array.from({ length: 24 }, (_, i) => 2 * i),
      );
      const pulled = ok(await pullFrom(ctx.http, topic, "broker-a", 0, 0, { maxMsgNums: 64 })).messages;
      assert.deepEqual(
        pulled.map((m) => m.queueOffset),
        Array.from({ length: 48 }, (_, i) => i),
      );
      assert.equal(new Set(pulled.map((m) => m.msgId)).size, 48);
    });

    it("sending to an unknown topic creates it with 4/4 queues on each live writable broker", async () => {
      const topic = uniqueName("AutoCreated");
      const sent = ok(await send(topic, [{ body: b64("hello") }]));
      assert.equal(sent.messageQueue.topic, topic);
      assert.ok(sent.messageQueue.queueId < 4);
      const route = ok(await ctx.http.get<RouteAnswer>(`/topics/${topic}/route`));
      assert.deepEqual(
        route.queueDatas,
        ["broker-a", "broker-b"].map((brokerName) => ({
          brokerName,
          readQueueNums: 4,
          writeQueueNums: 4,
          perm: 6,
          topicSysFlag: 0,
        })),
      );
      assert.ok(ok(await ctx.http.get<{ topics: string[] }>("/topics")).topics.includes(topic));
      const { brokerName, queueId } = sent.messageQueue;
      const pulled = ok(await pullFrom(ctx.http, topic, brokerName, queueId));
      assert.deepEqual(
        pulled.messages.map((m) => text(m.body)),
        ["hello"],
      );
      // A 127-character name is still legal.
      const longest = `L${"x".repeat(126)}`;
      ok(await send(longest, [{ body: b64("x") }]));
      assert.ok(ok(await ctx.http.get<{ topics: string[] }>("/topics")).topics.includes(longest));
    });
  });
}
