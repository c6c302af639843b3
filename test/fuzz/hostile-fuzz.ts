/**
 * @module Hostile shapes, generated: huge arrays and maps in every body field, deep nesting,
 * lone surrogates, malformed `Host` headers, and long consumer groups on every route that derives a topic from
 * one. Every answer is under 500 and, for a refusal, a `{code, message}` under 64 KiB that wrote nothing.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import type { RequestCounter } from "../../lib/storage/request-counter.js";
import { rawHttp } from "../support/raw-http.js";

const MAX_BAD_ANSWER_BYTES = 64 * 1024;

/** A huge array or map, or a deep nest, as JSON text (built as text: no megabyte objects in the fuzzer). */
const hugeArb = fc.oneof(
  fc.integer({ min: 4_097, max: 1_000_000 }).map((n) => `[${"1,".repeat(n - 1)}1]`),
  fc
    .integer({ min: 1_025, max: 150_000 })
    .map((n) => `{${Array.from({ length: n }, (_, i) => `"k${i}":"v"`).join(",")}}`),
  fc.integer({ min: 17, max: 5_000 }).map((d) => `${"[".repeat(d)}${"]".repeat(d)}`),
  fc.constantFrom('"\\ud800"', '"a\\udc00b"', `"${"x".repeat(70_000)}"`),
);

/** A route with a body, and the field a huge value goes into. */
const slotArb = fc.constantFrom(
  ["/send", '{"topic":"Fz","messages":HUGE}'],
  ["/send", '{"topic":"Fz","messages":[{"body":"eA==","properties":HUGE}]}'],
  ["/send", '{"topic":"Fz","messages":[{"body":"eA==","keys":HUGE}]}'],
  ["/send", '{"topic":HUGE,"messages":[{"body":"eA=="}]}'],
  ["/pull", '{"consumerGroup":"G","topic":"Fz","brokerName":"broker-a","queueId":0,"queueOffset":HUGE}'],
  ["/heartbeat", '{"clientId":"c@1","consumerDataSet":HUGE}'],
  ["/heartbeat", '{"clientId":HUGE}'],
  ["/offsets/G/Fz", '{"offsetTable":HUGE}'],
  ["/offsets/G/Fz/lock", '{"clientId":"c@1","queues":HUGE}'],
  [
    "/send-back",
    '{"consumerGroup":"G","topic":"Fz","brokerName":"broker-a","queueId":0,"queueOffset":0,"delayLevel":HUGE}',
  ],
  ["/acl/acls", '{"subject":"User:a","resources":HUGE,"actions":["Pub"],"decision":"Allow"}'],
);

/** Every route that names a consumer group, and so may derive `%RETRY%`/`%DLQ%` topics from it. */
const groupRouteArb = fc.constantFrom(
  (g: string) => [
    "POST",
    "/send-back",
    `{"consumerGroup":"${g}","topic":"Fz","brokerName":"broker-a","queueId":0,"queueOffset":0,"delayLevel":-1}`,
  ],
  (g: string) => [
    "POST",
    "/send-back",
    `{"consumerGroup":"${g}","topic":"Fz","brokerName":"broker-a","queueId":0,"queueOffset":0}`,
  ],
  (g: string) => [
    "POST",
    "/heartbeat",
    `{"clientId":"c@1","consumerDataSet":[{"groupName":"${g}","messageModel":"CLUSTERING"}]}`,
  ],
  (g: string) => [
    "POST",
    "/pull",
    `{"consumerGroup":"${g}","topic":"Fz","brokerName":"broker-a","queueId":0,"queueOffset":0}`,
  ],
  (g: string) => ["PUT", `/offsets/${g}/Fz`, '{"offsetTable":[{"brokerName":"broker-a","queueId":0,"offset":0}]}'],
  (g: string) => [
    "POST",
    `/offsets/${g}/Fz/lock`,
    '{"clientId":"c@1","queues":[{"brokerName":"broker-a","queueId":0}]}',
  ],
  (g: string) => ["POST", "/unregister", `{"clientId":"c@1","consumerGroup":"${g}"}`],
  (g: string) => ["GET", `/groups/${g}/status`, ""],
);

const hostArb = fc.constantFrom("a b", "[", "%", "a%zz", "host:port:1", "", "x".repeat(300), "[::1", "127.0.0.1:99999");

type Case = { method: string; path: string; body: string; host?: string; writesAllowed: boolean };

const caseArb: fc.Arbitrary<Case> = fc.oneof(
  fc.tuple(slotArb, hugeArb).map(([[path, template], huge]) => ({
    method: "POST",
    path: path as string,
    body: (template as string).replace("HUGE", huge),
    writesAllowed: false,
  })),
  fc.tuple(groupRouteArb, fc.integer({ min: 121, max: 400 })).map(([route, n]) => {
    const [method, path, body] = route("g".repeat(n));
    return { method: method as string, path: path as string, body: body as string, writesAllowed: false };
  }),
  fc.tuple(hostArb, slotArb).map(([host, [path]]) => ({
    method: "POST",
    path: path as string,
    body: '{"topic":"Fz","messages":[{"body":"eA=="}]}',
    host,
    writesAllowed: false,
  })),
);

/** Sends `runs` hostile requests; throws with fast-check's counterexample on a 5xx, a large refusal, or a write. */
export async function fuzzHostile(options: { url: string; counter: RequestCounter; runs: number; seed?: number }) {
  const tally = { refused: 0, ok: 0 };
  await fc.assert(
    fc.asyncProperty(caseArb, async (c) => {
      const before = options.counter.snapshot();
      const answer = await rawHttp(options.url, {
        method: c.method,
        path: c.path,
        headers: { "content-type": "application/json", ...(c.host === undefined ? {} : { host: c.host }) },
        ...(c.method === "GET" ? {} : { body: c.body }),
      });
      assert.ok(answer.status < 500, `${c.method} ${c.path}: ${answer.status} ${answer.text.slice(0, 300)}`);
      if (answer.status < 300) {
        tally.ok++;
        return;
      }
      tally.refused++;
      assert.ok(answer.bytes < MAX_BAD_ANSWER_BYTES, `a ${answer.bytes}-byte refusal`);
      const parsed = JSON.parse(answer.text) as { code?: unknown; message?: unknown };
      assert.equal(typeof parsed.code, "string");
      assert.equal(typeof parsed.message, "string");
      const after = options.counter.snapshot();
      if (!c.writesAllowed)
        assert.equal(after.tableWrites + after.objectPuts, before.tableWrites + before.objectPuts, "a refusal wrote");
    }),
    { numRuns: options.runs, ...(options.seed === undefined ? {} : { seed: options.seed }) },
  );
  return tally;
}
