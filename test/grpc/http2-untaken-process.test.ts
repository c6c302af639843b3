/**
 * @module The bounds on answers the gRPC door's clients leave untaken (lib/grpc/http2/connection.ts `sendData`,
 * lib/core/untaken-answers.ts): a small answer has an eighth more room than a connection's bound, and the sum over
 * the process's connections is bounded too, a connection's share given back when it closes; past it, a new call is
 * refused and the connection holding the largest share closed. Clients at a window of 0 (Node's HTTP/2 client), so
 * every answer's DATA waits on the server. Paths, not timings.
 */
import assert from "node:assert/strict";
import { type ClientHttp2Session, connect } from "node:http2";
import { after, before, describe, it } from "node:test";
import { UntakenAnswers } from "../../lib/core/untaken-answers.js";
import { H2_ERROR } from "../../lib/grpc/http2/frames.js";
import { encodeLiteralHeaders, encodeResponseHeaders } from "../../lib/grpc/http2/hpack.js";
import type { RequestHeaders, ServerStream } from "../../lib/grpc/http2/index.js";
import { waitUntil } from "../support/consumer-helpers.js";
import { serve } from "../support/http2-server.js";

const KiB = 1024;

/** Answers `/<bytes>` with that many bytes of DATA in one payload. */
function sized(stream: ServerStream, headers: RequestHeaders): void {
  stream.onEnd = () => {
    const bytes = Number((headers.get(":path")?.[0] ?? "/0").slice(1));
    stream.respond(encodeResponseHeaders([]));
    stream.write(Buffer.alloc(bytes, 7));
    stream.end(encodeLiteralHeaders([["x-bytes", String(bytes)]]));
  };
}

/** A client whose windows are 0: the server holds every answer's DATA. */
function windowless(port: number): ClientHttp2Session {
  const client = connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 0 } });
  client.on("error", () => {});
  return client;
}

/** Asks `/<bytes>`; resolves with the reset code, or "held" once the answer's headers came and it was not reset. */
function ask(client: ClientHttp2Session, bytes: number) {
  const request = client.request({ ":method": "POST", ":path": `/${bytes}` });
  request.on("error", () => {});
  request.end();
  const closed = new Promise<number>((resolve) => request.on("close", () => resolve(request.rstCode ?? 0)));
  return { request, closed };
}

describe("untaken answers: a small answer's room", () => {
  const BOUND = 512 * KiB;
  const ledger = new UntakenAnswers(1024 * 1024 * 1024);
  let server: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    server = await serve(sized, 100, BOUND, ledger);
  });
  after(() => server.close());

  it("lets an answer of up to 64 KiB pass the connection's bound by an eighth, not a larger one", async () => {
    const client = windowless(server.port);
    try {
      const big = ask(client, 480 * KiB);
      await waitUntil(() => ledger.held >= 480 * KiB, "the large answer waits for its window");
      const small = ask(client, 40 * KiB); // 520 KiB in all: past 512, within 576
      await waitUntil(() => ledger.held >= 520 * KiB || small.request.closed, "the small answer is held beside it");
      assert.equal(small.request.closed, false, "the small answer was not reset");
      const mid = ask(client, 70 * KiB); // not small: held to the 512 KiB
      await waitUntil(() => mid.request.closed || ledger.held >= 590 * KiB, "reset, or held (the bound missed)");
      assert.ok(mid.request.closed, `held past the bound: ${ledger.held}`);
      assert.equal(await mid.closed, H2_ERROR.ENHANCE_YOUR_CALM);
      assert.equal(small.request.closed, false, "the small answer still waits for its window");
      assert.equal(big.request.closed, false, "so does the large one");
      assert.ok(ledger.held < 600 * KiB, `the reset answer was not queued: ${ledger.held} held`);
    } finally {
      client.destroy();
    }
    await waitUntil(() => ledger.held === 0, "the connection's share is given back");
  });
});

