/**
 * @module A server closing while a connection waits for its first byte (HTTP or remoting?). Such a connection is
 * not yet HTTP's, so HTTP's `closeAllConnections` cannot close it: handed to HTTP after that, a client that kept
 * using it (a consumer's pulls on a keep-alive connection) held the server's close open without end. Now the
 * sniffer hands no connection on once its server stopped listening, and the local server closes the waiting ones
 * itself. Raw sockets, so the order of events is the test's own; the assertions are on what the socket gets.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { describe, it } from "node:test";
import { sniffRemoting } from "../../lib/remoting/index.js";
import { waitUntil } from "../support/consumer-helpers.js";
import { startTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

/** A raw connection that records what it receives and when it is closed. */
async function rawConnection(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = connect(port, "127.0.0.1");
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

describe("a server closing while a connection waits for its first byte", () => {
  it("the sniffer hands neither protocol a connection once its server stopped listening", async () => {
    const server: Server = createServer((_req, res) => res.end("served"));
    let toRemoting = 0;
    const sniffing = sniffRemoting(server, () => {
      toRemoting++;
      return true;
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const { port } = server.address() as AddressInfo;
    const http = await rawConnection(port);
    const remoting = await rawConnection(port);
    await waitUntil(() => sniffing.undecided === 2, "both connections waiting for their first byte");
    const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    http.socket.write("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
    remoting.socket.write(Buffer.from([0, 0, 0, 8, 0, 0, 0, 4]));
    await within(Promise.all([http.closed, remoting.closed]), "both connections closed");
    assert.equal(http.received(), "", "the HTTP request was not answered");
    assert.equal(toRemoting, 0, "the remoting door was not given the connection");
    await within(serverClosed, "the server's close");
  });

  it("the local server's close ends a connection that has sent nothing yet, and closes", async () => {
    const srv = await startTestServer("local");
    const sniffing = srv.server.sniffing;
    assert.ok(sniffing !== undefined, "the remoting door shares the HTTP port");
    const silent = await rawConnection(srv.server.port);
    await waitUntil(() => sniffing.undecided === 1, "the connection waiting for its first byte");
    await within(srv.close(), "the server's close");
    await within(silent.closed, "the silent connection closed");
    assert.equal(silent.received(), "");
    assert.equal(sniffing.undecided, 0);
  });
});
