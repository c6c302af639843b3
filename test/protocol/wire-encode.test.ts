/**
 * @module The fast wire encode (lib/protocol/wire-encode.ts): a schema is taken as plain only when nothing in
 * it parses differently backward (codecs, transforms, defaults, catches), and a plain schema's forward parse
 * gives exactly zod's encode, refusals included, for the answers the broker sends most (send, pull requests).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { bytes, endpoints, isPlainSchema, safeEncodeToWire } from "../../lib/protocol/index.js";

describe("wire encode", () => {
  it("takes a schema as plain only without codecs, transforms, defaults or catches anywhere in it", () => {
    const leaf = z.object({ a: z.string(), b: z.array(z.number().int()).optional(), c: z.literal("x").nullable() });
    assert.equal(isPlainSchema(leaf), true);
    assert.equal(isPlainSchema(z.object({ inner: z.object({ body: bytes }) })), false, "a codec deep inside");
    assert.equal(isPlainSchema(z.array(z.string().transform((s) => s.length))), false, "a transform");
    assert.equal(isPlainSchema(z.object({ n: z.number().default(1) })), false, "a default");
    assert.equal(isPlainSchema(z.union([z.string(), z.number().catch(0)])), false, "a catch in a union");
    assert.equal(
      isPlainSchema(
        z.record(
          z.string(),
          z.lazy(() => z.string()),
        ),
      ),
      false,
      "lazy: not looked into",
    );
    assert.equal(isPlainSchema(endpoints.send.response), true);
    assert.equal(isPlainSchema(endpoints.pull.body), true);
    assert.equal(isPlainSchema(endpoints.send.body), false, "message bodies are a base64 codec");
    assert.equal(isPlainSchema(endpoints.pull.response), false);
  });

  it("encodes a plain schema's values exactly as zod's encode does, refusals included", () => {
    const answer = {
      sendStatus: "SEND_OK" as const,
      messageQueue: { topic: "T", brokerName: "broker-a", queueId: 3 },
      queueOffset: 7,
      msgIds: ["0A000001"],
      storeTimestamp: 1_700_000_000_000,
      internal: "not on the wire", // unknown keys are stripped both ways
    };
    const schema = endpoints.send.response;
    assert.deepEqual(safeEncodeToWire(schema, answer), z.safeEncode(schema, answer));
    assert.equal(JSON.stringify(safeEncodeToWire(schema, answer).data).includes("internal"), false);
    const bad = { ...answer, queueOffset: -1 };
    const fast = safeEncodeToWire(schema, bad);
    const slow = z.safeEncode(schema, bad);
    assert.equal(fast.success, false);
    assert.equal(slow.success, false);
    assert.deepEqual(
      fast.error?.issues.map((i) => i.path),
      slow.error?.issues.map((i) => i.path),
    );
    const pull = { consumerGroup: "G", topic: "T", brokerName: "broker-a", queueId: 0, queueOffset: 0, maxMsgNums: 32 };
    assert.deepEqual(safeEncodeToWire(endpoints.pull.body, pull), z.safeEncode(endpoints.pull.body, pull));
  });

  it("encodes a schema with a codec by zod's encode (bytes to base64)", () => {
    const body = { topic: "T", messages: [{ body: new Uint8Array([1, 2, 3]) }] };
    const result = safeEncodeToWire(endpoints.send.body, body);
    assert.deepEqual(result.data?.messages[0]?.body, "AQID");
  });
});
