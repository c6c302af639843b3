/**
 * @module The gRPC door's own HTTP/2 (lib/grpc/http2): HPACK against RFC 7541's examples; a connection against
 * Node's HTTP/2 client (another implementation: Huffman strings, its dynamic table, CONTINUATION frames, flow
 * control both ways, a reset) and against hand-made frames for what a well-behaved client never sends (a bad
 * preface, a stream id the client may not use, DATA past the window, PING). Paths, not timings.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { connect as connectHttp2 } from "node:http2";
import { connect as connectTcp, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { CLIENT_PREFACE, FLAG, FRAME, frameHeader, H2_ERROR, words } from "../../lib/grpc/http2/frames.js";
import { encodeLiteralHeaders, encodeResponseHeaders, HpackDecoder } from "../../lib/grpc/http2/hpack.js";
import { echo, parseFrames, type RawFrame, serve } from "../support/http2-server.js";

describe("HPACK", () => {
  it("decodes RFC 7541 C.4's three requests (Huffman strings, one dynamic table)", () => {
    const decoder = new HpackDecoder();
    const blocks = [
      ["828684418cf1e3c2e5f23a6ba0ab90f4ff", ":method GET,:scheme http,:path /,:authority www.example.com", 57],
      [
        "828684be5886a8eb10649cbf",
        ":method GET,:scheme http,:path /,:authority www.example.com,cache-control no-cache",
        110,
      ],
      [
        "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf",
        ":method GET,:scheme https,:path /index.html,:authority www.example.com,custom-key custom-value",
        164,
      ],
    ] as const;
    for (const [hex, expected, tableSize] of blocks) {
      const got: string[] = [];
      decoder.decode(Buffer.from(hex, "hex"), (n, v) => got.push(`${n} ${v}`));
      assert.equal(got.join(","), expected);
      assert.equal(decoder.tableSize, tableSize);
    }
  });

  it("refuses an index past the table, a truncated string, and bad Huffman padding", () => {
    for (const hex of ["be", "0f2f", "4003616263", "41 8c f1e3".replaceAll(" ", ""), "4082ffff0161"]) {
      assert.throws(() => new HpackDecoder().decode(Buffer.from(hex, "hex"), () => {}), /CompressionError|header/);
    }
  });

  it("encodes literals that a decoder reads back without touching its table", () => {
    const decoder = new HpackDecoder();
    const got: string[] = [];
    decoder.decode(encodeResponseHeaders([["grpc-message", "a b%20c"]]), (n, v) => got.push(`${n}=${v}`));
    assert.deepEqual(got, [":status=200", "grpc-message=a b%20c"]);
    assert.equal(decoder.tableSize, 0);
  });
});

describe("an HTTP/2 connection with Node's client", () => {
  let server: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    server = await serve(echo(8));
  });
  after(() => server.close());

  it("serves a request with large headers (CONTINUATION) and a body over both windows, to a client with a small window", async () => {
    const client = connectHttp2(`http://127.0.0.1:${server.port}`, { settings: { initialWindowSize: 1000 } });
    try {
      const body = Buffer.alloc(200 * 1024, 7); // over the 64 KiB stream window: WINDOW_UPDATEs needed
      const request = client.request({ ":method": "POST", ":path": "/echo", "x-big": "v".repeat(20_000) });
      request.end(body);
      const [headers] = (await once(request, "response")) as [Record<string, string>];
      assert.equal(headers["x-path"], "/echo");
      const chunks: Buffer[] = [];
      request.on("data", (c: Buffer) => chunks.push(c));
      const trailersCame = once(request, "trailers");
      const ended = once(request, "end");
      const [trailers] = (await trailersCame) as [Record<string, string>];
      await ended;
      assert.equal(Buffer.concat(chunks).length, body.length * 8);
      assert.equal(trailers["x-bytes"], String(body.length * 8));
    } finally {
      client.close();
    }
  });

  it("serves many streams on one connection", async () => {
    const client = connectHttp2(`http://127.0.0.1:${server.port}`);
    try {
      const answers = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const request = client.request({ ":method": "POST", ":path": `/s${i}` });
          request.end(Buffer.from(`m${i}`));
          const chunks: Buffer[] = [];
          request.on("data", (c: Buffer) => chunks.push(c));
          await once(request, "end");
          return Buffer.concat(chunks).toString();
        }),
      );
      answers.forEach((a, i) => {
        assert.equal(a, `m${i}`.repeat(8));
      });
    } finally {
      client.close();
    }
  });
});

/**
 * A raw client: sends `frames` after the preface and a SETTINGS; returns the frames the server sent once `until`
 * holds of them or the server closed the connection (the test's timeout guards).
 */
