/**
 * @module Property-based fuzz of the request schemas through the HTTP surface (the local server, so the
 * fuzz does not depend on how the handlers validate inside): random and mutated JSON bodies, paths and
 * query strings on every route. Every answer is a 2xx, or a 4xx with `{code, message}`: never a 5xx, never
 * a dropped connection. A 4xx writes nothing (no table write, no object put during the request).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import type { RequestCounter } from "../../lib/storage/request-counter.js";

const nameArb = fc.oneof(
  fc.constantFrom("FuzzTopic", "broker-a", "broker-b", "FuzzGroup", "%DLQ%x", "a"),
  fc.stringMatching(/^[A-Za-z0-9_%|-]{1,12}$/),
  fc.string({ maxLength: 12 }),
  fc.constantFrom("", "x".repeat(300), "a#b", "..", "%2F", "é", "TBW102"),
);

/** A value where a field was: the right type often, anything JSON otherwise. */
const fieldValue = fc.oneof(nameArb, fc.integer({ min: -3, max: 70000 }), fc.jsonValue({ maxDepth: 2 }));

const messageArb = fc.record(
  {
    body: fc.oneof(fc.base64String({ maxLength: 40 }), fieldValue),
    tags: nameArb,
    keys: fc.oneof(nameArb, fc.array(nameArb, { maxLength: 2 })),
    properties: fc.dictionary(nameArb, fc.oneof(nameArb, fieldValue), { maxKeys: 2 }),
    flag: fieldValue,
  },
  { requiredKeys: [] },
);

const validShapes = {
  send: fc.record(
    { topic: nameArb, brokerName: nameArb, queueId: fieldValue, messages: fc.array(messageArb, { maxLength: 3 }) },
    { requiredKeys: [] },
  ),
  pull: fc.record(
    {
      consumerGroup: nameArb,
      topic: nameArb,
      brokerName: nameArb,
      queueId: fieldValue,
      queueOffset: fieldValue,
      maxMsgNums: fieldValue,
      subExpression: fc.oneof(fc.constantFrom("*", "TagA || TagB", "||"), nameArb),
    },
    { requiredKeys: [] },
  ),
  topic: fc.record(
    {
      readQueueNums: fieldValue,
      writeQueueNums: fieldValue,
      brokerNames: fc.array(nameArb, { maxLength: 2 }),
      perm: fieldValue,
    },
    { requiredKeys: [] },
  ),
  offsets: fc.record(
    {
      offsetTable: fc.array(fc.record({ brokerName: nameArb, queueId: fieldValue, offset: fieldValue }), {
        maxLength: 2,
      }),
    },
    { requiredKeys: [] },
  ),
  heartbeat: fc.record(
    {
      clientId: nameArb,
      producerDataSet: fc.array(fc.record({ groupName: nameArb }), { maxLength: 2 }),
      consumerDataSet: fc.array(fc.record({ groupName: nameArb, subscriptionDataSet: fieldValue }), { maxLength: 2 }),
    },
    { requiredKeys: [] },
  ),
};

const bodyArb = fc.oneof(
  { arbitrary: fc.oneof(...Object.values(validShapes)).map((v) => JSON.stringify(v)), weight: 6 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)), weight: 2 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 1 },
  { arbitrary: fc.constant(""), weight: 1 },
);

const seg = nameArb.map((s) => encodeURIComponent(s));
const pathArb = fc.oneof(
  fc.constantFrom("/health", "/cluster", "/topics", "/send", "/pull", "/heartbeat", "/unregister", "/", "/nope"),
  seg.map((t) => `/topics/${t}`),
  seg.map((t) => `/topics/${t}/route`),
  seg.map((t) => `/topics/${t}/status`),
  seg.map((g) => `/groups/${g}/progress`),
  seg.map((g) => `/groups/${g}/consumers`),
  fc.tuple(seg, seg).map(([g, t]) => `/offsets/${g}/${t}`),
  fc.array(seg, { maxLength: 4 }).map((parts) => `/${parts.join("/")}`),
);
const queryArb = fc.oneof(
  fc.constant(""),
  fc
    .dictionary(fc.constantFrom("topic", "brokerName", "queueId", "x"), fc.oneof(nameArb, fc.integer().map(String)), {
      maxKeys: 3,
    })
    .map((q) => `?${new URLSearchParams(q).toString()}`),
);
const methodArb = fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH");

export interface HttpFuzzOptions {
  url: string;
  counter: RequestCounter;
  runs: number;
  seed?: number;
}

/** Sends `runs` generated requests, one at a time; throws with fast-check's shrunk counterexample on a failure. */
export async function fuzzHttp({
  url,
  counter,
  runs,
  seed,
}: HttpFuzzOptions): Promise<{ ok: number; refused: number }> {
  const tally = { ok: 0, refused: 0 };
  await fc.assert(
    fc.asyncProperty(methodArb, pathArb, queryArb, bodyArb, async (method, path, query, body) => {
      const before = counter.snapshot();
      const response = await fetch(`${url}${path}${query}`, {
        method,
        ...(method === "GET" ? {} : { body, headers: { "content-type": "application/json" } }),
      });
      const text = await response.text();
      const status = response.status;
      assert.ok(status < 500, `answered ${status}: ${text}`);
      if (status < 300) {
        tally.ok++;
        return;
      }
      tally.refused++;
      assert.ok(status >= 400, `answered ${status}`);
      const answer = JSON.parse(text) as { code?: unknown; message?: unknown };
      assert.equal(typeof answer.code, "string", text);
      assert.equal(typeof answer.message, "string", text);
      const after = counter.snapshot();
      assert.equal(after.tableWrites - before.tableWrites, 0, `a ${status} answer wrote to a table: ${text}`);
      assert.equal(after.objectPuts - before.objectPuts, 0, `a ${status} answer stored an object: ${text}`);
    }),
    { numRuns: runs, ...(seed === undefined ? {} : { seed }) },
  );
  return tally;
}
