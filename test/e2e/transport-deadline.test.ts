/**
 * @module The SDK transport's timeout bounds the whole exchange: a broker whose connections never complete
 * (SYNs unanswered), and a request queued behind a held one on a full pool, both end as timeouts of the
 * request's own `timeoutMs`, not of undici's 10 s connect timeout or of the request ahead.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { HttpExchangeError } from "../../lib/client/transport/http-connections.js";
import { HttpTransport } from "../../lib/client/transport/http-transport.js";
import { ErrorCode, NimbusError } from "../../lib/core/errors.js";

/** A listening socket that never accepts, its backlog filled: the next connection's SYN is never answered. */
const BLACKHOLE = `
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
port = s.getsockname()[1]
fillers = []
for i in range(3):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(("127.0.0.1", port))
    except BlockingIOError: pass
    fillers.append(c)
print(port, flush=True)
time.sleep(120)
`;

/** The request's error: a SYSTEM_BUSY whose cause is the exchange's own timeout. */
function assertTimedOut(err: unknown, timeoutMs: number): void {
  assert.ok(err instanceof NimbusError, String(err));
  assert.equal(err.code, ErrorCode.SYSTEM_BUSY);
  assert.ok(err.cause instanceof HttpExchangeError, String(err.cause));
  assert.equal(err.cause.timedOut, true, err.message);
  assert.match(err.message, new RegExp(`timed out after ${timeoutMs} ms`));
}

describe("SDK transport: one deadline for the whole exchange", () => {
  const children: ChildProcessWithoutNullStreams[] = [];
  const servers: http.Server[] = [];
  after(() => {
    for (const c of children) c.kill("SIGKILL");
    for (const s of servers) s.closeAllConnections();
    for (const s of servers) s.close();
  });

  it("connecting to a broker that never completes the handshake ends at the request's timeout", async () => {
    const py = spawn("python3", ["-c", BLACKHOLE]);
    children.push(py);
    const port = await new Promise<string>((resolve, reject) => {
      py.stdout.once("data", (d) => resolve(String(d).trim()));
      py.once("error", reject);
    });
    // The process's shared pool: its connect timeout is undici's 10 s; only the request's deadline is 500 ms.
    const transport = new HttpTransport({ endpoints: `http://127.0.0.1:${port}`, timeoutMs: 500 });
    const err = await transport.request("GET", "/health").then(
      () => undefined,
      (e: unknown) => e,
    );
    assertTimedOut(err, 500);
  });

  it("a request queued behind a held one on a full pool ends at its own timeout, the held one still waiting", async () => {
    const held: http.ServerResponse[] = [];
    const server = http.createServer((_req, res) => {
      held.push(res); // never answered until the test ends
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const transport = new HttpTransport({
      endpoints: `http://127.0.0.1:${port}`,
      connections: { connections: 1, pipelining: 1 },
    });
    try {
      let firstSettled = false;
      const first = transport.request("GET", "/health", undefined, { timeoutMs: 20_000 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      void first.then(() => {
        firstSettled = true;
      });
      while (held.length === 0) await new Promise((r) => setImmediate(r));
      const second = await transport.request("GET", "/health", undefined, { timeoutMs: 300 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assertTimedOut(second, 300);
      assert.equal(firstSettled, false, "the queued request waited for the one ahead of it");
      assert.equal(held.length, 1, "the queued request never reached the server");
      for (const res of held) res.end("{}");
      await first;
    } finally {
      await transport.close();
    }
  });
});
