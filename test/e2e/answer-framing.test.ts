/**
 * @module The local server frames every answer as API Gateway does: a `content-length` equal to the body's
 * bytes and no chunked transfer encoding, for a stored send, a refused one (4xx) and an unknown route, each
 * read through a keep-alive agent, as a stock HTTP/1.1 client reads them.
 */
import assert from "node:assert/strict";
import { Agent, type IncomingHttpHeaders, request } from "node:http";
import { after, before, describe, it } from "node:test";
import type { LocalServer } from "../../lib/dev/local-server.js";
import { api, b64, ok } from "../support/http.js";
import { type QuietServer, startQuietServer } from "../support/quiet-server.js";

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function call(agent: Agent, url: string, method: string, body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, headers: { "content-type": "application/json" } }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (d: Buffer) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

function assertFramedByLength(answer: RawAnswer): void {
  assert.equal(answer.headers["transfer-encoding"], undefined, "no chunked framing");
  assert.equal(answer.headers["content-length"], String(answer.body.byteLength));
  assert.ok(answer.body.byteLength > 0);
}

describe("answer framing: content-length, not chunks", () => {
  let quiet: QuietServer;
  let server: LocalServer;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  before(async () => {
    quiet = await startQuietServer("local");
    server = quiet.server;
    ok(await api(server.url).put("/topics/Framed", {}));
  });
  after(async () => {
    agent.destroy();
    await quiet.close();
  });

  it("a stored send, a refused send and an unknown route each carry their length, through a keep-alive agent", async () => {
    const sent = await call(
      agent,
      `${server.url}/send`,
      "POST",
      JSON.stringify({ topic: "Framed", messages: [{ body: b64("x".repeat(1024)) }] }),
    );
    assert.equal(sent.status, 200);
    assertFramedByLength(sent);
    assert.equal((JSON.parse(sent.body.toString("utf8")) as { sendStatus: string }).sendStatus, "SEND_OK");

    const refused = await call(agent, `${server.url}/send`, "POST", JSON.stringify({ topic: "Framed", messages: [] }));
    assert.equal(refused.status, 400);
    assertFramedByLength(refused);
    assert.equal(typeof (JSON.parse(refused.body.toString("utf8")) as { code: unknown }).code, "string");

    const unknown = await call(agent, `${server.url}/no-such-route`, "GET");
    assert.equal(unknown.status, 404);
    assertFramedByLength(unknown);
  });
});
