/**
 * What a gRPC call holds of the process's request-bytes budget (lib/grpc/grpc-call.ts), beyond the bytes on the
 * wire: a streaming call's messages that arrived before its handler listens stay counted until they are handed on
 * (they are held in memory meanwhile), and a compressed message counts what it inflates to, so a few KiB of gzip
 * cannot hold MiBs outside the budget; a request or message still arriving holds its bytes in the budget's share for
 * arriving bytes, a unary request until the client ends it, checked once the read that brought it is handled (the
 * last bytes and the end often come together). The call is driven through its HTTP/2 stream's callbacks, as the
 * connection drives it; the stream's answers are recorded.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { InFlightBytes } from "../../lib/dev/server-guard.js";
import { GRPC_STATUS, GrpcCall, type MethodCodec } from "../../lib/grpc/grpc-call.js";
import { HpackDecoder } from "../../lib/grpc/http2/hpack.js";
import { ServerStream, type StreamOwner } from "../../lib/grpc/http2/stream.js";

/** Messages are their bytes. */
const bytesCodec: MethodCodec = { requestDeserialize: (b) => b, responseSerialize: (m) => m as Buffer };

/** A stream whose answers are kept: the status its call ended with, from its headers or trailers. */
function recordedStream(): { stream: ServerStream; status: () => string | undefined } {
  let status: string | undefined;
  const hpack = new HpackDecoder();
  const read = (block: Buffer) =>
    hpack.decode(block, (name, value) => {
      if (name === "grpc-status") status = value;
    });
  const owner: StreamOwner = {
    sendHeaders: (_s, block) => read(block),
    sendData: () => {},
    sendTrailers: (_s, block) => read(block),
    resetStream: () => {},
    answersFull: () => false,
  };
  return { stream: new ServerStream(1, owner, 65_535, 65_535), status: () => status };
}

/** One length-prefixed gRPC message, compressed or not. */
function framed(payload: Buffer, compressed = false): Buffer {
  const prefix = Buffer.alloc(5);
  prefix[0] = compressed ? 1 : 0;
  prefix.writeUInt32BE(payload.length, 1);
  return Buffer.concat([prefix, payload]);
}

const MAX_MESSAGE = 4 * 1024 * 1024;

