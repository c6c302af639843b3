/**
 * @module A local server's close, with clients still connected: it ends, and hands no connection or request to
 * the broker after the point where it would close it.
 * - A connection still waiting for its first byte (HTTP or remoting? the sniffer decides) is not yet HTTP's, so
 *   HTTP's `closeAllConnections` cannot close it; handed to HTTP after that, a client that kept using it (a
 *   consumer's pulls on a keep-alive connection) held the close open without end. The sniffer hands no connection
 *   on once its server stopped listening, and the local server closes the waiting ones itself.
 * - A request arriving on a kept-alive connection once close has started is refused SYSTEM_BUSY and its connection
 *   closed: close waits for the requests it found, and none reaches the store after it.
 * Raw sockets, so the order of events is the test's own; the assertions are on what the socket gets.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, it, mock } from "node:test";
import { startLocalServer } from "../../lib/dev/local-server.js";
import { sniffRemoting } from "../../lib/remoting/index.js";
import { waitUntil } from "../support/consumer-helpers.js";
import { startTestServer } from "../support/server-fixture.js";
import { certificateUnavailable, testCertificate } from "../support/test-certificate.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

interface RawConnection {
  socket: Socket;
  received: () => string;
  closed: Promise<void>;
}

/**
 * A raw connection that records what it receives and when it is closed; `allowHalfOpen`: it never ends its side
 * (and so is never closed by the server's end alone).
 */
async function rawConnection(port: number, allowHalfOpen = false): Promise<RawConnection> {
  const socket = connect({ port, host: "127.0.0.1", allowHalfOpen });
  let received = "";
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString("latin1");
  });
  socket.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("error", reject);
  });
  return { socket, received: () => received, closed };
}

