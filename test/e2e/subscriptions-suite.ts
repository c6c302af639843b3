/**
 * @module E2E cases of the subscription definitions (docs/subscriptions.md), on every storage mode: create, read
 * (never the secret), list, replace, delete; and bad definitions, each a 400 `{code, message}` that stores nothing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ROUTES_TABLE } from "../../lib/broker/store/index.js";
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

    it("the signing secret is sealed at rest: not in the stored item; a secret stored in clear still reads", async () => {
      const routes = ctx.server.server.storage.table(ROUTES_TABLE);
      const item = await routes.get({ pk: "subscriptions", sk: group });
      assert.ok(item !== undefined);
      assert.ok(!JSON.stringify(item).includes(secret), "the secret is nowhere in the item");
      assert.match(String(item.sealedSecret), /^v1:/);
      // An item written before secrets were sealed (the secret in the definition) still opens for delivery.
      const legacy = uniqueName("SubLegacy");
      const definition = { ...JSON.parse(String(item.definition)), target: http };
      const { sealedSecret: _sealed, ...clear } = item;
      await routes.put({ ...clear, sk: legacy, definition: JSON.stringify(definition) });
      const read = await ctx.server.server.context.broker.subscriptions.get(legacy);
      assert.deepEqual(read?.target, http);
      await routes.delete({ pk: "subscriptions", sk: legacy });
    });

    it("a sealed secret that does not open here (another group's) still reads, lists, saves again and deletes", async () => {
      const routes = ctx.server.server.storage.table(ROUTES_TABLE);
      const { subscriptions } = ctx.server.server.context.broker;
      const item = await routes.get({ pk: "subscriptions", sk: group });
      assert.ok(item !== undefined);
      // Sealed with `group` as associated data: under another group it does not open (as under another seal key).
      const copy = uniqueName("SubCopied");
      await routes.put({ ...item, sk: copy });
      const read = await subscriptions.get(copy);
      assert.equal(read?.target.type === "http" ? read.target.secret : undefined, "", "no secret to sign with");
      const answered = ok(await ctx.http.get<Info>(`/subscriptions/${copy}`));
      assert.deepEqual(answered.target, { type: "http", url: http.url, secretSet: true });
      assert.ok(
        (await list()).some((s) => s.group === copy),
        "the list reads",
      );
      ok(await ctx.http.put(`/subscriptions/${copy}`, { topic, target: http }));
      assert.deepEqual((await subscriptions.get(copy))?.target, http, "saved again: sealed for its own group");
      ok(await ctx.http.delete(`/subscriptions/${copy}`));
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
        // Metadata services (link-local) are never a target, even where loopback is allowed.
        { topic, target: { type: "http", url: "https://169.254.169.254/latest/meta-data/", secret } },
        { topic, target: { type: "http", url: "https://[fe80::1]/hook", secret } },
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

/** On a stage that lets targets reach public addresses only (every AWS stage): loopback and private are refused. */
export function publicTargetCases(mode: ServerMode): void {
  describe("subscription targets on a stage of public addresses", () => {
    const ctx = useTestServer(mode, { subscriptionTargetNetworks: "public" });
    const topic = uniqueName("SubPublic");
    const secret = "whsec-0123456789abcdef";

    it("loopback in any spelling and private addresses are 400, nothing stored; a public name is accepted", async () => {
      const group = uniqueName("SubPublic");
      for (const url of [
        "http://127.0.0.1:9001/2018-06-01/runtime/invocation/next",
        "http://127.1/hook",
        "http://2130706433/hook",
        "http://localhost:9001/hook",
        "http://[::1]/hook",
        "https://10.0.0.5/hook",
        "https://192.168.1.1/hook",
      ]) {
        const answer = await ctx.http.put(`/subscriptions/${group}`, { topic, target: { type: "http", url, secret } });
        expectError(answer, 400, "PARAMETER_ILLEGAL");
        assert.match(String((answer.body as { message?: string }).message), /loopback|private/, url);
      }
      expectError(await ctx.http.get(`/subscriptions/${group}`), 404, "SUBSCRIPTION_GROUP_NOT_EXIST");
      const target = { type: "http", url: "https://hooks.example.com/orders", secret };
      ok(await ctx.http.put(`/subscriptions/${group}`, { topic, target }));
    });
  });
}
