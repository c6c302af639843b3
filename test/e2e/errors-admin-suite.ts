/**
 * @module E2E cases: refused admin, offset and client requests, unknown routes and wrong methods, and
 * malformed HTTP. Each answers a 4xx with `{code, message}` and writes nothing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { b64, expectError, ok, type RouteAnswer, writesNothing } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { ILLEGAL_TOPICS } from "./errors-data-suite.js";

export function adminErrorCases(mode: ServerMode): void {
  describe("refused admin, offset and client requests write nothing", () => {
    const ctx = useTestServer(mode);
    const topic = uniqueName("AdminErrors");
    const fresh = uniqueName("NeverCreated");
    const group = uniqueName("CG");
    const unchanged = <T>(request: () => Promise<T>) => writesNothing(ctx.http, [topic, fresh], request, [group]);

    it("setup: a topic with 2 queues on broker-a only", async () => {
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 2, writeQueueNums: 2, brokerNames: ["broker-a"] }));
    });

    it("PUT /topics with bad perm, queue numbers, brokers or fields: 400, for a new and an existing topic", async () => {
      const bad: unknown[] = [
        { perm: 16 },
        { perm: -1 },
        { perm: 1.5 },
        { perm: "6" },
        { readQueueNums: 0 },
        { readQueueNums: 1025 },
        { readQueueNums: -1 },
        { readQueueNums: 2.5 },
        { writeQueueNums: 0 },
        { writeQueueNums: 1025 },
        { writeQueueNums: "8" },
        { brokerNames: [] },
        { brokerNames: ["broker-x"] },
        { brokerNames: ["broker-a", "broker-x"] },
        { brokerNames: ["broker-b", "broker-b"] },
        { brokerNames: "broker-a" },
        { readQueueNums: 4, unknownField: true },
        [],
        "text",
      ];
      await unchanged(async () => {
        for (const name of [topic, fresh]) {
          for (const body of bad) {
            expectError(await ctx.http.put(`/topics/${name}`, body), 400, "PARAMETER_ILLEGAL");
          }
          const raw = {
            method: "PUT",
            path: `/topics/${name}`,
            body: "{",
            headers: { "content-type": "application/json" },
          };
          expectError(await ctx.http.raw(raw), 400, "PARAMETER_ILLEGAL");
        }
      });
      const route = ok(await ctx.http.get<RouteAnswer>(`/topics/${topic}/route`));
      assert.deepEqual(
        route.queueDatas.map((q) => [q.brokerName, q.readQueueNums, q.writeQueueNums, q.perm]),
        [["broker-a", 2, 2, 6]],
      );
    });

    it("illegal topic names on PUT and DELETE: 400; on route and status: 400 or 404", async () => {
      await unchanged(async () => {
        for (const name of ILLEGAL_TOPICS.filter((t) => t !== "")) {
          const path = `/topics/${encodeURIComponent(name)}`;
          expectError(await ctx.http.put(path, {}), 400, "PARAMETER_ILLEGAL");
          expectError(await ctx.http.delete(path), 400, "PARAMETER_ILLEGAL");
        }
        // A name that cannot exist may be refused as illegal or answered as unknown.
        for (const name of ["has space", "x".repeat(128)]) {
          const path = `/topics/${encodeURIComponent(name)}`;
          for (const answer of [await ctx.http.get(`${path}/route`), await ctx.http.get(`${path}/status`)]) {
            if (answer.status === 404) expectError(answer, 404, "TOPIC_NOT_EXIST");
            else expectError(answer, 400, "PARAMETER_ILLEGAL");
          }
        }
      });
    });

    it("DELETE of an unknown topic: 404 TOPIC_NOT_EXIST", async () => {
      await unchanged(async () => {
        expectError(await ctx.http.delete(`/topics/${fresh}`), 404, "TOPIC_NOT_EXIST");
      });
    });

    it("offset commits with negative, fractional or duplicate entries, or bad shapes: 400, nothing committed", async () => {
      const good = { brokerName: "broker-a", queueId: 1, offset: 1 };
      const bad: unknown[] = [
        { offsetTable: [good, { brokerName: "broker-a", queueId: 0, offset: -1 }] },
        { offsetTable: [good, { brokerName: "broker-a", queueId: -1, offset: 0 }] },
        { offsetTable: [good, { brokerName: "broker-a", queueId: 0, offset: 1.5 }] },
        { offsetTable: [good, { brokerName: "broker-a", queueId: 1, offset: 2 }] },
        { offsetTable: [good, { ...good, queueId: 0, extra: 1 }] },
        { offsetTable: [good, { brokerName: "broker-a", queueId: 0 }] },
        { offsetTable: good },
        { offsetTable: [good], extra: 1 },
        {},
        [],
      ];
      await unchanged(async () => {
        for (const body of bad) {
          expectError(await ctx.http.put(`/offsets/${group}/${topic}`, body), 400, "PARAMETER_ILLEGAL");
        }
        const illegal = { offsetTable: [good] };
        expectError(await ctx.http.put(`/offsets/bad%20group/${topic}`, illegal), 400, "PARAMETER_ILLEGAL");
        expectError(await ctx.http.put(`/offsets/${group}/bad%20topic`, illegal), 400, "PARAMETER_ILLEGAL");
        expectError(await ctx.http.get(`/offsets/bad%20group/${topic}`), 400, "PARAMETER_ILLEGAL");
      });
    });

    it("offset commits for an unknown topic or for queues outside the topic's route are refused", async () => {
      // RocketMQ 5's broker refuses them too (TOPIC_NOT_EXIST, invalid queueId): such an offset names no queue.
      const entry = (brokerName: string, queueId: number) => ({ offsetTable: [{ brokerName, queueId, offset: 1 }] });
      await unchanged(async () => {
        expectError(await ctx.http.put(`/offsets/${group}/${fresh}`, entry("broker-a", 0)), 404, "TOPIC_NOT_EXIST");
        for (const [brokerName, queueId] of [
          ["broker-x", 0],
          ["broker-b", 0],
          ["broker-a", 2],
        ] as const) {
          const answer = await ctx.http.put(`/offsets/${group}/${topic}`, entry(brokerName, queueId));
          assert.ok(answer.status >= 400 && answer.status < 500, `${brokerName}:${queueId} answered ${answer.status}`);
          expectError(answer, answer.status, (answer.body as { code: string }).code);
        }
      });
    });

    it("progress of an unknown topic: 404 TOPIC_NOT_EXIST; of an illegal group: 400", async () => {
      await unchanged(async () => {
        expectError(await ctx.http.get(`/groups/${group}/progress?topic=${fresh}`), 404, "TOPIC_NOT_EXIST");
        expectError(await ctx.http.get(`/groups/bad%20group/progress?topic=${topic}`), 400, "PARAMETER_ILLEGAL");
      });
    });

    it("bad heartbeats and unregisters: 400, and nobody is registered", async () => {
      const consumers = () => ctx.http.get<{ consumerIdList: string[] }>(`/groups/${group}/consumers`);
      const before = ok(await consumers());
      const sub = { topic, subString: "*" };
      const bad: unknown[] = [
        {},
        { clientId: "" },
        { clientId: "has space" },
        { clientId: 7 },
        { clientId: "c1", extra: 1 },
        { clientId: "c1", consumerDataSet: [{ groupName: "bad group" }] },
        { clientId: "c1", consumerDataSet: [{ groupName: group }, { groupName: "bad group" }] },
        { clientId: "c1", consumerDataSet: [{ groupName: group, messageModel: "NOPE" }] },
        { clientId: "c1", consumerDataSet: [{ groupName: group, subscriptionDataSet: [{ ...sub, topic: "a b" }] }] },
        { clientId: "c1", producerDataSet: [{ groupName: "" }], consumerDataSet: [{ groupName: group }] },
      ];
      for (const body of bad) expectError(await ctx.http.post("/heartbeat", body), 400, "PARAMETER_ILLEGAL");
      for (const body of [
        {},
        { clientId: "" },
        { clientId: "c1", consumerGroup: "bad group" },
        { clientId: "c1", x: 1 },
      ]) {
        expectError(await ctx.http.post("/unregister", body), 400, "PARAMETER_ILLEGAL");
      }
      expectError(await ctx.http.get("/groups/bad%20group/consumers"), 400, "PARAMETER_ILLEGAL");
      assert.deepEqual(ok(await consumers()), before);
    });

    it("unknown routes: 404 REQUEST_CODE_NOT_SUPPORTED; wrong methods: 405", async () => {
      await unchanged(async () => {
        for (const path of ["/", "/nope", "/topics/x/route/extra", "/topics/", "/send/x", "/groups/g"]) {
          expectError(await ctx.http.get(path), 404, "REQUEST_CODE_NOT_SUPPORTED");
        }
        expectError(await ctx.http.post("/nope", {}), 404, "REQUEST_CODE_NOT_SUPPORTED");
        const wrong: [string, string][] = [
          ["DELETE", "/health"],
          ["POST", "/cluster"],
          ["POST", `/topics/${topic}/route`],
          ["GET", "/send"],
          ["PUT", "/pull"],
          ["GET", "/heartbeat"],
          ["POST", `/topics/${topic}`],
          ["PATCH", `/topics/${topic}`],
          ["DELETE", `/offsets/${group}/${topic}`],
          ["POST", "/topics"],
        ];
        for (const [method, path] of wrong) {
          const body = method === "GET" ? {} : { body: "{}", headers: { "content-type": "application/json" } };
          const answer = await ctx.http.raw({ method, path, ...body });
          assert.equal(answer.status, 405, `${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
          expectError(answer, 405, "REQUEST_CODE_NOT_SUPPORTED");
        }
      });
    });

    it("a malformed percent-encoding in a path is bad input (400), not a server error", async () => {
      await unchanged(async () => {
        expectError(await ctx.http.get("/topics/%E0%A4%A/route"), 400, "PARAMETER_ILLEGAL");
        expectError(await ctx.http.put("/topics/bad%zz", {}), 400, "PARAMETER_ILLEGAL");
        expectError(await ctx.http.get(`/offsets/%/${topic}`), 400, "PARAMETER_ILLEGAL");
      });
    });

    it("a request over the 6 MiB request limit answers 413 (each time, the connection staying usable)", async () => {
      const huge = JSON.stringify({ topic, messages: [{ body: b64(Buffer.alloc(5 * 1024 * 1024)) }] });
      await unchanged(async () => {
        for (let i = 0; i < 4; i++) {
          const answer = await ctx.http
            .raw({ method: "POST", path: "/send", body: huge, headers: { "content-type": "application/json" } })
            .catch((err: unknown) =>
              assert.fail(`attempt ${i}: the request failed: ${String((err as Error).cause ?? err)}`),
            );
          expectError(answer, 413, "MESSAGE_BODY_TOO_LARGE");
          ok(await ctx.http.get("/health"));
        }
      });
    });
  });
}
