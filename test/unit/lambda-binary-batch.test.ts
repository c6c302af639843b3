/**
 * @module The Lambda edge with binary batches: an API Gateway event carrying a binary send (base64, as API
 * Gateway delivers a non-text body) and a pull asking for a binary answer (returned base64-encoded with
 * `isBase64Encoded`), through the same request path as the local server; a bad frame answers 400 JSON.
 */
import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { after, before, describe, it } from "node:test";
import { toApiEvent } from "../../lib/dev/api-gateway-event.js";
import type { HandlerContext } from "../../lib/http/context.js";
import { createApiHandler } from "../../lib/http/handler.js";
import { ALL_ROUTES } from "../../lib/http/routes/index.js";
import { BATCH_MEDIA_TYPE, decodePullFrame, encodeSendFrame } from "../../lib/protocol/index.js";
import { openTestBroker, type TestBroker } from "../support/server-fixture.js";

describe("Lambda edge: binary batches in API Gateway events", () => {
  let t: TestBroker;
  before(async () => {
    t = await openTestBroker();
  });
  after(() => t.close());

  const call = (path: string, headers: Record<string, string>, body: Uint8Array) => {
    const handler = createApiHandler(
      ALL_ROUTES,
      async (): Promise<HandlerContext> => ({ broker: t.broker, role: { kind: "all" } }),
    );
    const req = { url: path, method: "POST", headers, httpVersion: "1.1", socket: {} } as unknown as IncomingMessage;
    return handler(toApiEvent(req, Buffer.from(body)));
  };

  it("a binary send and a binary pull round-trip through events", async () => {
    await t.broker.topics.upsert("LambdaBin", { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
    const frame = encodeSendFrame({
      topic: "LambdaBin",
      brokerName: "broker-a",
      queueId: 0,
      messages: [{ body: new TextEncoder().encode("via lambda"), tags: "T" }],
    });
    const event = toApiEvent(
      {
        url: "/send",
        method: "POST",
        headers: { "content-type": BATCH_MEDIA_TYPE },
        httpVersion: "1.1",
        socket: {},
      } as unknown as IncomingMessage,
      Buffer.from(frame),
    );
    assert.equal(event.isBase64Encoded, true, "API Gateway hands a binary body over in base64");
    const sent = await call("/send", { "content-type": BATCH_MEDIA_TYPE }, frame);
    assert.equal(sent.statusCode, 200);
    assert.equal(JSON.parse(sent.body ?? "").queueOffset, 0);
    const pullBody = JSON.stringify({
      consumerGroup: "CG",
      topic: "LambdaBin",
      brokerName: "broker-a",
      queueId: 0,
      queueOffset: 0,
    });
    const pulled = await call(
      "/pull",
      { "content-type": "application/json", accept: BATCH_MEDIA_TYPE },
      new TextEncoder().encode(pullBody),
    );
    assert.equal(pulled.statusCode, 200);
    assert.equal(pulled.isBase64Encoded, true);
    assert.equal(pulled.headers?.["content-type"], BATCH_MEDIA_TYPE);
    const answer = decodePullFrame(new Uint8Array(Buffer.from(pulled.body ?? "", "base64")));
    assert.deepEqual(
      answer.messages.map((m) => [m.queueOffset, new TextDecoder().decode(m.body), m.tags]),
      [[0, "via lambda", "T"]],
    );
  });

  it("a bad frame answers 400 PARAMETER_ILLEGAL in JSON", async () => {
    const res = await call(
      "/send",
      { "content-type": BATCH_MEDIA_TYPE },
      new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
    );
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers?.["content-type"], "application/json");
    assert.equal(JSON.parse(res.body ?? "").code, "PARAMETER_ILLEGAL");
  });
});
