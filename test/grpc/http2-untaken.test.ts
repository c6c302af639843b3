/**
 * @module The gRPC door's HTTP/2 bounds what a client leaves untaken (lib/grpc/http2/connection.ts
 * `maxPendingBytes`): answers held for a closed window up to the bound, the stream that would pass it reset
 * ENHANCE_YOUR_CALM while the connection goes on; and, for a client that opened its windows wide and does not read,
 * what waits in the socket counted too. Paths, not timings.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { connect as connectHttp2 } from "node:http2";
import { connect as connectTcp } from "node:net";
import { after, before, describe, it } from "node:test";
import { UntakenAnswers } from "../../lib/core/untaken-answers.js";
import { CLIENT_PREFACE, FLAG, FRAME, frameHeader, H2_ERROR, words } from "../../lib/grpc/http2/frames.js";
import { encodeLiteralHeaders, encodeResponseHeaders } from "../../lib/grpc/http2/hpack.js";
import { waitUntil } from "../support/consumer-helpers.js";
import { echo, parseFrames, serve } from "../support/http2-server.js";

describe("an HTTP/2 connection whose client asks but does not read", () => {
  const BOUND = 64 * 1024;
  let server: Awaited<ReturnType<typeof serve>>;
  /** Answers 1 MiB to every request, in the turn after it ended; counts the answers written (or cut short). */
  const answered = { times: 0 };
  let bigServer: Awaited<ReturnType<typeof serve>>;
  /** The big server's own ledger of untaken answers (a bound far above the connection's: only the connection's acts). */
  const bigLedger = new UntakenAnswers(1024 * 1024 * 1024);
  before(async () => {
    server = await serve(echo(8), 100, BOUND);
    bigServer = await serve(
      (stream) => {
        stream.onEnd = () =>
          setImmediate(() => {
            stream.respond(encodeResponseHeaders([]));
            stream.write(Buffer.alloc(1024 * 1024));
            stream.end(encodeLiteralHeaders([["x-done", "1"]]));
            answered.times++;
          });
      },
      100,
      4 * 1024 * 1024,
      bigLedger,
    );
  });
  after(async () => {
    await server.close();
    await bigServer.close();
  });

  it("holds answers for a closed window up to its bound; the stream that goes past it is reset, the rest served", async () => {
    // A window of 0: no DATA may be sent, so every answer's bytes wait on the server.
    const client = connectHttp2(`http://127.0.0.1:${server.port}`, { settings: { initialWindowSize: 0 } });
    client.on("error", () => {});
    const ask = (bytes: number) => {
      const request = client.request({ ":method": "POST", ":path": "/echo" });
      request.on("error", () => {});
      request.end(Buffer.alloc(bytes, 1));
      return request;
    };
    try {
      const within = ask(4 * 1024); // 32 KiB of answer waiting: within the 64 KiB bound
      await once(within, "response");
      const past = ask(8 * 1024); // 64 KiB more: past it
      await new Promise((resolve) => past.on("close", resolve));
      assert.equal(past.rstCode, H2_ERROR.ENHANCE_YOUR_CALM);
      assert.equal(within.closed, false, "the stream within the bound still waits for its window");
      assert.equal(client.closed || client.destroyed, false, "the connection stays");
    } finally {
      client.destroy();
    }
  });

  it("counts what waits in a socket the client does not read, when its windows are wide open", async () => {
    const socket = connectTcp(bigServer.port, "127.0.0.1");
    socket.on("error", () => {});
    await once(socket, "connect");
    socket.pause(); // never read until every answer was made
    const wide = 2 ** 31 - 1;
    const settings = Buffer.alloc(6);
    settings.writeUInt16BE(4, 0); // SETTINGS_INITIAL_WINDOW_SIZE
    settings.writeUInt32BE(wide, 2);
    const request = encodeLiteralHeaders([
      [":method", "POST"],
      [":path", "/big"],
    ]);
    const streams = 40; // 40 MiB of answers: more than the socket buffers hold, ten times the 4 MiB bound
    socket.write(
      Buffer.concat([
        CLIENT_PREFACE,
        frameHeader(6, FRAME.SETTINGS, 0, 0),
        settings,
        frameHeader(4, FRAME.WINDOW_UPDATE, 0, 0),
        words(wide - 65_535),
        ...Array.from({ length: streams }, (_, i) => [
          frameHeader(request.length, FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 2 * i + 1),
          request,
        ]).flat(),
      ]),
    );
    while (answered.times < streams) await new Promise((r) => setTimeout(r, 10));
    // Checked before it is queued: an answer past the bound adds nothing to what the connection holds.
    assert.ok(bigLedger.held <= 4 * 1024 * 1024 + 64 * 1024, `${bigLedger.held} bytes held untaken`);
    // Frames counted as they arrive: resets for the bound, trailers (END_STREAM) for answers served whole.
    let [resets, done] = [0, 0];
    const reset = new Set<number>();
    const dataOf = new Map<number, number>();
    let tail = Buffer.alloc(0);
    socket.on("data", (c: Buffer) => {
      tail = Buffer.concat([tail, c]);
      const frames = parseFrames(tail);
      for (const f of frames) {
        if (f.type === FRAME.RST_STREAM && f.payload.readUInt32BE(0) === H2_ERROR.ENHANCE_YOUR_CALM) {
          resets++;
          reset.add(f.stream);
        }
        if (f.type === FRAME.DATA) dataOf.set(f.stream, (dataOf.get(f.stream) ?? 0) + f.payload.length);
        if (f.type === FRAME.HEADERS && (f.flags & FLAG.END_STREAM) !== 0) done++;
      }
      tail = tail.subarray(frames.reduce((n, f) => n + 9 + f.payload.length, 0));
    });
    socket.resume();
    while (resets + done < streams) await once(socket, "data");
    assert.ok(resets > 0, "answers past the bound were not queued, their streams reset");
    assert.ok(done > 0, "answers within it were served");
    for (const id of reset) assert.equal(dataOf.get(id) ?? 0, 0, `reset stream ${id} got none of its answer`);
    socket.destroy();
    await waitUntil(() => bigLedger.held === 0, "the closed connection's share is given back");
  });
});
