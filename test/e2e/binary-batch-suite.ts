/**
 * @module E2E cases of binary batches (docs/api.md, "Binary batches"): a send as `application/vnd.nimbus.batch`
 * bytes, a pull answered in them on request, the same messages as over JSON; bad bytes answered 400 with a
 * JSON `{code, message}` and nothing written; a JSON client still gets JSON.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { NimbusError } from "../../lib/core/errors.js";
import {
  BATCH_MEDIA_TYPE,
  decodePullFrame,
  encodeSendFrame,
  type PullResponse,
  type SendResponse,
} from "../../lib/protocol/index.js";
import { ok, type PullAnswer, text } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { pullFrom, statusOf } from "./queues-suite.js";

const utf8 = (s: string) => new TextEncoder().encode(s);

/** `frame` with its JSON header replaced by `header` (same records): for frames the SDK would not build. */
function reheader(frame: Uint8Array, header: unknown): Uint8Array {
  const headLength = new DataView(frame.buffer, frame.byteOffset).getUint32(5, true);
  const head = utf8(JSON.stringify(header));
  const records = frame.subarray(9 + headLength);
  const out = new Uint8Array(9 + head.byteLength + records.byteLength);
  out.set(frame.subarray(0, 5), 0);
  new DataView(out.buffer).setUint32(5, head.byteLength, true);
  out.set(head, 9);
  out.set(records, 9 + head.byteLength);
  return out;
}
const where = { brokerName: "broker-a", queueId: 0 };