/** `promise`, or a failure once TEST_TIMEOUT_MS has passed (a failure bound, not a timing assertion). */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen`)), TEST_TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe("a local server's close with clients connected", () => {
  it("the sniffer hands neither protocol a connection once its server stopped listening", async () => {
    const server: Server = createServer((_req, res) => res.end("served"));
    let toRemoting = 0;
    const sniffing = sniffRemoting(server, (socket) => {
      toRemoting++;
      socket.destroy();
      return true;
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const { port } = server.address() as AddressInfo;
    const http = await rawConnection(port);
    const remoting = await rawConnection(port);
    try {
      await waitUntil(() => sniffing.undecided === 2, "both connections waiting for their first byte");
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      http.socket.write("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
      remoting.socket.write(Buffer.from([0, 0, 0, 8, 0, 0, 0, 4]));
      await within(Promise.all([http.closed, remoting.closed]), "both connections closed");
      assert.equal(http.received(), "", "the HTTP request was not answered");
      assert.equal(toRemoting, 0, "the remoting door was not given the connection");
      await within(serverClosed, "the server's close");
    } finally {
      http.socket.destroy();
      remoting.socket.destroy();
      server.close();
    }
  });

  it("the local server's close itself ends a connection that has sent nothing yet", async () => {
    // The sniffer's own wait for a first byte cannot run out first, however slow the machine.
    const srv = await startTestServer("local", undefined, { firstByteTimeoutMs: 3_600_000 });
    const silent = await rawConnection(srv.server.port);
    try {
      const sniffing = srv.server.sniffing;
      assert.ok(sniffing !== undefined, "the remoting door shares the HTTP port");
      await waitUntil(() => sniffing.undecided === 1, "the connection waiting for its first byte");
      const closeUndecided = mock.method(sniffing, "closeUndecided");
      await within(srv.close(), "the server's close");
      await within(silent.closed, "the silent connection closed");
      // Closed by the server's close, not by the sniffer's first-byte wait running out.
      assert.deepEqual(
        closeUndecided.mock.calls.map((c) => c.result),
        [1],
      );
      assert.equal(silent.received(), "");
    } finally {
      silent.socket.destroy();
      await srv.close();
    }
  });

  it("a request arriving once close has started is refused SYSTEM_BUSY and its connection closed", async () => {
    const srv = await startTestServer("local");
    const first = await rawConnection(srv.server.port);
    const second = await rawConnection(srv.server.port);
    const body = JSON.stringify({ topic: "CloseTopic", messages: [{ body: "eA==" }] });
    const half = Math.floor(body.length / 2);
    const startSend = (c: RawConnection) =>
      c.socket.write(
        `POST /send HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
          `content-length: ${body.length}\r\n\r\n${body.slice(0, half)}`,
      );
    try {
      // Two sends half-way when close starts: close waits for both.
      startSend(first);
      startSend(second);
      await waitUntil(() => srv.server.inFlightBytes >= 2 * half, "both sends' first halves held");
      const sniffing = srv.server.sniffing;
      assert.ok(sniffing !== undefined);
      const closeUndecided = mock.method(sniffing, "closeUndecided");
      const closing = srv.close();
      // Once close has stopped listening and closed the idle connections (the same turn), both sends still busy.
      await waitUntil(() => closeUndecided.mock.callCount() === 1, "close past its listening port");
      first.socket.write(body.slice(half));
      await waitUntil(() => first.received().includes("SEND_OK"), "the first send answered");
      // The same connection, kept alive, asks again while close waits for the second send.
      first.socket.write("GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
      await within(first.closed, "the first connection closed");
      second.socket.write(body.slice(half));
      await within(closing, "the server's close");
      const answers = first.received().split(/(?=HTTP\/1\.1 )/);
      assert.equal(answers.length, 2, first.received());
      assert.match(answers[0] ?? "", /^HTTP\/1\.1 200 /, "a send that arrived before close is served");
      assert.match(answers[1] ?? "", /^HTTP\/1\.1 503 /);
      assert.match(answers[1] ?? "", /connection: close/i);
      assert.match(answers[1] ?? "", /"code":"SYSTEM_BUSY","message":"the server is stopping"/);
      await waitUntil(() => second.received().includes("SEND_OK"), "the second send answered");
    } finally {
      first.socket.destroy();
      second.socket.destroy();
      await srv.close();
    }
  });

  it("an HTTPS server's close ends a connection still in its TLS handshake", {
    skip: certificateUnavailable,
  }, async () => {
    assert.ok(testCertificate !== undefined);
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-close-tls-"));
    const server = await startLocalServer({
      port: 0,
      storage: { kind: "local", dataDir },
      tls: { cert: testCertificate.cert, key: testCertificate.key },
    });
    const handshaking = await rawConnection(server.port);
    let closing: Promise<void> | undefined;
    try {
      const sniffing = server.sniffing;
      assert.ok(sniffing !== undefined);
      await waitUntil(() => sniffing.undecided === 1, "the connection in its TLS handshake");
      const closeUndecided = mock.method(sniffing, "closeUndecided");
      closing = server.close();
      await within(closing, "the server's close");
      await within(handshaking.closed, "the connection closed");
      assert.deepEqual(
        closeUndecided.mock.calls.map((c) => c.result),
        [1],
      );
    } finally {
      handshaking.socket.destroy();
      await (closing ?? server.close()).finally(() => rmSync(dataDir, { recursive: true, force: true }));
    }
  });

  it("a refused upgrade to the push channel does not hold the close, though its client never closes its side", async () => {
    const srv = await startTestServer("local");
    const upgrade = await rawConnection(srv.server.port, true);
    try {
      upgrade.socket.write(
        "GET /not-the-channel HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: Upgrade\r\nupgrade: websocket\r\n" +
          "sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
      );
      await waitUntil(() => upgrade.received().startsWith("HTTP/1.1 404 "), "the upgrade refused");
      await within(srv.close(), "the server's close");
    } finally {
      upgrade.socket.destroy();
      await srv.close();
    }
  });
});
