/**
 * @module Anonymous and slow uploads cannot hold the local server's memory: a
 * declared Content-Length reserves nothing, only bytes received count; bodies still arriving hold at most half the
 * cap, so stalled ones leave the rest to requests that come whole; a body that stalls is dropped with its
 * connection after the body timeout; with auth on, an unsigned request is refused from its headers, before
 * a byte of its body is read, and a signed one whose body is not the signed hash is refused after.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { type ClientRequest, type IncomingMessage, request } from "node:http";
import { after, before, describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { signNimbusRequest } from "../../lib/core/request-signing.js";
import type { LocalServer } from "../../lib/dev/local-server.js";
import { api, b64, ok } from "../support/http.js";
import { type QuietServer, startQuietServer } from "../support/quiet-server.js";

const ROOT = { accessKey: "root", secretKey: "root-secret-123" };
/** An answer's body as text. */
async function text(answer: IncomingMessage): Promise<string> {
  let body = "";
  for await (const chunk of answer) body += String(chunk);
  return body;
}

const until = async (done: () => boolean) => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 10));
};

/** A POST that sends its headers and `sent` bytes of the `declared` ones, then stalls. */
function stalled(url: string, declared: number, sent: string, headers: Record<string, string> = {}) {
  const req: ClientRequest = request(`${url}/send`, {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": String(declared), ...headers },
  });
  const closed = new Promise<void>((resolve) => req.on("close", () => resolve()));
  const answered = new Promise<IncomingMessage>((resolve) => req.on("response", resolve));
  req.on("error", () => {});
  req.write(sent);
  return { req, closed, answered };
}

describe("request bodies: bytes received, not declared", () => {
  let quiet: QuietServer;
  let server: LocalServer;
  before(async () => {
    quiet = await startQuietServer("local", { maxInFlightBytes: 1024 * 1024, bodyTimeoutMs: 500 });
    server = quiet.server;
    ok(await api(server.url).put("/topics/B", {}));
  });
  after(async () => quiet.close());

  it("stalled uploads declaring 900 KiB each hold only the bytes they sent, and are dropped after the body timeout", async () => {
    const uploads = Array.from({ length: 5 }, () => stalled(server.url, 900 * 1024, "{"));
    // Each has sent one byte: that is all the server holds for them (the cap is 1 MiB).
    await until(() => server.inFlightBytes === 5);
    ok(await api(server.url).post("/send", { topic: "B", messages: [{ body: b64("through") }] }));
    // Their bodies never come: each is dropped with its connection, and their bytes go back.
    await Promise.all(uploads.map((u) => u.closed));
    await until(() => server.inFlightBytes === 0);
    assert.equal(server.requestBytes.arriving, 0, "the dropped bodies count as arriving no more");
    for (const u of uploads) u.req.destroy();
  });
});

describe("request bodies still arriving: half the cap at most", () => {
  let quiet: QuietServer;
  let server: LocalServer;
  before(async () => {
    quiet = await startQuietServer("local", { maxInFlightBytes: 1024 * 1024 });
    server = quiet.server;
    ok(await api(server.url).put("/topics/H", {}));
  });
  after(async () => quiet.close());

  it("stalled uploads holding the arriving half refuse one more still arriving, and a whole send is served", async () => {
    // Two uploads of 256 KiB still arriving: the whole share of arriving bytes (512 KiB of the 1 MiB cap).
    const uploads = [0, 1].map(() => stalled(server.url, 300 * 1024, "x".repeat(256 * 1024)));
    await until(() => server.inFlightBytes === 512 * 1024);
    // A body of 400 KiB comes in reads of at most 64 KiB: the first does not fit the share (the cap has room), and
    // the request is answered 503 once all of it is sent.
    const third = stalled(server.url, 400 * 1024, "x".repeat(200 * 1024));
    third.req.end("x".repeat(200 * 1024));
    const refused = await third.answered;
    assert.equal(refused.statusCode, 503);
    const answer = JSON.parse(await text(refused)) as { code: string };
    assert.equal(answer.code, "SYSTEM_BUSY");
    // A send whose body comes whole is served beside them, past the share and within the cap.
    ok(await api(server.url).post("/send", { topic: "H", messages: [{ body: b64("whole") }] }));
    const status = await new NimbusApi({ endpoints: server.url, timeoutMs: 10_000 }).topicStatus("H");
    assert.equal(
      status.reduce((n, q) => n + q.maxOffset, 0),
      1,
      "the refused upload wrote nothing",
    );
    for (const u of uploads) u.req.destroy();
    await until(() => server.inFlightBytes === 0);
    assert.equal(server.requestBytes.arriving, 0, "nothing counts as arriving");
  });
});

describe("request bodies with auth on", () => {
  let quiet: QuietServer;
  let server: LocalServer;
  before(async () => {
    quiet = await startQuietServer("local", {
      auth: { root: { username: "root", password: ROOT.secretKey }, masterKey: new Uint8Array(randomBytes(32)) },
    });
    server = quiet.server;
  });
  after(async () => quiet.close());

  it("an unsigned upload gets 401 from its headers while its body is still unsent, holding nothing", async () => {
    const upload = stalled(server.url, 900 * 1024, "{");
    const answer = await upload.answered;
    assert.equal(answer.statusCode, 401);
    assert.equal(server.inFlightBytes, 0);
    upload.req.destroy();
  });

  it("a signed request whose body is not the one signed is 401 once read", async () => {
    const url = `${server.url}/topics/S`;
    const headers = signNimbusRequest({ method: "PUT", url, body: "{}", credentials: ROOT });
    const changed = await fetch(url, {
      method: "PUT",
      headers: { ...headers, "content-type": "application/json" },
      body: '{"perm":2}',
    });
    assert.equal(changed.status, 401);
    const signed = await fetch(url, {
      method: "PUT",
      headers: {
        ...signNimbusRequest({ method: "PUT", url, body: "{}", credentials: ROOT }),
        "content-type": "application/json",
      },
      body: "{}",
    });
    assert.equal(signed.status, 200, await signed.text());
  });
});
