/**
 * @module E2E cases of `POST /pull`: the four statuses with nextBeginOffset and min/max offsets, tag
 * subscriptions (filtered messages are skipped for good), maxMsgNums across batches and index pages,
 * and that pulling deletes nothing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { b64, expectError, ok, type PullAnswer, text } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { pullFrom, sendTo, statusOf } from "./queues-suite.js";

const summary = (p: PullAnswer) => ({
  pullStatus: p.pullStatus,
  nextBeginOffset: p.nextBeginOffset,
  minOffset: p.minOffset,
  maxOffset: p.maxOffset,
  offsets: p.messages.map((m) => m.queueOffset),
});

export function pullCases(mode: ServerMode): void {
  describe("POST /pull", () => {
    const ctx = useTestServer(mode);
    const oneQueue = async (prefix: string) => {
      const topic = uniqueName(prefix);
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] }));
      return topic;
    };
    const pull = async (topic: string, offset: number, extra: { maxMsgNums?: number; subExpression?: string } = {}) =>
      ok(await pullFrom(ctx.http, topic, "broker-a", 0, offset, extra));

    it("FOUND, NO_NEW_MSG and OFFSET_ILLEGAL with nextBeginOffset, minOffset and maxOffset", async () => {
      const topic = await oneQueue("Statuses");
      const empty = { nextBeginOffset: 0, minOffset: 0, maxOffset: 0, offsets: [] };
      assert.deepEqual(summary(await pull(topic, 0)), { pullStatus: "NO_NEW_MSG", ...empty });
      assert.deepEqual(summary(await pull(topic, 5)), { pullStatus: "OFFSET_ILLEGAL", ...empty });

      ok(await sendTo(ctx.http, topic, "broker-a", 0, "m0", "m1", "m2"));
      assert.deepEqual(summary(await pull(topic, 0)), {
        pullStatus: "FOUND",
        nextBeginOffset: 3,
        minOffset: 0,
        maxOffset: 3,
        offsets: [0, 1, 2],
      });
      assert.deepEqual(summary(await pull(topic, 1)), {
        pullStatus: "FOUND",
        nextBeginOffset: 3,
        minOffset: 0,
        maxOffset: 3,
        offsets: [1, 2],
      });
      assert.deepEqual(summary(await pull(topic, 3)), {
        pullStatus: "NO_NEW_MSG",
        nextBeginOffset: 3,
        minOffset: 0,
        maxOffset: 3,
        offsets: [],
      });
      const beyond = summary(await pull(topic, 10));
      assert.equal(beyond.pullStatus, "OFFSET_ILLEGAL");
      assert.deepEqual([beyond.minOffset, beyond.maxOffset, beyond.offsets], [0, 3, []]);
      assert.ok([0, 3].includes(beyond.nextBeginOffset), `nextBeginOffset ${beyond.nextBeginOffset} is in the queue`);
    });

    it("tag subscriptions: `TagA || TagB` with spaces, `*`, and NO_MATCHED_MSG; filtered messages are skipped for good", async () => {
      const topic = await oneQueue("Tags");
      const tags = ["TagA", "TagB", "TagC", "TagA", "", "TagB", "TagC"];
      ok(
        await ctx.http.post("/send", {
          topic,
          brokerName: "broker-a",
          queueId: 0,
          messages: tags.map((t, i) => ({ body: b64(`m${i}`), ...(t === "" ? {} : { tags: t }) })),
        }),
      );
      const ab = await pull(topic, 0, { subExpression: "TagA || TagB" });
      assert.deepEqual(summary(ab), {
        pullStatus: "FOUND",
        nextBeginOffset: 7,
        minOffset: 0,
        maxOffset: 7,
        offsets: [0, 1, 3, 5],
      });
      assert.deepEqual(
        ab.messages.map((m) => [m.tags, text(m.body)]),
        [
          ["TagA", "m0"],
          ["TagB", "m1"],
          ["TagA", "m3"],
          ["TagB", "m5"],
        ],
      );
      assert.deepEqual(summary(await pull(topic, 0, { subExpression: "*" })).offsets, [0, 1, 2, 3, 4, 5, 6]);
      assert.deepEqual(summary(await pull(topic, 0)).offsets, [0, 1, 2, 3, 4, 5, 6], "no expression is `*`");
      assert.deepEqual(summary(await pull(topic, 0, { subExpression: "TagC" })).offsets, [2, 6]);
      assert.deepEqual(summary(await pull(topic, 0, { subExpression: "TagD" })), {
        pullStatus: "NO_MATCHED_MSG",
        nextBeginOffset: 7,
        minOffset: 0,
        maxOffset: 7,
        offsets: [],
      });

      // One at a time: each pull resumes after the last message it examined, never before.
      const first = await pull(topic, 0, { subExpression: "TagA", maxMsgNums: 1 });
      assert.deepEqual([first.nextBeginOffset, summary(first).offsets], [1, [0]]);
      const second = await pull(topic, first.nextBeginOffset, { subExpression: "TagA", maxMsgNums: 1 });
      assert.deepEqual([second.nextBeginOffset, summary(second).offsets], [4, [3]]);
      const third = await pull(topic, second.nextBeginOffset, { subExpression: "TagA", maxMsgNums: 1 });
      assert.deepEqual([third.pullStatus, third.nextBeginOffset], ["NO_MATCHED_MSG", 7]);
      assert.equal((await pull(topic, 7, { subExpression: "TagA" })).pullStatus, "NO_NEW_MSG");

      expectError(await pullFrom(ctx.http, topic, "broker-a", 0, 0, { subExpression: "||" }), 400, "PARAMETER_ILLEGAL");
    });

    it("maxMsgNums is respected, across batches and across many index items", async () => {
      const topic = await oneQueue("MaxMsgNums");
      let n = 0;
      for (const size of [2, 3, 1, 4]) {
        const bodies = Array.from({ length: size }, () => `m${n++}`);
        ok(await sendTo(ctx.http, topic, "broker-a", 0, ...bodies));
      }
      const four = await pull(topic, 1, { maxMsgNums: 4 });
      assert.deepEqual(
        four.messages.map((m) => text(m.body)),
        ["m1", "m2", "m3", "m4"],
      );
      assert.equal(four.nextBeginOffset, 5);
      assert.deepEqual(summary(await pull(topic, 0, { maxMsgNums: 1 })).offsets, [0]);
      assert.equal((await pull(topic, 0)).messages.length, 10, "default 32");

      // 40 more single-message batches: reading walks more than one page of index items.
      for (let i = 0; i < 40; i++) ok(await sendTo(ctx.http, topic, "broker-a", 0, `m${n++}`));
      const page = await pull(topic, 0);
      assert.deepEqual(
        page.messages.map((m) => m.queueOffset),
        Array.from({ length: 32 }, (_, i) => i),
      );
      const rest = await pull(topic, page.nextBeginOffset, { maxMsgNums: 100 });
      assert.deepEqual(
        rest.messages.map((m) => text(m.body)),
        Array.from({ length: 18 }, (_, i) => `m${32 + i}`),
      );
      assert.equal(rest.nextBeginOffset, 50);
      const all = await pull(topic, 0, { maxMsgNums: 1024 });
      assert.equal(all.messages.length, 50);
      for (const bad of [0, 1025, 2.5]) {
        expectError(await pullFrom(ctx.http, topic, "broker-a", 0, 0, { maxMsgNums: bad }), 400, "PARAMETER_ILLEGAL");
      }
    });

    it("pulling deletes nothing: the same pull twice answers the same data", async () => {
      const topic = await oneQueue("Twice");
      ok(await sendTo(ctx.http, topic, "broker-a", 0, "a", "b", "c"));
      const statusBefore = await statusOf(ctx.http, topic);
      const first = await pull(topic, 0);
      const second = await pull(topic, 0);
      assert.equal(first.messages.length, 3);
      assert.deepEqual(second, first);
      assert.deepEqual(await pullFrom(ctx.http, topic, "broker-a", 0, 0, { consumerGroup: "other" }).then(ok), first);
      assert.deepEqual(await statusOf(ctx.http, topic), statusBefore);
    });
  });
}