describe("untaken answers across the process's connections", () => {
  const CONNECTION_BOUND = 256 * KiB;
  const ledger = new UntakenAnswers(384 * KiB);
  let server: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    server = await serve(sized, 100, CONNECTION_BOUND, ledger);
  });
  after(() => server.close());

  it("resets an answer within its connection's bound but past the process's, and serves it once another leaves", async () => {
    const first = windowless(server.port);
    const second = windowless(server.port);
    try {
      ask(first, 200 * KiB);
      await waitUntil(() => ledger.held >= 200 * KiB, "the first connection holds its answer");
      const refused = ask(second, 200 * KiB); // 200 KiB of the second's 256, but 400 of the process's 384
      await waitUntil(() => refused.request.closed || ledger.held >= 400 * KiB, "reset, or held (the bound missed)");
      assert.ok(refused.request.closed, `held past the process's bound: ${ledger.held}`);
      assert.equal(await refused.closed, H2_ERROR.ENHANCE_YOUR_CALM);
      assert.equal(second.closed || second.destroyed, false, "the connection goes on");
      first.destroy();
      await waitUntil(() => ledger.held < 200 * KiB, "the first connection's share is given back");
      const held = ask(second, 200 * KiB);
      await waitUntil(() => ledger.held >= 200 * KiB || held.request.closed, "the same answer is held now");
      assert.equal(held.request.closed, false, "and not reset");
    } finally {
      first.destroy();
      second.destroy();
    }
    await waitUntil(() => ledger.held === 0, "every share is given back");
  });
});

describe("untaken answers past the process's bound", () => {
  const ledger = new UntakenAnswers(384 * KiB);
  let server: Awaited<ReturnType<typeof serve>>;
  /** As the gRPC server admits a call: refused at once while answers not taken are past a bound. */
  const admitted = (stream: ServerStream, headers: RequestHeaders) => {
    if (stream.answersFull)
      stream.respond(
        encodeLiteralHeaders([
          [":status", "200"],
          ["x-refused", "1"],
        ]),
        true,
      );
    else sized(stream, headers);
  };
  before(async () => {
    server = await serve(admitted, 100, 1024 * KiB, ledger);
  });
  after(() => server.close());

  it("closes the connection holding the largest share once a call is refused, and serves calls again", async () => {
    const hog = windowless(server.port);
    const other = windowless(server.port);
    const taking = connect(`http://127.0.0.1:${server.port}`);
    taking.on("error", () => {});
    const call = (bytes: number) =>
      new Promise<{ refused: boolean; got: number }>((resolve, reject) => {
        const request = taking.request({ ":method": "POST", ":path": `/${bytes}` });
        let [refused, got] = [false, 0];
        request.on("response", (h) => {
          refused = h["x-refused"] === "1";
        });
        request.on("data", (chunk: Buffer) => {
          got += chunk.length;
        });
        request.on("end", () => resolve({ refused, got }));
        request.on("error", reject);
        request.end();
      });
    let hogClosed = false;
    hog.on("close", () => {
      hogClosed = true;
    });
    try {
      ask(hog, 300 * KiB);
      await waitUntil(() => ledger.held >= 300 * KiB, "the hog holds its answer");
      for (let i = 1; i <= 3; i++) {
        ask(other, 40 * KiB); // small: an eighth more room, so the process passes its 384 KiB
        await waitUntil(() => ledger.held >= (300 + 40 * i) * KiB, "the other's small answer is held");
      }
      assert.deepEqual(await call(1), { refused: true, got: 0 }, "past the bound: refused before any work");
      await waitUntil(() => hogClosed, "the connection holding the largest share is closed");
      await waitUntil(() => ledger.held <= 120 * KiB + 1024, "its share is given back");
      assert.deepEqual(await call(100 * KiB), { refused: false, got: 100 * KiB }, "calls are served again");
      assert.equal(other.closed || other.destroyed, false, "the smaller holder stays");
    } finally {
      hog.destroy();
      other.destroy();
      taking.destroy();
    }
  });
});
