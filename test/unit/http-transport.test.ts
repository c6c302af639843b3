/**
 * @module What the transport calls "no broker answered" (the SDK's failover to a slave): a refused connection
 * or API Gateway's 502/503/504, never a broker's own answer, even a busy one; and the region a request to
 * another region's API is signed for; and a refusal made before anything ran (the shedder's, a gateway's 429)
 * sent again, a bounded number of times, while any other busy answer is final.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, it } from "node:test";
import { HttpTransport, isUnreachable, regionOfApiUrl } from "../../lib/client/transport/http-transport.js";
import { ErrorCode, isNimbusError, SHED_MARK } from "../../lib/core/errors.js";

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

describe("HttpTransport: a shed request is sent again", () => {
  let server: Server;
  let url = "";
  /** Requests seen per path; `/shed-once` and `/throttled-once` refuse their first, `/shed` and `/busy` all. */
  const seen = new Map<string, number>();
  before(async () => {
    server = createServer((req, res) => {
      const path = req.url ?? "";
      const n = (seen.get(path) ?? 0) + 1;
      seen.set(path, n);
      const shed = JSON.stringify({ code: "SYSTEM_BUSY", message: `${SHED_MARK} broker busy: waited` });
      const [status, body] =
        path === "/shed" || (path === "/shed-once" && n === 1)
          ? [503, shed]
          : path === "/throttled-once" && n === 1
            ? [429, JSON.stringify({ message: "Too Many Requests" })]
            : path === "/busy"
              ? [503, JSON.stringify({ code: "SYSTEM_BUSY", message: "the append took too long" })]
              : [200, JSON.stringify({ ok: true })];
      res.writeHead(status, { "content-type": "application/json" }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("answers the second attempt after one shed refusal or one gateway 429", async () => {
    const t = new HttpTransport({ endpoints: url, timeoutMs: 60_000 });
    assert.deepEqual(await t.request("POST", "/shed-once", {}), { ok: true });
    assert.deepEqual(await t.request("POST", "/throttled-once", {}), { ok: true });
    assert.equal(seen.get("/shed-once"), 2);
    assert.equal(seen.get("/throttled-once"), 2);
  });

  it("gives up after shedRetries more attempts, and never sends again a busy answer that may have run", async () => {
    const t = new HttpTransport({ endpoints: url, timeoutMs: 60_000, shedRetries: 1 });
    const shed = await t.request("POST", "/shed", {}).catch((err: unknown) => err);
    assert.ok(isNimbusError(shed, ErrorCode.SYSTEM_BUSY), String(shed));
    assert.equal(seen.get("/shed"), 2, "one attempt and one retry");
    const busy = await t.request("POST", "/busy", {}).catch((err: unknown) => err);
    assert.ok(isNimbusError(busy, ErrorCode.SYSTEM_BUSY), String(busy));
    assert.equal(seen.get("/busy"), 1, "not shed: its outcome is unknown, so it is final here");
    const off = new HttpTransport({ endpoints: url, timeoutMs: 60_000, shedRetries: 0 });
    await off.request("POST", "/shed", {}).catch(() => undefined);
    assert.equal(seen.get("/shed"), 3, "shedRetries 0: one attempt");
  });
});
