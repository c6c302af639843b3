/**
 * @module Issue 26's hostile-input findings 1, 2, 4 and 5 against an open local server, on either storage mode:
 * each bad request is a 4xx with `{code, message}`, an answer of a few hundred bytes whatever the request held,
 * and writes nothing (the storage request counter does not move).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_BODY_BYTES, MAX_PROPERTIES_BYTES } from "../../lib/protocol/index.js";
import { b64, expectError, ok } from "../support/http.js";
import { rawHttp } from "../support/raw-http.js";
import { MODE_LABEL, type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";

/** What every bad request's answer must be. */
export const MAX_BAD_ANSWER_BYTES = 64 * 1024;

export function hardeningSuite(mode: ServerMode): void {
  describe(`hostile input (${MODE_LABEL[mode]})`, () => {
    const ctx = useTestServer(mode);
    const topic = uniqueName("Hard");
    const writes = () => {
      const c = ctx.server.server.storage.counter.snapshot();
      return c.tableWrites + c.objectPuts + c.objectDeletes;
    };
    /** Sends `body` raw; asserts a small 4xx of `code` that wrote nothing, and answers its message. */
    const refusedRaw = async (path: string, body: string, status: number, code: string) => {
      const before = writes();
      const answer = await rawHttp(ctx.server.url, {
        method: "POST",
        path,
        headers: { "content-type": "application/json" },
        body,
      });
      assert.equal(answer.status, status, answer.text.slice(0, 300));
      assert.ok(answer.bytes < MAX_BAD_ANSWER_BYTES, `a ${answer.bytes}-byte answer`);
      const parsed = JSON.parse(answer.text) as { code: string; message: string };
      assert.equal(parsed.code, code);
      assert.equal(writes(), before, "a refused request wrote nothing");
      return parsed.message;
    };

    it("setup: a topic with one message", async () => {
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 1, writeQueueNums: 1 }));
      ok(await ctx.http.post("/send", { topic, brokerName: "broker-a", queueId: 0, messages: [{ body: b64("m") }] }));
    });

    it("1: a million bad messages get a bounded 400 naming the first issues and a count", async () => {
      const message = await refusedRaw(
        "/send",
        `{"topic":"${topic}","messages":[${"1,".repeat(999_999)}1]}`,
        400,
        "PARAMETER_ILLEGAL",
      );
      assert.match(message, /an array has more than 4096 items/);
      // Under the shape bounds, zod's issues are cut to the first few and counted.
      const some = await refusedRaw(
        "/send",
        JSON.stringify({ topic, messages: Array(4000).fill(1) }),
        400,
        "PARAMETER_ILLEGAL",
      );
      assert.match(some, /and 3995 more issues$/);
    });

    it("2: a properties object of 130,000 entries is a 400, not a 500", async () => {
      const properties = Object.fromEntries(Array.from({ length: 130_000 }, (_, i) => [`p${i}`, "v"]));
      await refusedRaw(
        "/send",
        JSON.stringify({ topic, messages: [{ body: b64("x"), properties }] }),
        400,
        "PARAMETER_ILLEGAL",
      );
      // Over the documented count but under the shape bound: the schema's maximum.
      const over = Object.fromEntries(Array.from({ length: 1025 }, (_, i) => [`p${i}`, "v"]));
      await refusedRaw(
        "/send",
        JSON.stringify({ topic, messages: [{ body: b64("x"), properties: over }] }),
        400,
        "PARAMETER_ILLEGAL",
      );
    });

    it("4: a consumer group whose %RETRY% or %DLQ% topic is over 127 characters is refused before any write", async () => {
      const at = { topic, brokerName: "broker-a", queueId: 0, queueOffset: 0 };
      for (const [length, delayLevel] of [
        [121, undefined],
        [123, -1],
        [200, -1],
      ] as const) {
        const consumerGroup = "g".repeat(length);
        await refusedRaw(
          "/send-back",
          JSON.stringify({ consumerGroup, ...at, ...(delayLevel === undefined ? {} : { delayLevel }) }),
          400,
          "PARAMETER_ILLEGAL",
        );
      }
      const long = "g".repeat(121);
      // Every route that derives a topic from a consumer group, or names one, refuses the same name.
      await refusedRaw(
        "/heartbeat",
        JSON.stringify({ clientId: "c@1", consumerDataSet: [{ groupName: long, messageModel: "CLUSTERING" }] }),
        400,
        "PARAMETER_ILLEGAL",
      );
      await refusedRaw("/pull", JSON.stringify({ consumerGroup: long, ...at }), 400, "PARAMETER_ILLEGAL");
      expectError(await ctx.http.get(`/offsets/${long}/${topic}`), 400, "PARAMETER_ILLEGAL");
      expectError(await ctx.http.get(`/groups/${long}/status`), 400, "PARAMETER_ILLEGAL");
      // 120 characters is the longest consumer group, and it works end to end.
      const longest = "g".repeat(120);
      const back = ok(await ctx.http.post<{ topic: string }>("/send-back", { consumerGroup: longest, ...at }));
      assert.equal(back.topic, `%RETRY%${longest}`);
      const dead = ok(
        await ctx.http.post<{ topic: string }>("/send-back", { consumerGroup: longest, ...at, delayLevel: -1 }),
      );
      assert.equal(dead.topic, `%DLQ%${longest}`);
    });

    it("5: a body of exactly MAX_BODY_BYTES is accepted, and the broker's UNIQ_KEY does not count as a property", async () => {
      const body = Buffer.alloc(MAX_BODY_BYTES, 7).toString("base64");
      ok(await ctx.http.post("/send", { topic, brokerName: "broker-a", queueId: 0, messages: [{ body }] }));
      // One property of exactly MAX_PROPERTIES_BYTES (name + value + 2 separators), sent without a UNIQ_KEY.
      const value = "v".repeat(MAX_PROPERTIES_BYTES - 1 - 2);
      ok(await ctx.http.post("/send", { topic, messages: [{ body: b64("p"), properties: { p: value } }] }));
      await refusedRaw(
        "/send",
        JSON.stringify({ topic, messages: [{ body: b64("p"), properties: { p: `${value}v` } }] }),
        413,
        "MESSAGE_BODY_TOO_LARGE",
      );
    });

    it("5: a string with a lone surrogate is refused, not stored altered", async () => {
      await refusedRaw("/heartbeat", JSON.stringify({ clientId: "c\ud800@1" }), 400, "PARAMETER_ILLEGAL");
      await refusedRaw(
        "/send",
        JSON.stringify({ topic, messages: [{ body: b64("x"), tags: "t\udc00" }] }),
        400,
        "PARAMETER_ILLEGAL",
      );
    });

    it("5: /channel answers loopback host names only on a loopback server (DNS rebinding)", async () => {
      const answer = await rawHttp(ctx.server.url, {
        method: "GET",
        path: "/channel",
        headers: {
          host: "rebound.example:80",
          connection: "Upgrade",
          upgrade: "websocket",
          "sec-websocket-version": "13",
          "sec-websocket-key": Buffer.alloc(16, 1).toString("base64"),
        },
      });
      assert.equal(answer.status, 403);
      assert.equal((JSON.parse(answer.text) as { code: string }).code, "NO_PERMISSION");
    });

    it("5: the console's pages carry a Content-Security-Policy, X-Frame-Options and X-Content-Type-Options", async () => {
      const page = await rawHttp(ctx.server.url, { method: "GET", path: "/console/" });
      assert.match(String(page.headers["content-security-policy"]), /default-src 'self'.*frame-ancestors 'none'/);
      assert.equal(page.headers["x-frame-options"], "DENY");
      assert.equal(page.headers["x-content-type-options"], "nosniff");
    });
  });
}
