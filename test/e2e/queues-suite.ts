/**
 * @module E2E cases: topics spread over brokers and queue numbers (the seed's cases): per-broker
 * QueueData, queue ids from 0 on every broker, read/write queue numbers that differ, topic permissions,
 * two consumer groups on one queue, and a topic deleted and created again.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type Api,
  b64,
  expectError,
  ok,
  type ProgressRow,
  type PullAnswer,
  type RouteAnswer,
  type SendAnswer,
  type StatusRow,
  text,
  writesNothing,
} from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";

export const sendTo = (http: Api, topic: string, brokerName: string, queueId: number, ...bodies: string[]) =>
  http.post<SendAnswer>("/send", { topic, brokerName, queueId, messages: bodies.map((b) => ({ body: b64(b) })) });

export const pullFrom = (
  http: Api,
  topic: string,
  brokerName: string,
  queueId: number,
  queueOffset = 0,
  extra: { consumerGroup?: string; maxMsgNums?: number; subExpression?: string } = {},
) => http.post<PullAnswer>("/pull", { consumerGroup: "CG", topic, brokerName, queueId, queueOffset, ...extra });

export const statusOf = async (http: Api, topic: string): Promise<StatusRow[]> =>
  ok(await http.get<{ queues: StatusRow[] }>(`/topics/${topic}/status`)).queues;

const queueData = (brokerName: string, readQueueNums: number, writeQueueNums: number, perm = 6) => ({
  brokerName,
  readQueueNums,
  writeQueueNums,
  perm,
  topicSysFlag: 0,
});

export function queueCases(mode: ServerMode): void {
  describe("topics over brokers and queues", () => {
    const ctx = useTestServer(mode);

    it("2 queues on broker-a and 3 on broker-b: the second PUT leaves broker-a's QueueData", async () => {
      const topic = uniqueName("TwoThree");
      const first = ok(
        await ctx.http.put<RouteAnswer>(`/topics/${topic}`, {
          readQueueNums: 2,
          writeQueueNums: 2,
          brokerNames: ["broker-a"],
        }),
      );
      assert.deepEqual(first.queueDatas, [queueData("broker-a", 2, 2)]);
      assert.deepEqual(
        first.brokerDatas.map((b) => b.brokerName),
        ["broker-a"],
      );
      const second = ok(
        await ctx.http.put<RouteAnswer>(`/topics/${topic}`, {
          readQueueNums: 3,
          writeQueueNums: 3,
          brokerNames: ["broker-b"],
        }),
      );
      assert.deepEqual(second.queueDatas, [queueData("broker-a", 2, 2), queueData("broker-b", 3, 3)]);
      assert.deepEqual(ok(await ctx.http.get<RouteAnswer>(`/topics/${topic}/route`)), second);
      const status = await statusOf(ctx.http, topic);
      assert.deepEqual(
        status.map((r) => `${r.brokerName}:${r.queueId}`),
        ["broker-a:0", "broker-a:1", "broker-b:0", "broker-b:1", "broker-b:2"],
      );

      // Queue ids start at 0 on every broker, and each (broker, queue) has its own offsets.
      const b0 = ok(await sendTo(ctx.http, topic, "broker-b", 0, "on b0"));
      const a0 = ok(await sendTo(ctx.http, topic, "broker-a", 0, "on a0"));
      assert.deepEqual([b0.queueOffset, a0.queueOffset], [0, 0]);
      assert.deepEqual(b0.messageQueue, { topic, brokerName: "broker-b", queueId: 0 });
      ok(await sendTo(ctx.http, topic, "broker-b", 2, "on b2"));
      expectError(await sendTo(ctx.http, topic, "broker-b", 3, "no b3"), 400, "PARAMETER_ILLEGAL");
      expectError(await sendTo(ctx.http, topic, "broker-a", 2, "no a2"), 400, "PARAMETER_ILLEGAL");
      const onB0 = ok(await pullFrom(ctx.http, topic, "broker-b", 0)).messages.map((m) => text(m.body));
      const onA0 = ok(await pullFrom(ctx.http, topic, "broker-a", 0)).messages.map((m) => text(m.body));
      assert.deepEqual([onA0, onB0], [["on a0"], ["on b0"]]);
    });

    it("7 queues on broker-a and 1 on broker-b", async () => {
      const topic = uniqueName("SevenOne");
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 7, writeQueueNums: 7, brokerNames: ["broker-a"] }));
      const route = ok(
        await ctx.http.put<RouteAnswer>(`/topics/${topic}`, {
          readQueueNums: 1,
          writeQueueNums: 1,
          brokerNames: ["broker-b"],
        }),
      );
      assert.deepEqual(route.queueDatas, [queueData("broker-a", 7, 7), queueData("broker-b", 1, 1)]);
      ok(await sendTo(ctx.http, topic, "broker-a", 6, "a6"));
      ok(await sendTo(ctx.http, topic, "broker-b", 0, "b0"));
      await writesNothing(ctx.http, [topic], async () => {
        expectError(await sendTo(ctx.http, topic, "broker-a", 7, "x"), 400, "PARAMETER_ILLEGAL");
        expectError(await sendTo(ctx.http, topic, "broker-b", 1, "x"), 400, "PARAMETER_ILLEGAL");
      });
      const status = await statusOf(ctx.http, topic);
      assert.equal(status.length, 8);
      assert.deepEqual(
        status.filter((r) => r.maxOffset > 0).map((r) => `${r.brokerName}:${r.queueId}`),
        ["broker-a:6", "broker-b:0"],
      );
      // Unaddressed sends only pick queues that exist.
      for (let i = 0; i < 16; i++) {
        const q = ok(
          await ctx.http.post<SendAnswer>("/send", { topic, messages: [{ body: b64(`r${i}`) }] }),
        ).messageQueue;
        assert.ok(
          q.brokerName === "broker-a" ? q.queueId < 7 : q.brokerName === "broker-b" && q.queueId === 0,
          JSON.stringify(q),
        );
      }
    });

    it("8 write / 4 read: queues 4-7 take sends but cannot be pulled until readQueueNums is 8", async () => {
      const topic = uniqueName("W8R4");
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 4, writeQueueNums: 8, brokerNames: ["broker-a"] }));
      for (let q = 0; q < 8; q++)
        assert.equal(ok(await sendTo(ctx.http, topic, "broker-a", q, `q${q}-0`, `q${q}-1`)).queueOffset, 0);
      for (let q = 0; q < 4; q++)
        assert.deepEqual(
          ok(await pullFrom(ctx.http, topic, "broker-a", q)).messages.map((m) => text(m.body)),
          [`q${q}-0`, `q${q}-1`],
        );
      for (let q = 4; q < 8; q++) expectError(await pullFrom(ctx.http, topic, "broker-a", q), 400, "PARAMETER_ILLEGAL");
      const status = await statusOf(ctx.http, topic);
      assert.deepEqual(
        status.map((r) => r.maxOffset),
        [2, 2, 2, 2, 2, 2, 2, 2],
        "status covers max(read, write) queues",
      );

      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 8, writeQueueNums: 8, brokerNames: ["broker-a"] }));
      for (let q = 4; q < 8; q++) {
        const pulled = ok(await pullFrom(ctx.http, topic, "broker-a", q));
        assert.equal(pulled.pullStatus, "FOUND");
        assert.deepEqual(
          pulled.messages.map((m) => [m.queueOffset, text(m.body)]),
          [
            [0, `q${q}-0`],
            [1, `q${q}-1`],
          ],
        );
      }
    });

    it("4 write / 8 read: sends to queue 4+ are refused, pulls of 4-7 answer NO_NEW_MSG", async () => {
      const topic = uniqueName("W4R8");
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 8, writeQueueNums: 4, brokerNames: ["broker-b"] }));
      ok(await sendTo(ctx.http, topic, "broker-b", 3, "q3"));
      await writesNothing(ctx.http, [topic], async () => {
        for (let q = 4; q < 8; q++)
          expectError(await sendTo(ctx.http, topic, "broker-b", q, "x"), 400, "PARAMETER_ILLEGAL");
      });
      for (let q = 4; q < 8; q++) {
        const pulled = ok(await pullFrom(ctx.http, topic, "broker-b", q));
        assert.deepEqual(pulled, {
          pullStatus: "NO_NEW_MSG",
          nextBeginOffset: 0,
          minOffset: 0,
          maxOffset: 0,
          messages: [],
        });
      }
      for (let i = 0; i < 12; i++) {
        const q = ok(await ctx.http.post<SendAnswer>("/send", { topic, messages: [{ body: b64("x") }] })).messageQueue;
        assert.ok(q.queueId < 4, `an unaddressed send picked write queue ${q.queueId}`);
      }
    });

    it("two consumer groups read one queue independently", async () => {
      const topic = uniqueName("TwoGroups");
      const [g1, g2] = [uniqueName("G1"), uniqueName("G2")];
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] }));
      ok(await sendTo(ctx.http, topic, "broker-a", 0, "m0", "m1", "m2", "m3", "m4"));
      const p1 = ok(await pullFrom(ctx.http, topic, "broker-a", 0, 0, { consumerGroup: g1, maxMsgNums: 3 }));
      const p2 = ok(await pullFrom(ctx.http, topic, "broker-a", 0, 0, { consumerGroup: g2 }));
      assert.deepEqual([p1.messages.length, p1.nextBeginOffset, p2.messages.length, p2.nextBeginOffset], [3, 3, 5, 5]);
      const commit = (group: string, offset: number) =>
        ctx.http.put(`/offsets/${group}/${topic}`, { offsetTable: [{ brokerName: "broker-a", queueId: 0, offset }] });
      ok(await commit(g1, p1.nextBeginOffset));
      ok(await commit(g2, p2.nextBeginOffset));
      assert.deepEqual(ok(await ctx.http.get(`/offsets/${g1}/${topic}`)), {
        offsetTable: [{ brokerName: "broker-a", queueId: 0, offset: 3 }],
      });
      assert.deepEqual(ok(await ctx.http.get(`/offsets/${g2}/${topic}`)), {
        offsetTable: [{ brokerName: "broker-a", queueId: 0, offset: 5 }],
      });
      const progress = async (g: string) =>
        ok(await ctx.http.get<{ rows: ProgressRow[] }>(`/groups/${g}/progress?topic=${topic}`)).rows.map((r) => [
          r.brokerOffset,
          r.consumerOffset,
          r.diff,
        ]);
      assert.deepEqual(await progress(g1), [[5, 3, 2]]);
      assert.deepEqual(await progress(g2), [[5, 5, 0]]);
      const rest = ok(await pullFrom(ctx.http, topic, "broker-a", 0, 3, { consumerGroup: g1 }));
      assert.deepEqual(
        rest.messages.map((m) => text(m.body)),
        ["m3", "m4"],
      );
      assert.equal(
        ok(await pullFrom(ctx.http, topic, "broker-a", 0, 5, { consumerGroup: g2 })).pullStatus,
        "NO_NEW_MSG",
      );
    });

    it("a topic with perm 4 (set by PUT) refuses sends and still serves pulls; perm 2 refuses pulls", async () => {
      const topic = uniqueName("ReadOnlyTopic");
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 2, writeQueueNums: 2 }));
      ok(await sendTo(ctx.http, topic, "broker-a", 0, "before"));
      const route = ok(
        await ctx.http.put<RouteAnswer>(`/topics/${topic}`, { readQueueNums: 2, writeQueueNums: 2, perm: 4 }),
      );
      assert.deepEqual(
        route.queueDatas.map((q) => q.perm),
        [4, 4],
      );
      await writesNothing(ctx.http, [topic], async () => {
        expectError(await sendTo(ctx.http, topic, "broker-a", 0, "x"), 403, "NO_PERMISSION");
        expectError(await sendTo(ctx.http, topic, "broker-b", 1, "x"), 403, "NO_PERMISSION");
        expectError(await ctx.http.post("/send", { topic, messages: [{ body: b64("x") }] }), 403, "NO_PERMISSION");
      });
      assert.deepEqual(
        ok(await pullFrom(ctx.http, topic, "broker-a", 0)).messages.map((m) => text(m.body)),
        ["before"],
      );

      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 2, writeQueueNums: 2, perm: 2 }));
      expectError(await pullFrom(ctx.http, topic, "broker-a", 0), 403, "NO_PERMISSION");
      ok(await sendTo(ctx.http, topic, "broker-a", 0, "after"));
    });

    it("a topic deleted and created again goes on at the next offsets (no offset names two messages)", async () => {
      const topic = uniqueName("Recreated");
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] }));
      ok(await sendTo(ctx.http, topic, "broker-a", 0, "old0", "old1"));
      ok(await ctx.http.delete(`/topics/${topic}`));
      expectError(await pullFrom(ctx.http, topic, "broker-a", 0), 404, "TOPIC_NOT_EXIST");
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] }));
      assert.equal(ok(await sendTo(ctx.http, topic, "broker-a", 0, "new2")).queueOffset, 2);
      const all = ok(await pullFrom(ctx.http, topic, "broker-a", 0)).messages;
      assert.deepEqual(
        all.map((m) => [m.queueOffset, text(m.body)]),
        [
          [0, "old0"],
          [1, "old1"],
          [2, "new2"],
        ],
      );
    });
  });
}
