/**
 * @module E2E cases: every endpoint of API.md answers in the documented shape, with the data it should
 * hold (name server, admin, data plane, clients, offsets, progress, and the `POST /unregister` extension).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type {
  ClusterAnswer,
  OffsetRow,
  ProgressRow,
  PullAnswer,
  RouteAnswer,
  SendAnswer,
  StatusRow,
} from "../support/http.js";
import { b64, expectError, ok, sortOffsets, text } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";

const PULLED_KEYS = [
  "body",
  "bornTimestamp",
  "brokerName",
  "keys",
  "msgId",
  "properties",
  "queueId",
  "queueOffset",
  "reconsumeTimes",
  "storeTimestamp",
  "tags",
  "topic",
];

export function endpointCases(mode: ServerMode): void {
  describe("every endpoint answers in the documented shape", () => {
    const ctx = useTestServer(mode);

    it("GET /health", async () => {
      const answer = await ctx.http.get("/health");
      assert.deepEqual(ok(answer), { status: "ok" });
      assert.match(answer.headers.get("content-type") ?? "", /^application\/json/);
    });

    it("GET /cluster lists broker-a and broker-b in DefaultCluster at the server's URL", async () => {
      const url = ctx.server.url;
      assert.deepEqual(ok(await ctx.http.get<ClusterAnswer>("/cluster")), {
        brokerAddrTable: {
          "broker-a": { cluster: "DefaultCluster", brokerName: "broker-a", brokerAddrs: { "0": url } },
          "broker-b": { cluster: "DefaultCluster", brokerName: "broker-b", brokerAddrs: { "0": url } },
        },
        clusterAddrTable: { DefaultCluster: ["broker-a", "broker-b"] },
      });
    });

    it("PUT /topics answers the route; GET route, GET /topics, status and DELETE agree", async () => {
      const topic = uniqueName("Endpoints");
      const url = ctx.server.url;
      const expected: RouteAnswer = {
        queueDatas: ["broker-a", "broker-b"].map((brokerName) => ({
          brokerName,
          readQueueNums: 8,
          writeQueueNums: 8,
          perm: 6,
          topicSysFlag: 0,
        })),
        brokerDatas: ["broker-a", "broker-b"].map((brokerName) => ({
          cluster: "DefaultCluster",
          brokerName,
          brokerAddrs: { "0": url },
        })),
      };
      assert.deepEqual(ok(await ctx.http.put<RouteAnswer>(`/topics/${topic}`)), expected, "defaults: 8/8, perm 6");
      assert.deepEqual(ok(await ctx.http.get<RouteAnswer>(`/topics/${topic}/route`)), expected);
      assert.ok(ok(await ctx.http.get<{ topics: string[] }>("/topics")).topics.includes(topic));

      const status = ok(await ctx.http.get<{ queues: StatusRow[] }>(`/topics/${topic}/status`)).queues;
      assert.deepEqual(
        status,
        ["broker-a", "broker-b"].flatMap((brokerName) =>
          Array.from({ length: 8 }, (_, queueId) => ({
            brokerName,
            queueId,
            minOffset: 0,
            maxOffset: 0,
            lastUpdateTimestamp: 0,
          })),
        ),
      );

      ok(await ctx.http.delete(`/topics/${topic}`));
      assert.ok(!ok(await ctx.http.get<{ topics: string[] }>("/topics")).topics.includes(topic));
      expectError(await ctx.http.get(`/topics/${topic}/route`), 404, "TOPIC_NOT_EXIST");
      expectError(await ctx.http.get(`/topics/${topic}/status`), 404, "TOPIC_NOT_EXIST");
    });

    it("POST /send and POST /pull: the documented fields, and status shows the stored message", async () => {
      const topic = uniqueName("SendPull");
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 2, writeQueueNums: 2 }));
      const queue = { topic, brokerName: "broker-b", queueId: 1 };
      const message = { body: b64("hello"), tags: "TagA", keys: ["k1", "k2"], properties: { color: "red" } };
      const sent = ok(await ctx.http.post<SendAnswer>("/send", { producerGroup: "PG", ...queue, messages: [message] }));
      assert.equal(sent.sendStatus, "SEND_OK");
      assert.deepEqual(sent.messageQueue, { topic, brokerName: "broker-b", queueId: 1 });
      assert.equal(sent.queueOffset, 0);
      assert.equal(sent.msgIds.length, 1);
      assert.match(sent.msgIds[0] ?? "", /^[0-9A-F]{32}$/, "RocketMQ's 32 hex digit unique id");

      const pulled = ok(await ctx.http.post<PullAnswer>("/pull", { consumerGroup: "CG", ...queue, queueOffset: 0 }));
      assert.equal(pulled.pullStatus, "FOUND");
      assert.deepEqual([pulled.nextBeginOffset, pulled.minOffset, pulled.maxOffset], [1, 0, 1]);
      const [m] = pulled.messages;
      assert.ok(m);
      for (const key of PULLED_KEYS) assert.ok(key in m, `pulled message has ${key}`);
      assert.equal(m.msgId, sent.msgIds[0]);
      assert.deepEqual(
        [m.topic, m.brokerName, m.queueId, m.queueOffset, m.tags, m.keys, text(m.body), m.reconsumeTimes],
        [topic, "broker-b", 1, 0, "TagA", ["k1", "k2"], "hello", 0],
      );
      assert.deepEqual(m.properties, { color: "red", UNIQ_KEY: sent.msgIds[0] });
      assert.ok(m.bornTimestamp > 0 && m.storeTimestamp >= m.bornTimestamp);

      const status = ok(await ctx.http.get<{ queues: StatusRow[] }>(`/topics/${topic}/status`)).queues;
      const row = status.find((r) => r.brokerName === "broker-b" && r.queueId === 1);
      assert.deepEqual(row, {
        brokerName: "broker-b",
        queueId: 1,
        minOffset: 0,
        maxOffset: 1,
        lastUpdateTimestamp: m.storeTimestamp,
      });
      assert.equal(status.filter((r) => r.maxOffset > 0).length, 1, "only that queue holds a message");
    });

    it("POST /heartbeat, GET /groups/{g}/consumers and POST /unregister", async () => {
      const group = uniqueName("CG");
      const other = uniqueName("CG");
      const consumerData = (groupName: string) => ({
        groupName,
        consumeType: "CONSUME_PASSIVELY",
        messageModel: "CLUSTERING",
        consumeFromWhere: "CONSUME_FROM_LAST_OFFSET",
        subscriptionDataSet: [{ topic: "T", subString: "*" }],
      });
      for (const clientId of ["10.0.0.2@2", "10.0.0.1@1"]) {
        ok(
          await ctx.http.post("/heartbeat", { clientId, producerDataSet: [], consumerDataSet: [consumerData(group)] }),
        );
      }
      ok(await ctx.http.post("/heartbeat", { clientId: "10.0.0.3@3", producerDataSet: [{ groupName: group }] }));
      ok(await ctx.http.post("/heartbeat", { clientId: "10.0.0.4@4", consumerDataSet: [consumerData(other)] }));

      const consumers = ok(await ctx.http.get<{ consumerIdList: string[] }>(`/groups/${group}/consumers`));
      assert.deepEqual(consumers.consumerIdList, ["10.0.0.1@1", "10.0.0.2@2"], "live consumers, not producers");
      assert.deepEqual(
        ok(await ctx.http.get<{ consumerIdList: string[] }>(`/groups/${other}/consumers`)).consumerIdList,
        ["10.0.0.4@4"],
      );

      ok(await ctx.http.post("/unregister", { clientId: "10.0.0.1@1", consumerGroup: group }));
      assert.deepEqual(
        ok(await ctx.http.get<{ consumerIdList: string[] }>(`/groups/${group}/consumers`)).consumerIdList,
        ["10.0.0.2@2"],
        "unregister removes the consumer at once",
      );
      assert.deepEqual(
        ok(await ctx.http.get<{ consumerIdList: string[] }>(`/groups/${uniqueName("empty")}/consumers`)).consumerIdList,
        [],
      );
    });

    it("GET/PUT /offsets and GET /groups/{g}/progress?topic=", async () => {
      const topic = uniqueName("Offsets");
      const group = uniqueName("CG");
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 2, writeQueueNums: 2, brokerNames: ["broker-a"] }));
      const bodies = ["m0", "m1", "m2", "m3"].map((s) => ({ body: b64(s) }));
      ok(await ctx.http.post("/send", { topic, brokerName: "broker-a", queueId: 0, messages: bodies }));
      const pulled = ok(
        await ctx.http.post<PullAnswer>("/pull", {
          consumerGroup: group,
          topic,
          brokerName: "broker-a",
          queueId: 0,
          queueOffset: 0,
        }),
      );

      assert.deepEqual(ok(await ctx.http.get(`/offsets/${group}/${topic}`)), { offsetTable: [] });
      const table: OffsetRow[] = [
        { brokerName: "broker-a", queueId: 1, offset: 0 },
        { brokerName: "broker-a", queueId: 0, offset: 3 },
      ];
      ok(await ctx.http.put(`/offsets/${group}/${topic}`, { offsetTable: table }));
      const read = ok(await ctx.http.get<{ offsetTable: OffsetRow[] }>(`/offsets/${group}/${topic}`));
      assert.deepEqual(sortOffsets(read.offsetTable), sortOffsets(table));

      const rows = ok(await ctx.http.get<{ rows: ProgressRow[] }>(`/groups/${group}/progress?topic=${topic}`)).rows;
      const sorted = [...rows].sort((a, b) => a.queueId - b.queueId);
      assert.deepEqual(sorted, [
        {
          topic,
          brokerName: "broker-a",
          queueId: 0,
          brokerOffset: 4,
          consumerOffset: 3,
          diff: 1,
          lastTimestamp: pulled.messages[2]?.storeTimestamp,
        },
        { topic, brokerName: "broker-a", queueId: 1, brokerOffset: 0, consumerOffset: 0, diff: 0, lastTimestamp: 0 },
      ]);

      // A later commit moves the offset (last commit wins) and leaves the other queue's as it was.
      ok(
        await ctx.http.put(`/offsets/${group}/${topic}`, {
          offsetTable: [{ brokerName: "broker-a", queueId: 0, offset: 4 }],
        }),
      );
      const again = ok(await ctx.http.get<{ offsetTable: OffsetRow[] }>(`/offsets/${group}/${topic}`));
      assert.deepEqual(sortOffsets(again.offsetTable), [
        { brokerName: "broker-a", queueId: 0, offset: 4 },
        { brokerName: "broker-a", queueId: 1, offset: 0 },
      ]);
    });

    it("GET /groups/{g}/progress without topic (extension): every topic the group committed on, deleted ones skipped", async () => {
      const group = uniqueName("CG");
      const [kept, dropped] = [uniqueName("Kept"), uniqueName("Dropped")];
      for (const topic of [kept, dropped]) {
        ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-b"] }));
        ok(
          await ctx.http.put(`/offsets/${group}/${topic}`, {
            offsetTable: [{ brokerName: "broker-b", queueId: 0, offset: 0 }],
          }),
        );
      }
      const topicsOf = async () =>
        ok(await ctx.http.get<{ rows: ProgressRow[] }>(`/groups/${group}/progress`))
          .rows.map((r) => r.topic)
          .sort();
      assert.deepEqual(await topicsOf(), [dropped, kept].sort());
      ok(await ctx.http.delete(`/topics/${dropped}`));
      assert.deepEqual(await topicsOf(), [kept], "a deleted topic must not make the whole group's progress fail");
    });
  });
}