export function binaryBatchCases(mode: ServerMode): void {
  describe("binary batches (application/vnd.nimbus.batch)", () => {
    const ctx = useTestServer(mode);
    const post = async (path: string, body: Uint8Array | string, headers: Record<string, string>) => {
      const res = await fetch(ctx.server.url + path, { method: "POST", headers, body });
      return {
        status: res.status,
        type: res.headers.get("content-type") ?? "",
        bytes: new Uint8Array(await res.arrayBuffer()),
      };
    };
    const json = <T>(bytes: Uint8Array): T => JSON.parse(new TextDecoder().decode(bytes)) as T;
    const createTopic = async (topic: string) =>
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] }));

    it("a binary send stores every field; a binary pull and a JSON pull read the same messages", async () => {
      const topic = uniqueName("BinSend");
      await createTopic(topic);
      const frame = encodeSendFrame({
        topic,
        ...where,
        messages: [
          { body: utf8("first"), tags: "TagA", keys: ["k1", "k2"], properties: { color: "red" }, flag: 7 },
          { body: new Uint8Array([0, 255, 1, 254]) },
        ],
      });
      const sent = await post("/send", frame, { "content-type": BATCH_MEDIA_TYPE });
      assert.equal(sent.status, 200);
      assert.match(sent.type, /application\/json/, "a send's answer has no bodies: JSON");
      const answer = json<SendResponse>(sent.bytes);
      assert.equal(answer.queueOffset, 0);
      assert.equal(answer.msgIds.length, 2);

      const pullBody = JSON.stringify({ consumerGroup: "CG", topic, ...where, queueOffset: 0 });
      const bin = await post("/pull", pullBody, {
        "content-type": "application/json",
        accept: `application/json;q=0.9, ${BATCH_MEDIA_TYPE}`,
      });
      assert.equal(bin.status, 200);
      assert.equal(bin.type, BATCH_MEDIA_TYPE);
      const decoded: PullResponse = decodePullFrame(bin.bytes);
      const viaJson = ok(await pullFrom(ctx.http, topic, "broker-a", 0, 0));
      assert.equal(decoded.pullStatus, "FOUND");
      assert.deepEqual(
        { ...decoded, messages: decoded.messages.map((m) => ({ ...m, body: Buffer.from(m.body).toString("base64") })) },
        viaJson,
      );
      const [first, second] = decoded.messages;
      assert.equal(new TextDecoder().decode(first?.body), "first");
      assert.deepEqual(
        [first?.tags, first?.keys, first?.properties.color, first?.flag],
        ["TagA", ["k1", "k2"], "red", 7],
      );
      assert.equal(first?.msgId, answer.msgIds[0]);
      assert.deepEqual([...(second?.body ?? [])], [0, 255, 1, 254]);
    });

    it("a JSON client still gets JSON: no accept header, accept: application/json, or the batch type refused", async () => {
      const topic = uniqueName("BinJson");
      await createTopic(topic);
      ok(await ctx.http.post("/send", { topic, ...where, messages: [{ body: Buffer.from("j").toString("base64") }] }));
      const pullBody = JSON.stringify({ consumerGroup: "CG", topic, ...where, queueOffset: 0 });
      for (const headers of [
        { "content-type": "application/json" },
        { "content-type": "application/json", accept: "application/json" },
        // Named but refused (q=0), or preferred less than JSON: JSON.
        { "content-type": "application/json", accept: `${BATCH_MEDIA_TYPE};q=0, application/json` },
        { "content-type": "application/json", accept: `${BATCH_MEDIA_TYPE}; q=0.5, application/json` },
        // A longer type that merely contains the name is another type.
        { "content-type": "application/json", accept: `${BATCH_MEDIA_TYPE}-v2, application/json;q=0.9` },
      ]) {
        const res = await post("/pull", pullBody, headers);
        assert.equal(res.status, 200);
        assert.match(res.type, /application\/json/);
        const answer = json<PullAnswer>(res.bytes);
        assert.equal(text(answer.messages[0]?.body ?? ""), "j");
      }
    });

    it("bad bytes answer 400 with a JSON {code, message} and write nothing", async () => {
      const topic = uniqueName("BinBad");
      await createTopic(topic);
      const good = encodeSendFrame({ topic, ...where, messages: [{ body: utf8("x") }, { body: utf8("y") }] });
      const flipped = good.slice();
      flipped[flipped.length - 3] = (flipped[flipped.length - 3] ?? 0) ^ 0xff; // inside the last record's CRC
      const badHeader = encodeSendFrame({ topic: "ok", messages: [{ body: utf8("x") }] });
      badHeader[5] = 0xff; // a header length past the end
      const wrongTopic = encodeSendFrame({ topic: "bad topic name!", messages: [{ body: utf8("x") }] });
      // The header's per-message part: one per record, only fields a record does not hold, by the schema.
      const withRest = (rest: unknown[]) => reheader(good, { topic, ...where, messages: rest });
      const cases: [string, Uint8Array][] = [
        ["empty", new Uint8Array(0)],
        ["not a frame", utf8('{"topic":"x"}')],
        ["truncated", good.subarray(0, good.length - 5)],
        ["a CRC mismatch", flipped],
        ["a header length past the end", badHeader],
        ["a header the schema refuses", wrongTopic],
        ["fewer per-message parts than records", withRest([{}])],
        ["a record's field in the header", withRest([{}, { tags: "T" }])],
        ["an unknown per-message field", withRest([{}, { priority: 1 }])],
        ["a per-message field the schema refuses", withRest([{}, { delayTimeLevel: -1 }])],
      ];
      for (const [what, bytes] of cases) {
        const res = await post("/send", bytes, { "content-type": BATCH_MEDIA_TYPE });
        assert.equal(res.status, 400, what);
        assert.match(res.type, /application\/json/, what);
        const body = json<{ code: string; message: string }>(res.bytes);
        assert.equal(body.code, "PARAMETER_ILLEGAL", what);
        assert.match(body.message, /binary batch is malformed/, what);
      }
      // An empty body in a well-formed frame is the send's own MESSAGE_ILLEGAL, as over JSON.
      const emptyBody = encodeSendFrame({ topic, ...where, messages: [{ body: new Uint8Array(0) }] });
      const refused = await post("/send", emptyBody, { "content-type": BATCH_MEDIA_TYPE });
      assert.equal(refused.status, 400);
      assert.equal(json<{ code: string }>(refused.bytes).code, "MESSAGE_ILLEGAL");
      // Nothing was written.
      const status = await statusOf(ctx.http, topic);
      assert.deepEqual(
        status.map((q) => q.maxOffset),
        [0],
      );
    });

    it("every non-body field of a send message travels in a frame: the SDK's binary send answers as JSON's", async () => {
      const topic = uniqueName("BinFields");
      await createTopic(topic);
      const binary = new NimbusApi({ endpoints: ctx.server.url });
      const viaJson = new NimbusApi({ endpoints: ctx.server.url, binaryBatches: false });
      try {
        assert.equal(binary.transport.binaryBatches, true);
        // delayTimeLevel is not a record field: it goes in the header, and the broker checks it as over JSON.
        const delayed = { topic, ...where, messages: [{ body: utf8("later"), delayTimeLevel: 3 }] };
        const frame = encodeSendFrame(delayed);
        const headLength = new DataView(frame.buffer, frame.byteOffset).getUint32(5, true);
        assert.deepEqual(json<{ messages?: unknown }>(frame.subarray(9, 9 + headLength)).messages, [
          { delayTimeLevel: 3 },
        ]);
        const outcome = (p: Promise<unknown>) =>
          p.then(
            () => "SEND_OK",
            (err: unknown) => (err instanceof NimbusError ? err.code : String(err)),
          );
        const overJson = await outcome(viaJson.send(delayed));
        const overBinary = await outcome(binary.send(delayed));
        assert.equal(overBinary, overJson, "the binary path answers a delayed send as the JSON path does");
        // A level 0 (not delayed) send goes through either way, and a plain one carries no per-message part.
        assert.equal(
          await outcome(binary.send({ ...delayed, messages: [{ body: utf8("now"), delayTimeLevel: 0 }] })),
          "SEND_OK",
        );
        const plain = encodeSendFrame({ topic, messages: [{ body: utf8("x"), tags: "T" }] });
        const plainHead = new DataView(plain.buffer, plain.byteOffset).getUint32(5, true);
        assert.equal(json<{ messages?: unknown }>(plain.subarray(9, 9 + plainHead)).messages, undefined);
      } finally {
        await binary.close();
        await viaJson.close();
      }
    });

    it("an endpoint without a binary form refuses a binary body with 400", async () => {
      const hb = await post("/heartbeat", new Uint8Array([1, 2, 3]), { "content-type": BATCH_MEDIA_TYPE });
      assert.equal(hb.status, 400);
      assert.equal(json<{ code: string }>(hb.bytes).code, "PARAMETER_ILLEGAL");
    });
  });
}