describe("a gRPC call's share of the request-bytes budget", () => {
  it("counts a stream's messages held before its handler listens until they are handed on", async () => {
    const budget = new InFlightBytes(64 * 1024);
    const { stream } = recordedStream();
    const call = new GrpcCall(stream, new Map(), bytesCodec, MAX_MESSAGE, true, { budget });
    stream.onData(framed(Buffer.alloc(1000, 7)));
    stream.onData(framed(Buffer.alloc(2000, 8)));
    assert.equal(budget.used, 3000, "both messages are held, and counted (their prefixes are not kept)");
    const got: Buffer[] = [];
    call.on("data", (m: Buffer) => got.push(m));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      got.map((m) => m.length),
      [1000, 2000],
    );
    assert.equal(budget.used, 0, "handed on, they hold nothing");
    stream.onData(framed(Buffer.alloc(500, 9)));
    assert.equal(got.length, 3);
    assert.equal(budget.used, 0, "a message handed on as it arrives holds nothing either");
    call.end();
  });

  it("counts what a unary call's compressed request inflates to, until the call ends", () => {
    const budget = new InFlightBytes(64 * 1024);
    const { stream } = recordedStream();
    const call = new GrpcCall(stream, new Map([["grpc-encoding", ["gzip"]]]), bytesCodec, MAX_MESSAGE, false, {
      budget,
    });
    const wire = framed(gzipSync(Buffer.alloc(50_000)), true);
    stream.onData(wire);
    stream.onEnd();
    assert.equal((call.request as Buffer).length, 50_000);
    assert.equal(budget.used, 50_005, "the inflated request (and its prefix) is counted, not its gzip");
    call.end();
    assert.equal(budget.used, 0, "given back once the call ends");
  });

  it("ends RESOURCE_EXHAUSTED a compressed request that inflates past the budget's room, holding nothing", () => {
    const budget = new InFlightBytes(64 * 1024);
    const { stream, status } = recordedStream();
    const call = new GrpcCall(stream, new Map([["grpc-encoding", ["gzip"]]]), bytesCodec, MAX_MESSAGE, false, {
      budget,
    });
    const wire = framed(gzipSync(Buffer.alloc(1024 * 1024)), true);
    assert.ok(wire.length < 4096, "a small request on the wire");
    stream.onData(wire);
    assert.equal(status(), String(GRPC_STATUS.RESOURCE_EXHAUSTED));
    assert.equal(call.request, undefined, "nothing reaches the handler");
    assert.equal(budget.used, 0);
  });

  it("counts a stream's compressed message inflated while it is held", async () => {
    const budget = new InFlightBytes(64 * 1024);
    const { stream } = recordedStream();
    const call = new GrpcCall(stream, new Map([["grpc-encoding", ["gzip"]]]), bytesCodec, MAX_MESSAGE, true, {
      budget,
    });
    stream.onData(framed(gzipSync(Buffer.alloc(20_000)), true));
    assert.equal(budget.used, 20_000, "the held message counts at its inflated size");
    call.on("data", () => {});
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(budget.used, 0);
    call.end();
  });

  it("does not hold a unary request whose end comes in the read of its last bytes to the arriving share", async () => {
    const budget = arrivingShareFull();
    const { stream, status } = recordedStream();
    const call = new GrpcCall(stream, new Map(), bytesCodec, MAX_MESSAGE, false, { budget });
    stream.onData(framed(Buffer.alloc(1000, 1)));
    stream.onEnd();
    await Promise.resolve();
    assert.equal(status(), undefined, "not ended");
    assert.equal((call.request as Buffer).length, 1000);
    assert.equal(budget.used, 32 * 1024 + 1005, "whole, it counts in the budget past the share");
    call.end();
    assert.equal(budget.used, 32 * 1024);
    assert.equal(budget.arriving, 32 * 1024, "the share is as it was");
  });

  it("counts a unary request's bytes as arriving once the read that brought them is handled", async () => {
    const budget = new InFlightBytes(64 * 1024);
    const { stream, status } = recordedStream();
    const call = new GrpcCall(stream, new Map(), bytesCodec, MAX_MESSAGE, false, { budget });
    stream.onData(framed(Buffer.alloc(1000, 1)).subarray(0, 600));
    assert.equal(budget.arriving, 0, "not while the read is handled");
    await Promise.resolve();
    assert.equal(budget.arriving, 600, "still arriving after it");
    stream.onData(framed(Buffer.alloc(1000, 1)).subarray(600));
    stream.onEnd();
    await Promise.resolve();
    assert.equal(budget.arriving, 0, "whole at the client's end");
    assert.equal(status(), undefined);
    call.end();
    assert.equal(budget.used, 0);
  });

  it("ends RESOURCE_EXHAUSTED a unary request still arriving past the share once its read is handled", async () => {
    const budget = arrivingShareFull();
    const { stream, status } = recordedStream();
    const call = new GrpcCall(stream, new Map(), bytesCodec, MAX_MESSAGE, false, { budget });
    stream.onData(framed(Buffer.alloc(1000, 1)).subarray(0, 600));
    assert.equal(status(), undefined, "not before the read is handled");
    await Promise.resolve();
    assert.equal(status(), String(GRPC_STATUS.RESOURCE_EXHAUSTED));
    assert.equal(call.request, undefined, "nothing reaches the handler");
    assert.equal(budget.used, 32 * 1024, "its bytes are given back");
    assert.equal(budget.arriving, 32 * 1024);
  });

  it("ends RESOURCE_EXHAUSTED at once a stream's message still arriving past the share", () => {
    const budget = arrivingShareFull();
    const { stream, status } = recordedStream();
    new GrpcCall(stream, new Map(), bytesCodec, MAX_MESSAGE, true, { budget });
    stream.onData(framed(Buffer.alloc(1000, 1)).subarray(0, 600));
    assert.equal(status(), String(GRPC_STATUS.RESOURCE_EXHAUSTED));
    assert.equal(budget.used, 32 * 1024, "its bytes are given back");
    assert.equal(budget.arriving, 32 * 1024);
  });
});

/** A 64 KiB budget whose share of arriving bytes (half) other requests hold whole. */
function arrivingShareFull(): InFlightBytes {
  const budget = new InFlightBytes(64 * 1024);
  assert.ok(budget.take(32 * 1024) && budget.markArriving(32 * 1024));
  return budget;
}