async function rawExchange(
  port: number,
  frames: Buffer[],
  options: { preface?: Buffer; until?: (frames: RawFrame[]) => boolean } = {},
) {
  const socket: Socket = connectTcp(port, "127.0.0.1");
  await once(socket, "connect");
  const received: Buffer[] = [];
  let closed = false;
  socket.on("data", (c: Buffer) => received.push(c));
  socket.on("error", () => {});
  const gone = once(socket, "close").then(() => {
    closed = true;
  });
  socket.write(Buffer.concat([options.preface ?? CLIENT_PREFACE, frameHeader(0, FRAME.SETTINGS, 0, 0), ...frames]));
  while (!closed && !(options.until?.(parseFrames(Buffer.concat(received))) ?? false))
    await Promise.race([gone, once(socket, "data")]);
  socket.destroy();
  return { frames: parseFrames(Buffer.concat(received)), closed };
}

describe("an HTTP/2 connection against hand-made frames", () => {
  let server: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    server = await serve(echo(1));
  });
  after(() => server.close());
  const goAwayCode = (frames: { type: number; payload: Buffer }[]) =>
    frames.find((f) => f.type === FRAME.GOAWAY)?.payload.readUInt32BE(4);
  const headers = encodeLiteralHeaders([
    [":method", "POST"],
    [":path", "/x"],
  ]);

  it("answers a PING with its payload, and a stream id a client may not use with GOAWAY PROTOCOL_ERROR", async () => {
    const ping = Buffer.from("12345678");
    const { frames } = await rawExchange(server.port, [
      frameHeader(8, FRAME.PING, 0, 0),
      ping,
      frameHeader(headers.length, FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 2),
      headers,
    ]);
    const pong = frames.find((f) => f.type === FRAME.PING);
    assert.equal(pong?.flags, FLAG.ACK);
    assert.deepEqual(pong?.payload, ping);
    assert.equal(goAwayCode(frames), H2_ERROR.PROTOCOL_ERROR);
  });

  it("ends the connection on DATA for a stream never opened, and on a WINDOW_UPDATE of 0", async () => {
    const idle = await rawExchange(server.port, [frameHeader(3, FRAME.DATA, 0, 5), Buffer.from("abc")]);
    assert.equal(goAwayCode(idle.frames), H2_ERROR.PROTOCOL_ERROR);
    const zero = await rawExchange(server.port, [frameHeader(4, FRAME.WINDOW_UPDATE, 0, 0), words(0)]);
    assert.equal(goAwayCode(zero.frames), H2_ERROR.PROTOCOL_ERROR);
  });

  it("ends the connection for an interrupted header block and for a malformed one (COMPRESSION_ERROR)", async () => {
    const interrupted = await rawExchange(server.port, [
      frameHeader(headers.length, FRAME.HEADERS, 0, 1),
      headers,
      frameHeader(8, FRAME.PING, 0, 0),
      Buffer.alloc(8),
    ]);
    assert.equal(goAwayCode(interrupted.frames), H2_ERROR.PROTOCOL_ERROR);
    const bad = Buffer.from([0xbe]); // index 62: the dynamic table is empty
    const malformed = await rawExchange(server.port, [frameHeader(1, FRAME.HEADERS, FLAG.END_HEADERS, 1), bad]);
    assert.equal(goAwayCode(malformed.frames), H2_ERROR.COMPRESSION_ERROR);
  });

  it("ends the connection for a header block of over 64 frames (empty CONTINUATIONs)", async () => {
    const empties = Array.from({ length: 70 }, () => frameHeader(0, FRAME.CONTINUATION, 0, 1));
    const { frames } = await rawExchange(server.port, [frameHeader(0, FRAME.HEADERS, 0, 1), ...empties]);
    assert.equal(goAwayCode(frames), H2_ERROR.ENHANCE_YOUR_CALM);
  });

  it("stops reading a client that does not read its answers, and answers every PING once it does", async () => {
    const count = 400_000; // 6.8 MB of PING ACKs: more than the socket buffers hold
    const socket = connectTcp(server.port, "127.0.0.1");
    await once(socket, "connect");
    const ping = Buffer.concat([frameHeader(8, FRAME.PING, 0, 0), Buffer.alloc(8)]);
    socket.write(Buffer.concat([CLIENT_PREFACE, frameHeader(0, FRAME.SETTINGS, 0, 0)]));
    socket.pause();
    const batch = Buffer.concat(Array.from({ length: 1000 }, () => ping));
    for (let i = 0; i < count / 1000; i++) if (!socket.write(batch)) await once(socket, "drain");
    // The server paused its reading at least once while its answers waited for this client.
    while (server.paused.times === 0) await new Promise((r) => setTimeout(r, 10));
    let acks = 0;
    let tail = Buffer.alloc(0);
    socket.on("data", (c: Buffer) => {
      tail = Buffer.concat([tail, c]);
      const frames = parseFrames(tail);
      acks += frames.filter((f) => f.type === FRAME.PING && f.flags === FLAG.ACK).length;
      const used = frames.reduce((n, f) => n + 9 + f.payload.length, 0);
      tail = tail.subarray(used);
    });
    socket.resume();
    while (acks < count) await once(socket, "data");
    assert.equal(acks, count);
    socket.destroy();
  });

  it("drops a connection that does not open with HTTP/2's preface", async () => {
    const { frames, closed } = await rawExchange(server.port, [], {
      preface: Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
    });
    assert.ok(closed);
    assert.equal(goAwayCode(frames), undefined);
  });

  it("a stream over the limit is refused (REFUSED_STREAM); a client's reset cancels its stream", async () => {
    const resets: number[] = [];
    const one = await serve((stream) => {
      stream.onReset = () => resets.push(stream.id);
    }, 1);
    try {
      const { frames } = await rawExchange(
        one.port,
        [
          frameHeader(headers.length, FRAME.HEADERS, FLAG.END_HEADERS, 1),
          headers,
          frameHeader(headers.length, FRAME.HEADERS, FLAG.END_HEADERS, 3),
          headers,
          frameHeader(4, FRAME.RST_STREAM, 0, 1),
          words(H2_ERROR.CANCEL),
        ],
        { until: (got) => got.some((f) => f.type === FRAME.RST_STREAM && f.stream === 3) },
      );
      // The client's reset came in the same write: the server has read it, or reads it next.
      while (resets.length === 0) await new Promise((r) => setImmediate(r));
      const refused = frames.find((f) => f.type === FRAME.RST_STREAM && f.stream === 3);
      assert.equal(refused?.payload.readUInt32BE(0), H2_ERROR.REFUSED_STREAM);
      assert.deepEqual(resets, [1]);
    } finally {
      await one.close();
    }
  });

  it("serves a request sent in one-byte pieces", { timeout: 60_000 }, async () => {
    const socket = connectTcp(server.port, "127.0.0.1");
    await once(socket, "connect");
    const bytes = Buffer.concat([
      CLIENT_PREFACE,
      frameHeader(0, FRAME.SETTINGS, 0, 0),
      frameHeader(headers.length, FRAME.HEADERS, FLAG.END_HEADERS, 1),
      headers,
      frameHeader(3, FRAME.DATA, FLAG.END_STREAM, 1),
      Buffer.from("abc"),
    ]);
    const received: Buffer[] = [];
    socket.on("data", (c: Buffer) => received.push(c));
    for (const byte of bytes) {
      socket.write(Buffer.from([byte]));
      await new Promise((r) => setImmediate(r));
    }
    // The echo's DATA frame: its 9-byte header (3 bytes, DATA, no flags, stream 1), then the bytes sent.
    const answer = Buffer.concat([frameHeader(3, FRAME.DATA, 0, 1), Buffer.from("abc")]);
    while (!Buffer.concat(received).includes(answer)) await once(socket, "data");
    socket.destroy();
  });
});
