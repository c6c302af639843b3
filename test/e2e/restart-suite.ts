/**
 * @module E2E case: a restart (a new server on the same data folder, or the same tables and bucket)
 * keeps every topic, message, offset and heartbeat, and new sends go on at the next offsets.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import {
  type Api,
  b64,
  type ClusterAnswer,
  type OffsetRow,
  ok,
  type PullAnswer,
  type SendAnswer,
  type StatusRow,
  sortOffsets,
} from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { pullFrom, statusOf } from "./queues-suite.js";

interface Observed {
  topics: string[];
  status: StatusRow[];
  pulls: PullAnswer[];
  offsets: OffsetRow[][];
  consumers: string[];
  progress: unknown;
}

export function restartCases(mode: ServerMode): void {
  describe("restart", () => {
    const ctx = useTestServer(mode);

    it("keeps every topic, message, offset and heartbeat; sends go on at the next offsets", async () => {
      const topic = uniqueName("Durable");
      const deleted = uniqueName("Deleted");
      const groups = [uniqueName("G1"), uniqueName("G2")];
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 2, writeQueueNums: 2 }));
      ok(await ctx.http.put(`/topics/${deleted}`, { readQueueNums: 1, writeQueueNums: 1 }));
      ok(await ctx.http.delete(`/topics/${deleted}`));
      const large = b64(randomBytes(64 * 1024));
      for (const brokerName of ["broker-a", "broker-b"]) {
        for (const queueId of [0, 1]) {
          const messages = [
            { body: b64(`${brokerName}/${queueId}/0`), tags: "T", keys: ["k"], properties: { p: "v" } },
            { body: large },
          ];
          ok(await ctx.http.post("/send", { topic, brokerName, queueId, messages }));
          ok(await ctx.http.post("/send", { topic, brokerName, queueId, messages: [{ body: b64("third") }] }));
        }
      }
      ok(
        await ctx.http.put(`/offsets/${groups[0]}/${topic}`, {
          offsetTable: [
            { brokerName: "broker-a", queueId: 0, offset: 2 },
            { brokerName: "broker-b", queueId: 1, offset: 3 },
          ],
        }),
      );
      ok(
        await ctx.http.put(`/offsets/${groups[1]}/${topic}`, {
          offsetTable: [{ brokerName: "broker-a", queueId: 0, offset: 1 }],
        }),
      );
      ok(await ctx.http.post("/heartbeat", { clientId: "client-1", consumerDataSet: [{ groupName: groups[0] }] }));

      const observe = async (http: Api): Promise<Observed> => ({
        topics: ok(await http.get<{ topics: string[] }>("/topics")).topics.sort(),
        status: await statusOf(http, topic),
        pulls: await Promise.all(
          ["broker-a", "broker-b"].flatMap((b) => [0, 1].map(async (q) => ok(await pullFrom(http, topic, b, q)))),
        ),
        offsets: await Promise.all(
          groups.map(async (g) =>
            sortOffsets(ok(await http.get<{ offsetTable: OffsetRow[] }>(`/offsets/${g}/${topic}`)).offsetTable),
          ),
        ),
        consumers: ok(await http.get<{ consumerIdList: string[] }>(`/groups/${groups[0]}/consumers`)).consumerIdList,
        progress: ok(await http.get(`/groups/${groups[0]}/progress?topic=${topic}`)),
      });

      const before = await observe(ctx.http);
      assert.ok(before.topics.includes(topic) && !before.topics.includes(deleted));
      assert.deepEqual(
        before.status.map((r) => r.maxOffset),
        [3, 3, 3, 3],
      );
      assert.deepEqual(before.consumers, ["client-1"]);

      const oldUrl = ctx.server.url;
      await ctx.restart();
      assert.notEqual(ctx.server.url, oldUrl, "a new server (new port) on the same data");
      assert.deepEqual(await observe(ctx.http), before);
      const cluster = ok(await ctx.http.get<ClusterAnswer>("/cluster"));
      assert.deepEqual(
        Object.values(cluster.brokerAddrTable).map((b) => b.brokerAddrs),
        [{ "0": ctx.server.url }, { "0": ctx.server.url }],
        "the brokers re-registered at the new address",
      );

      const next = ok(
        await ctx.http.post<SendAnswer>("/send", {
          topic,
          brokerName: "broker-b",
          queueId: 0,
          messages: [{ body: b64("after restart") }],
        }),
      );
      assert.equal(next.queueOffset, 3);
      const all = ok(await pullFrom(ctx.http, topic, "broker-b", 0)).messages;
      assert.deepEqual(
        all.map((m) => m.queueOffset),
        [0, 1, 2, 3],
      );
      assert.equal(new Set(all.map((m) => m.msgId)).size, 4);
    });
  });
}
