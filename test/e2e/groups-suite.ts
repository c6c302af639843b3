/**
 * @module E2E cases of consumer groups over HTTP, on every storage mode: subscription groups (updateSubGroup,
 * deleteSubGroup, their config honoured: consume disabled refuses pulls and receives with RocketMQ's answer,
 * retryMaxTimes sends a send-back to %DLQ%), `GET /groups` with its topics, members and total lag, paging, the
 * lag history the sampling job keeps; bad input is a 4xx `{code, message}` that writes nothing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { dlqTopic } from "../../lib/core/names.js";
import type { GroupSummary, LagSample, SubscriptionGroupConfig } from "../../lib/protocol/index.js";
import { expectError, ok } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { pullFrom, sendTo } from "./queues-suite.js";

interface GroupsPage {
  groups: GroupSummary[];
  nextStartAfter?: string;
}

export function groupCases(mode: ServerMode): void {
  describe("consumer groups: subscription groups, GET /groups, lag history", () => {
    const ctx = useTestServer(mode);
    const config = (group: string) => `/groups/${group}/subscription-group`;
    const oneQueue = async (prefix: string) => {
      const topic = uniqueName(prefix);
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] }));
      return topic;
    };
    const allGroups = async (): Promise<GroupSummary[]> => {
      const out: GroupSummary[] = [];
      let startAfter: string | undefined;
      for (let page = 0; page < 100; page++) {
        const query = startAfter === undefined ? "" : `?startAfter=${encodeURIComponent(startAfter)}`;
        const answer = ok(await ctx.http.get<GroupsPage>(`/groups${query}`));
        out.push(...answer.groups);
        startAfter = answer.nextStartAfter;
        if (startAfter === undefined) return out;
      }
      throw new Error("more than 100 pages of groups");
    };

    it("updateSubGroup sets a config (left-out fields take RocketMQ's defaults); GET answers it; delete removes it", async () => {
      const group = uniqueName("SubG");
      const unknown = ok(await ctx.http.get<SubscriptionGroupConfig>(config(group)));
      assert.deepEqual(
        [unknown.configured, unknown.consumeEnable, unknown.consumeBroadcastEnable, unknown.retryMaxTimes],
        [false, true, true, 16],
      );
      const set = ok(await ctx.http.put<SubscriptionGroupConfig>(config(group), { retryMaxTimes: 5 }));
      assert.deepEqual(
        { ...set, updatedAt: 0 },
        {
          groupName: group,
          consumeEnable: true,
          consumeBroadcastEnable: true,
          retryMaxTimes: 5,
          consumeMessageOrderly: false,
          configured: true,
          updatedAt: 0,
        },
      );
      assert.deepEqual(ok(await ctx.http.get(config(group))), set);
      const listed = (await allGroups()).find((g) => g.group === group);
      assert.equal(listed?.subscriptionGroup.retryMaxTimes, 5, "GET /groups lists the configured group");
      assert.deepEqual(ok(await ctx.http.delete(config(group))), { group, deleted: true });
      assert.equal(ok(await ctx.http.get<SubscriptionGroupConfig>(config(group))).configured, false);
      expectError(await ctx.http.delete(config(group)), 404, "SUBSCRIPTION_GROUP_NOT_EXIST");
    });

    it("consumeEnable false: pulls and receives are 403 NO_PERMISSION; enabled again they read", async () => {
      const topic = await oneQueue("NoConsume");
      const group = uniqueName("Off");
      ok(await sendTo(ctx.http, topic, "broker-a", 0, "m0"));
      ok(await ctx.http.put(config(group), { consumeEnable: false }));
      const pulled = expectError(
        await pullFrom(ctx.http, topic, "broker-a", 0, 0, { consumerGroup: group }),
        403,
        "NO_PERMISSION",
      );
      assert.match(pulled.message, /subscription group no permission/);
      const receive = { consumerGroup: group, topic, invisibleDurationMs: 10_000 };
      expectError(await ctx.http.post("/receive", receive), 403, "NO_PERMISSION");
      ok(await ctx.http.put(config(group), { consumeEnable: true }));
      const again = ok(await pullFrom(ctx.http, topic, "broker-a", 0, 0, { consumerGroup: group }));
      assert.equal(again.pullStatus, "FOUND");
    });

    it("retryMaxTimes 0: a send-back without maxReconsumeTimes goes to %DLQ%<group>", async () => {
      const topic = await oneQueue("RetryMax");
      const group = uniqueName("Dlq");
      ok(await sendTo(ctx.http, topic, "broker-a", 0, "fails"));
      ok(await ctx.http.put(config(group), { retryMaxTimes: 0 }));
      const back = { consumerGroup: group, topic, brokerName: "broker-a", queueId: 0, queueOffset: 0 };
      const answer = ok(await ctx.http.post<{ result: string; topic: string }>("/send-back", back));
      assert.deepEqual([answer.result, answer.topic], ["DLQ", dlqTopic(group)]);
    });

    it("GET /groups: a committing group with its topic, live member and total lag; pages by startAfter", async () => {
      const topic = await oneQueue("Listed");
      const group = uniqueName("Lag");
      ok(await sendTo(ctx.http, topic, "broker-a", 0, "a", "b", "c", "d"));
      ok(
        await ctx.http.put(`/offsets/${group}/${topic}`, {
          offsetTable: [{ brokerName: "broker-a", queueId: 0, offset: 1 }],
        }),
      );
      ok(
        await ctx.http.post("/heartbeat", {
          clientId: "member-1",
          consumerDataSet: [{ groupName: group, subscriptionDataSet: [{ topic, subString: "*" }] }],
        }),
      );
      const row = (await allGroups()).find((g) => g.group === group);
      assert.ok(row, "the group is listed");
      assert.deepEqual(
        [row.topics, row.members, row.memberCount, row.messageModel, row.totalLag],
        [[topic], ["member-1"], 1, "CLUSTERING", 3],
      );
      // Pages of one: every group once, in name order.
      const names: string[] = [];
      let startAfter: string | undefined;
      for (let i = 0; i < 1000; i++) {
        const query = `?limit=1${startAfter === undefined ? "" : `&startAfter=${encodeURIComponent(startAfter)}`}`;
        const page = ok(await ctx.http.get<GroupsPage>(`/groups${query}`));
        assert.ok(page.groups.length <= 1);
        names.push(...page.groups.map((g) => g.group));
        startAfter = page.nextStartAfter;
        if (startAfter === undefined) break;
      }
      assert.deepEqual(names, [...names].sort(), "name order");
      assert.deepEqual(new Set(names), new Set((await allGroups()).map((g) => g.group)));
      assert.ok(names.includes(group));
    });

    it("lag history: each sampling run stores the group's total lag; the history answers it", async () => {
      const topic = await oneQueue("History");
      const group = uniqueName("Hist");
      ok(await sendTo(ctx.http, topic, "broker-a", 0, "a", "b"));
      ok(
        await ctx.http.put(`/offsets/${group}/${topic}`, {
          offsetTable: [{ brokerName: "broker-a", queueId: 0, offset: 0 }],
        }),
      );
      const report = await ctx.server.server.context.broker.sampleLag();
      assert.ok(report.groups >= 1);
      const history = ok(
        await ctx.http.get<{ samples: LagSample[]; intervalMs: number }>(`/groups/${group}/lag-history`),
      );
      assert.equal(history.intervalMs, 60_000);
      assert.deepEqual(
        history.samples.map((s) => s.lag),
        [2],
      );
    });

    it("bad input: 400 PARAMETER_ILLEGAL with {code, message}, and the config is unchanged", async () => {
      const group = uniqueName("Bad");
      const set = ok(await ctx.http.put<SubscriptionGroupConfig>(config(group), { retryMaxTimes: 2 }));
      const bad: unknown[] = [
        { retryMaxTimes: -1 },
        { retryMaxTimes: 1001 },
        { retryMaxTimes: 1.5 },
        { retryMaxTimes: "3" },
        { consumeEnable: "false" },
        { consumeBroadcastEnable: 0 },
        { retryQueueNums: 1 },
        [],
        "text",
      ];
      for (const body of bad) expectError(await ctx.http.put(config(group), body), 400, "PARAMETER_ILLEGAL");
      for (const name of ["has space", "x".repeat(300), "bad*name"]) {
        expectError(await ctx.http.put(config(encodeURIComponent(name)), {}), 400, "PARAMETER_ILLEGAL");
      }
      for (const query of ["?limit=0", "?limit=101", "?limit=x", "?startAfter=has%20space", "?other=1"]) {
        expectError(await ctx.http.get(`/groups${query}`), 400, "PARAMETER_ILLEGAL");
      }
      assert.deepEqual(ok(await ctx.http.get(config(group))), set, "the refused updates wrote nothing");
      assert.equal(
        (await allGroups()).filter((g) => g.group.startsWith("has") || g.group.startsWith("bad*")).length,
        0,
        "no group was recorded by a refused request",
      );
    });
  });
}
