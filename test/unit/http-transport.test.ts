/**
 * @module What the transport calls "no broker answered" (the SDK's failover to a slave): a refused connection
 * or API Gateway's 502/503/504, never a broker's own answer, even a busy one; and the region a request to
 * another region's API is signed for.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, it } from "node:test";
import { HttpTransport, isUnreachable, regionOfApiUrl } from "../../lib/client/transport/http-transport.js";

describe("HttpTransport: unreachable or answered", () => {
  let server: Server;
  let url = "";
  before(async () => {
    server = createServer((req, res) => {
      const [status, body] =
        req.url === "/gateway"
          ? [503, JSON.stringify({ message: "Service Unavailable" })]
          : [503, JSON.stringify({ code: "SYSTEM_BUSY", message: "throttled" })];
      res.writeHead(status, { "content-type": "application/json" }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const failure = (t: HttpTransport, path: string) =>
    t.request("GET", path).then(
      () => assert.fail("answered"),
      (err: unknown) => err,
    );

  it("API Gateway's 503 without our code is no answer; a broker's SYSTEM_BUSY is an answer", async () => {
    const t = new HttpTransport({ endpoints: url });
    assert.equal(isUnreachable(await failure(t, "/gateway")), true);
    assert.equal(isUnreachable(await failure(t, "/busy")), false);
  });

  it("a refused connection is no answer", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    assert.equal(
      isUnreachable(await failure(new HttpTransport({ endpoints: `http://127.0.0.1:${port}` }), "/x")),
      true,
    );
  });

  it("reads the region of an API Gateway URL, for signing", () => {
    assert.equal(regionOfApiUrl("https://abc123.execute-api.us-west-2.amazonaws.com/pull"), "us-west-2");
    assert.equal(regionOfApiUrl("https://abc123.execute-api.eu-central-1.amazonaws.com"), "eu-central-1");
    assert.equal(regionOfApiUrl("http://127.0.0.1:9876/pull"), undefined);
    assert.equal(regionOfApiUrl("https://nimbus.example.com/pull"), undefined);
  });
});
