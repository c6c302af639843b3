/**
 * The remoting frame decoder giving up a frame still arriving (lib/remoting/frame.ts `dropPartial`), as the door
 * does when the rest of it does not fit the process's budget: it answers the frame's header (so the door refuses it
 * by its opaque id) only once the whole header is in, and then discards the rest of the frame as it comes, across
 * any number of chunks, reading the frames after it whole, even those in the chunk that ends the dropped one.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  encodeFrame,
  FrameDecoder,
  type RemotingCommand,
  SERIALIZE_JSON,
  SERIALIZE_ROCKETMQ,
} from "../../lib/remoting/index.js";

const frame = (opaque: number, bodyBytes: number, binary = false): Buffer =>
  encodeFrame({
    code: 310,
    language: "JAVA",
    version: 453,
    opaque,
    flag: 0,
    remark: undefined,
    extFields: { b: "SomeTopic" },
    serializeType: binary ? SERIALIZE_ROCKETMQ : SERIALIZE_JSON,
    body: new Uint8Array(bodyBytes).fill(opaque),
  });

const opaques = (frames: RemotingCommand[]) => frames.map((f) => f.opaque);

describe("a remoting frame given up while it arrives", () => {
  it("waits for the whole header before giving the frame up, then answers that header", () => {
    const decoder = new FrameDecoder();
    const dropped = frame(7, 50_000, true);
    assert.deepEqual(decoder.push(dropped.subarray(0, 6)), []);
    assert.equal(decoder.dropPartial(), "header-incomplete", "not even the header's length is in");
    assert.deepEqual(decoder.push(dropped.subarray(6, 12)), []);
    assert.equal(decoder.dropPartial(), "header-incomplete", "the header is not all in");
    assert.deepEqual(decoder.push(dropped.subarray(12, 20_000)), []);
    const header = decoder.dropPartial();
    assert.ok(typeof header === "object" && header !== null);
    assert.equal(header.opaque, 7);
    assert.equal(header.code, 310);
    assert.equal(header.body, undefined, "the header alone");
    assert.equal(decoder.buffered, 0, "what was buffered is let go");
  });

  it("discards the rest across chunks and reads the frames after it, even in the chunk that ends it", () => {
    const decoder = new FrameDecoder();
    const dropped = frame(1, 100_000);
    const [second, third] = [frame(2, 10), frame(3, 3000)];
    decoder.push(dropped.subarray(0, 1000));
    assert.equal((decoder.dropPartial() as RemotingCommand).opaque, 1);
    assert.deepEqual(decoder.push(dropped.subarray(1000, 40_000)), [], "the rest is discarded");
    assert.deepEqual(decoder.push(dropped.subarray(40_000, 90_000)), []);
    assert.equal(decoder.buffered, 0, "nothing of it is kept");
    // One chunk: the dropped frame's end, a whole frame, and the start of another.
    const got = decoder.push(Buffer.concat([dropped.subarray(90_000), second, third.subarray(0, 100)]));
    assert.deepEqual(opaques(got), [2]);
    assert.equal(got[0]?.body?.byteLength, 10);
    assert.equal(decoder.buffered, 100);
    assert.deepEqual(opaques(decoder.push(third.subarray(100))), [3]);
  });

  it("answers undefined for a header longer than the caller waits for, before it has all come", () => {
    const decoder = new FrameDecoder();
    const long = encodeFrame({
      code: 310,
      language: "JAVA",
      version: 453,
      opaque: 9,
      flag: 0,
      remark: undefined,
      extFields: { b: "SomeTopic", i: "p".repeat(70 * 1024) },
      serializeType: SERIALIZE_JSON,
      body: new Uint8Array(10),
    });
    decoder.push(long.subarray(0, 1000));
    assert.equal(decoder.dropPartial(64 * 1024), undefined, "a 70 KiB header is not waited for");
    const patient = new FrameDecoder();
    patient.push(long.subarray(0, 1000));
    assert.equal(patient.dropPartial(), "header-incomplete", "up to 256 KiB by default");
  });

  it("answers undefined for a header that cannot be one (the door closes the connection)", () => {
    const decoder = new FrameDecoder();
    const bad = Buffer.alloc(16);
    bad.writeUInt32BE(5000, 0); // a frame of 5000 bytes
    bad.writeUInt32BE(6000, 4); // whose header would be longer than the frame
    decoder.push(bad);
    assert.equal(decoder.dropPartial(), undefined);
  });
});
