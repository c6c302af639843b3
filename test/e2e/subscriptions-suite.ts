/**
 * @module E2E cases of the subscription definitions (docs/subscriptions.md), on every storage mode: create, read
 * (never the secret), list, replace, delete; and bad definitions, each a 400 `{code, message}` that stores nothing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expectError, ok } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";

interface Info {
  group: string;
  topic: string;
  target: Record<string, unknown>;
  batchSize: number;
  ordering: string;
  enableMsgTrace: boolean;
  customizedTraceTopic?: string;
  createdAt: number;
  updatedAt: number;
}

export function subscriptionCases(mode: ServerMode): void {
  describe("subscription definitions", () => {
    const ctx = useTestServer(mode);
    const topic = uniqueName("SubTopic");
    const group = uniqueName("SubGroup");
    const secret = "whsec-0123456789abcdef";
    const http = { type: "http", url: "http://127.0.0.1:9/hook", secret };
    const list = async () => ok(await ctx.http.get<{ subscriptions: Info[] }>("/subscriptions")).subscriptions;

    it("PUT creates with the defaults; GET answers it without the secret; the list has it", async () => {
      const created = ok(await ctx.http.put<Info>(`/subscriptions/${group}`, { topic, target: http }));
      assert.equal(created.group, group);
      assert.deepEqual(created.target, { type: "http", url: http.url, secretSet: true });
      assert.equal(created.batchSize, 10);
      assert.equal(created.ordering, "none");
      assert.equal(created.enableMsgTrace, false, "tracing is opt-in");
      assert.equal(created.customizedTraceTopic, undefined);
      const read = ok(await ctx.http.get<Info>(`/subscriptions/${group}`));
      assert.deepEqual(read, created);
      assert.ok(!JSON.stringify(read).includes(secret), "the secret is never answered");
      assert.deepEqual(
        (await list()).map((s) => s.group),
        [group],
      );
      const ofTopic = ok(await ctx.http.get<{ subscriptions: Info[] }>(`/subscriptions?topic=${topic}`));
      assert.deepEqual(
        ofTopic.subscriptions.map((s) => s.group),
        [group],
      );
      const ofOther = ok(await ctx.http.get<{ subscriptions: Info[] }>(`/subscriptions?topic=${topic}X`));
      assert.deepEqual(ofOther.subscriptions, []);
    });

    it("PUT again replaces it (a Lambda target, ordered, batch 32) and keeps createdAt", async () => {
      const before = ok(await ctx.http.get<Info>(`/subscriptions/${group}`));
      const functionArn = "arn:aws:lambda:eu-west-1:123456789012:function:orders-subscriber";
      const replaced = ok(
        await ctx.http.put<Info>(`/subscriptions/${group}`, {
          topic,
          filterExpression: { type: "SQL92", expression: "region = 'eu' AND amount > 10" },
          target: { type: "lambda", functionArn },
          batchSize: 32,
          ordering: "queue",
          enableMsgTrace: true,
          customizedTraceTopic: `${topic}Traces`,
        }),
      );
      assert.deepEqual([replaced.enableMsgTrace, replaced.customizedTraceTopic], [true, `${topic}Traces`]);
      assert.deepEqual(replaced.target, { type: "lambda", functionArn });
      assert.equal(replaced.batchSize, 32);
      assert.equal(replaced.createdAt, before.createdAt);
      assert.equal((await list()).length, 1);
    });

    it("bad definitions: 400 PARAMETER_ILLEGAL, nothing stored", async () => {
      const fresh = uniqueName("NeverSubscribed");
      const stored = ok(await ctx.http.get<Info>(`/subscriptions/${group}`));
      const bad: unknown[] = [
        undefined,
        {},
        { target: http },
        { topic },
        { topic: "%DLQ%x", target: http },
        { topic, target: { type: "http", url: "ftp://example.com/hook", secret } },
        { topic, target: { type: "http", url: "http://example.com/hook", secret } },
        { topic, target: { type: "http", url: "https://user:pw@example.com/hook", secret } },
        { topic, target: { type: "http", url: "https://example.com/hook", secret: "short" } },
        { topic, target: { type: "http", url: "https://example.com/hook" } },
        { topic, target: { type: "lambda", functionArn: "orders-subscriber" } },
        { topic, target: { type: "sqs", queueUrl: "x" } },
        { topic, target: http, batchSize: 0 },
        { topic, target: http, batchSize: 33 },
        { topic, target: http, batchSize: 2.5 },
        { topic, target: http, maxBatchingWindowMs: 300_001 },
        { topic, target: http, maxConcurrency: 0 },
        { topic, target: http, maxConcurrency: 101 },
        { topic, target: http, ordering: "shard" },
        { topic, target: http, maxReconsumeTimes: -1 },
        { topic, target: http, maxReconsumeTimes: 33 },
        { topic, target: http, timeoutMs: 999 },
        { topic, target: http, retryBackoff: { initialMs: 60_000, maxMs: 1000 } },
        { topic, target: http, filterExpression: { type: "XPATH", expression: "a" } },
        { topic, target: http, filterExpression: { type: "TAG", expression: 5 } },
        { topic, target: http, filterExpression: { type: "TAG", expression: "x".repeat(4097) } },
        { topic, target: http, filterExpression: { type: "SQL92", expression: "a > " } },
        { topic, target: http, filterExpression: { type: "SQL92", expression: "region = 'eu' AND" } },
        { topic, target: http, unknownField: 1 },
        { topic, target: http, enableMsgTrace: "yes" },
        { topic, target: http, enableMsgTrace: 1 },
        { topic, target: http, enableMsgTrace: null },
        { topic, target: http, enableMsgTrace: true, customizedTraceTopic: "%DLQ%x" },
        { topic, target: http, enableMsgTrace: true, customizedTraceTopic: "TBW102" },
        { topic, target: http, enableMsgTrace: true, customizedTraceTopic: "" },
        { topic, target: http, enableMsgTrace: true, customizedTraceTopic: 5 },
        { topic, target: http, enableMsgTrace: true, customizedTraceTopic: "t".repeat(128) },
        { topic, target: http, enableMsgTrace: true, customizedTraceTopic: topic },
      ];
      for (const body of bad) {
        for (const g of [fresh, group])
          expectError(await ctx.http.put(`/subscriptions/${g}`, body), 400, "PARAMETER_ILLEGAL");
      }
      expectError(await ctx.http.put("/subscriptions/bad%20group", { topic, target: http }), 400, "PARAMETER_ILLEGAL");
      expectError(await ctx.http.get(`/subscriptions/${fresh}`), 404, "SUBSCRIPTION_GROUP_NOT_EXIST");
      assert.deepEqual(ok(await ctx.http.get<Info>(`/subscriptions/${group}`)), stored, "the stored one is unchanged");
      assert.deepEqual(
        (await list()).map((s) => s.group),
        [group],
      );
    });

    it("DELETE ends it; deleting again or reading it is 404", async () => {
      ok(await ctx.http.delete(`/subscriptions/${group}`));
      expectError(await ctx.http.get(`/subscriptions/${group}`), 404, "SUBSCRIPTION_GROUP_NOT_EXIST");
      expectError(await ctx.http.delete(`/subscriptions/${group}`), 404, "SUBSCRIPTION_GROUP_NOT_EXIST");
      assert.deepEqual(await list(), []);
    });
  });
}
