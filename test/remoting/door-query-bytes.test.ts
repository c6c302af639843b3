/**
 * @module QUERY_MESSAGE spoken frame by frame (test/support/remoting-raw.ts): an answer holds at most
 * MAX_PULL_ANSWER_BYTES of messages, the first whatever its size, as a pull's answer does: two 3 MiB messages under
 * one key are answered one, not as one frame of 6 MiB (RocketMQ's client does not page: the second is not returned).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { MAX_PULL_ANSWER_BYTES, RequestCode, ResponseCode } from "../../lib/remoting/index.js";
import { createTopic } from "../support/consumer-helpers.js";
import { RawRemoting } from "../support/remoting-raw.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

/** The stored messages one after another in a QUERY_MESSAGE answer's body: each starts with its total size. */
function storedSizes(body: Uint8Array): number[] {
  const view = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const sizes: number[] = [];
  for (let at = 0; at + 4 <= view.byteLength; ) {
    const size = view.readInt32BE(at);
    assert.ok(size > 0, "a stored message has a size");
    sizes.push(size);
    at += size;
  }
  return sizes;
}

describe("QUERY_MESSAGE's answer over the remoting door", () => {
  const ctx = useTestServer("local");
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 30_000 });

  it("holds at most MAX_PULL_ANSWER_BYTES of messages, the first whatever its size", async () => {
    const topic = uniqueName("BigKeyed");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const c = await RawRemoting.open(ctx.server.server.port);
    try {
      const body = new Uint8Array(3 * 1024 * 1024).fill(7);
      for (const i of [1, 2]) {
        const sent = await c.request({
          code: RequestCode.SEND_MESSAGE_V2,
          extFields: { a: `${topic}P`, b: topic, e: "0", f: "0", g: String(Date.now()), h: "0", i: `KEYS\u0001big` },
          body,
        });
        assert.equal(sent.code, ResponseCode.SUCCESS, `send ${i}: ${sent.remark}`);
      }
      const answer = await c.request({
        code: RequestCode.QUERY_MESSAGE,
        extFields: { topic, key: "big", maxNum: "32", beginTimestamp: "0", endTimestamp: "9223372036854775807" },
      });
      assert.equal(answer.code, ResponseCode.SUCCESS, answer.remark);
      const sizes = storedSizes(answer.body ?? new Uint8Array(0));
      assert.equal(sizes.length, 1, "one message: the second would pass the bound");
      assert.ok((sizes[0] ?? 0) > body.byteLength && (sizes[0] ?? 0) < MAX_PULL_ANSWER_BYTES);
    } finally {
      c.close();
    }
  });
});
