/**
 * @module Request targets that mention the console but are not its files, sent as raw HTTP/1.1 (a stock client
 * would not send them): one that is no URL at all is answered by the API's router as a bad target, 4xx with
 * `{code, message}`, never a 500; `/console` itself redirects to the console's folder.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { describe, it } from "node:test";
import { useTestServer } from "../support/server-fixture.js";

/** Sends `target` with GET over a raw socket and answers the status line's code and the body. */
function rawGet(port: number, target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
    });
    socket.on("error", reject);
    socket.on("end", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf("\r\n\r\n") + 4) });
    });
    socket.write(`GET ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`);
  });
}

describe("request targets that mention the console", () => {
  const ctx = useTestServer("local");

  it("one that is no URL is a 4xx from the API, not a 500; /console redirects", async () => {
    const odd = await rawGet(ctx.server.server.port, "//[console");
    assert.ok(odd.status >= 400 && odd.status < 500, `status ${odd.status}: ${odd.body.slice(0, 200)}`);
    const body = JSON.parse(odd.body) as { code: string; message: string };
    assert.equal(typeof body.code, "string");
    assert.ok(body.message.length <= 1024, "a bounded message");
    assert.equal((await rawGet(ctx.server.server.port, "/console")).status, 308);
  });
});
