/**
 * @module E2E cases that need their own server config: a read-only broker (broker-b `perm: 4`) and
 * auto-create turned off.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  b64,
  type ClusterAnswer,
  expectError,
  ok,
  type RouteAnswer,
  type SendAnswer,
  text,
  writesNothing,
} from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { pullFrom, sendTo, statusOf } from "./queues-suite.js";

const READ_ONLY_B = {
  brokers: [
    { brokerName: "broker-a", perm: 6 },
    { brokerName: "broker-b", perm: 4 },
  ],
};

export function configCases(mode: ServerMode): void {
  describe("a read-only broker (broker-b perm 4)", () => {
    const ctx = useTestServer(mode);
    const topic = uniqueName("OnReadOnly");

    it("refuses sends to broker-b with 403 NO_PERMISSION and stores nothing; pulls from it still work", async () => {
      // Messages stored while broker-b was writable, then a restart with broker-b read-only.
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 2, writeQueueNums: 2 }));
      ok(await sendTo(ctx.http, topic, "broker-b", 0, "b0-0", "b0-1"));
      await ctx.restart(READ_ONLY_B);

      const cluster = ok(await ctx.http.get<ClusterAnswer>("/cluster"));
      assert.deepEqual(cluster.clusterAddrTable, { DefaultCluster: ["broker-a", "broker-b"] }, "still live");
      const route = ok(await ctx.http.get<RouteAnswer>(`/topics/${topic}/route`));
      assert.deepEqual(
        route.queueDatas.map((q) => [q.brokerName, q.perm]),
        [
          ["broker-a", 6],
          ["broker-b", 4],
        ],
        "the broker's permission is ANDed into the topic's",
      );

      const before = await statusOf(ctx.http, topic);
      await writesNothing(ctx.http, [topic], async () => {
        const refused = expectError(await sendTo(ctx.http, topic, "broker-b", 0, "x"), 403, "NO_PERMISSION");
        assert.match(refused.message, /broker-b/);
        expectError(await sendTo(ctx.http, topic, "broker-b", 1, "x"), 403, "NO_PERMISSION");
      });
      assert.equal(before.find((r) => r.brokerName === "broker-b" && r.queueId === 0)?.maxOffset, 2);

      const pulled = ok(await pullFrom(ctx.http, topic, "broker-b", 0));
      assert.deepEqual(
        pulled.messages.map((m) => text(m.body)),
        ["b0-0", "b0-1"],
      );
      assert.equal(ok(await pullFrom(ctx.http, topic, "broker-b", 1)).pullStatus, "NO_NEW_MSG");
    });

    it("unaddressed sends only pick broker-a", async () => {
      for (let i = 0; i < 12; i++) {
        const sent = ok(await ctx.http.post<SendAnswer>("/send", { topic, messages: [{ body: b64(`r${i}`) }] }));
        assert.equal(sent.messageQueue.brokerName, "broker-a");
      }
    });

    it("auto-create puts the new topic on writable brokers only; PUT /topics may still name broker-b", async () => {
      const auto = uniqueName("AutoOnReadOnly");
      const sent = ok(await ctx.http.post<SendAnswer>("/send", { topic: auto, messages: [{ body: b64("x") }] }));
      assert.equal(sent.messageQueue.brokerName, "broker-a");
      const route = ok(await ctx.http.get<RouteAnswer>(`/topics/${auto}/route`));
      assert.deepEqual(
        route.queueDatas.map((q) => [q.brokerName, q.readQueueNums, q.writeQueueNums, q.perm]),
        [["broker-a", 4, 4, 6]],
      );

      const admin = uniqueName("AdminOnReadOnly");
      const put = ok(await ctx.http.put<RouteAnswer>(`/topics/${admin}`, { brokerNames: ["broker-b"] }));
      assert.deepEqual(
        put.queueDatas.map((q) => [q.brokerName, q.perm]),
        [["broker-b", 4]],
      );
      expectError(await sendTo(ctx.http, admin, "broker-b", 0, "x"), 403, "NO_PERMISSION");
      expectError(await ctx.http.post("/send", { topic: admin, messages: [{ body: b64("x") }] }), 403, "NO_PERMISSION");
    });
  });

  describe("auto-create turned off", () => {
    const ctx = useTestServer(mode, { autoCreateTopic: false });

    it("a send to an unknown topic answers 404 TOPIC_NOT_EXIST and creates nothing", async () => {
      const topic = uniqueName("NoAuto");
      await writesNothing(ctx.http, [topic], async () => {
        expectError(await ctx.http.post("/send", { topic, messages: [{ body: b64("x") }] }), 404, "TOPIC_NOT_EXIST");
        expectError(await sendTo(ctx.http, topic, "broker-a", 0, "x"), 404, "TOPIC_NOT_EXIST");
      });
      expectError(await ctx.http.get(`/topics/${topic}/route`), 404, "TOPIC_NOT_EXIST");
      // PUT /topics still creates it, and then sends work.
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 1, writeQueueNums: 1 }));
      assert.equal(ok(await sendTo(ctx.http, topic, "broker-b", 0, "y")).queueOffset, 0);
    });
  });
}
