/**
 * @module A gRPC call on its HTTP/2 stream (lib/grpc/grpc-call.ts): a streaming call's messages that come before
 * its handler listens are held and given in order, then its end; past the bound it is refused; compressed
 * messages are read (gzip) or refused (an unknown encoding); a status message is percent-encoded, and grpc-js
 * reads it back as it was. The stream's owner here records what the call sends.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { credentials, status as grpcStatus, type ServiceError } from "@grpc/grpc-js";
import { GRPC_STATUS, GrpcCall, type MethodCodec, percentEncode } from "../../lib/grpc/grpc-call.js";
import { HpackDecoder } from "../../lib/grpc/http2/hpack.js";
import { ServerStream, type StreamOwner } from "../../lib/grpc/http2/stream.js";
import { type FramedMessage, MessageFrames, MessageTooLarge } from "../../lib/grpc/message-frames.js";
import { useGrpcServer } from "../support/grpc-fixture.js";
import { rawBytesCall, rawClient } from "../support/grpc-raw.js";

/** Records the frames a stream's call sends: headers and trailers as decoded header lists, DATA as bytes. */
class RecordingOwner implements StreamOwner {
  readonly sent: (string | Buffer)[] = [];
  readonly #decoder = new HpackDecoder();
  #headers(block: Buffer): string {
    const pairs: string[] = [];
    this.#decoder.decode(block, (n, v) => pairs.push(`${n}=${v}`));
    return pairs.join(" ");
  }
  sendHeaders(stream: ServerStream, block: Buffer, endStream: boolean): void {
    this.sent.push(`${endStream ? "headers+end" : "headers"} ${this.#headers(block)}`);
    if (endStream) stream.localEnded = true;
  }
  sendData(_stream: ServerStream, payload: Buffer): void {
    this.sent.push(payload);
  }
  sendTrailers(stream: ServerStream, block: Buffer): void {
    stream.localEnded = true;
    this.sent.push(`trailers ${this.#headers(block)}`);
  }
  resetStream(stream: ServerStream): void {
    stream.closed = true;
  }
  answersFull(): boolean {
    return false;
  }
}

const textCodec: MethodCodec = {
  requestDeserialize: (bytes) => bytes.toString("utf8"),
  responseSerialize: (message) => Buffer.from(String(message), "utf8"),
};

/** A gRPC length-prefixed message. */
const framed = (bytes: Buffer, compressed = false) => {
  const out = Buffer.alloc(5 + bytes.length);
  out[0] = compressed ? 1 : 0;
  out.writeUInt32BE(bytes.length, 1);
  bytes.copy(out, 5);
  return out;
};

function open(headers: [string, string][] = [], streaming = true) {
  const owner = new RecordingOwner();
  const stream = new ServerStream(1, owner, 65_535, 65_535);
  const call = new GrpcCall(stream, new Map(headers.map(([n, v]) => [n, [v]])), textCodec, 1 << 20, streaming);
  return { owner, stream, call };
}

describe("a gRPC call on its stream", () => {
  it("holds a streaming call's messages and end until its handler listens, then gives them in order", async () => {
    const { stream, call } = open();
    // Two messages in one DATA frame, a third split over two, then the client's end: all before any listener.
    stream.onData(Buffer.concat([framed(Buffer.from("one")), framed(Buffer.from("two"))]));
    const third = framed(Buffer.from("three"));
    stream.onData(third.subarray(0, 4));
    stream.onData(third.subarray(4));
    stream.onEnd();
    const got: unknown[] = [];
    const ended = new Promise<void>((resolve) => call.on("end", resolve));
    call.on("data", (m: unknown) => got.push(m));
    await ended;
    assert.deepEqual(got, ["one", "two", "three"]);
    // Flowing now: a later message is given at once.
    const later = open();
    const laterGot: unknown[] = [];
    later.call.on("data", (m: unknown) => laterGot.push(m));
    await new Promise((r) => setImmediate(r));
    later.stream.onData(framed(Buffer.from("four")));
    assert.deepEqual(laterGot, ["four"]);
  });

  it("refuses a streaming call that sends over 64 messages before its handler listens", () => {
    const { owner, stream, call } = open();
    for (let i = 0; i < 65; i++) stream.onData(framed(Buffer.from(`m${i}`)));
    assert.ok(call.writableEnded);
    assert.match(String(owner.sent.at(-1)), new RegExp(`grpc-status=${GRPC_STATUS.RESOURCE_EXHAUSTED}`));
  });

  it("reads a gzip message; refuses an encoding it does not know (UNIMPLEMENTED)", () => {
    const gzip = open([["grpc-encoding", "gzip"]], false);
    gzip.stream.onData(framed(gzipSync(Buffer.from("packed")), true));
    assert.equal(gzip.call.request, "packed");
    const snappy = open([["grpc-encoding", "snappy"]], false);
    snappy.stream.onData(framed(Buffer.from("??"), true));
    assert.ok(snappy.call.writableEnded);
    assert.match(String(snappy.owner.sent.at(-1)), new RegExp(`grpc-status=${GRPC_STATUS.UNIMPLEMENTED}`));
  });

  it("answers headers, each message, then OK trailers; a failure before any message is trailers-only", () => {
    const ok = open([], false);
    ok.call.write("a");
    ok.call.write("b");
    ok.call.end();
    assert.deepEqual(
      ok.owner.sent.map((s) => (typeof s === "string" ? s.split(" ")[0] : s.subarray(5).toString())),
      ["headers", "a", "b", "trailers"],
    );
    assert.match(String(ok.owner.sent.at(-1)), /grpc-status=0/);
    const failed = open([], false);
    failed.call.fail(GRPC_STATUS.INTERNAL, "über 100%");
    assert.deepEqual(failed.owner.sent, [
      "headers+end :status=200 content-type=application/grpc grpc-status=13 grpc-message=%C3%BCber 100%25",
    ]);
    assert.equal(percentEncode("plain text"), "plain text");
  });
});

describe("a status message through grpc-js", () => {
  const ctx = useGrpcServer("local", {});

  it("reads back a percent-encoded status message as it was sent", async () => {
    const client = rawClient(ctx.endpoint, credentials.createInsecure());
    try {
      const err = await rawBytesCall(client, "/x.Y/100%", Buffer.alloc(0)).then(
        () => assert.fail("expected UNIMPLEMENTED"),
        (e: ServiceError) => e,
      );
      assert.equal(err.code, grpcStatus.UNIMPLEMENTED);
      assert.equal(err.details, "The server does not implement the method /x.Y/100%");
    } finally {
      client.close();
    }
  });
});

describe("a gRPC message gathered from its frames", () => {
  it("joins a 6 MiB message sent in 16 KiB pieces, then reads the next from the same pieces", () => {
    const frames = new MessageFrames(7 << 20);
    const big = Buffer.alloc(6 << 20, 3);
    big[big.length - 1] = 9;
    const stream = Buffer.concat([framed(big), framed(Buffer.from("next"))]);
    const got: FramedMessage[] = [];
    for (let at = 0; at < stream.length; at += 16_384)
      frames.push(
        stream.subarray(at, at + 16_384),
        (m) => got.push(m),
        () => true,
      );
    assert.equal(got.length, 2);
    assert.ok(got[0]?.bytes.equals(big));
    assert.equal(got[1]?.bytes.toString(), "next");
    assert.equal(frames.pendingBytes, 0);
  });

  it("refuses a length over the limit before keeping its bytes", () => {
    const frames = new MessageFrames(1000);
    const header = Buffer.alloc(5);
    header.writeUInt32BE(1001, 1);
    assert.throws(
      () =>
        frames.push(
          header,
          () => {},
          () => true,
        ),
      MessageTooLarge,
    );
  });

  it("a call reset before its handler starts is ended: the server does not serve it", () => {
    const { stream, call } = open();
    stream.onReset();
    assert.ok(call.cancelled && call.writableEnded);
  });
});
