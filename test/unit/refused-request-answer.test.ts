/**
 * The local server's answer to a request refused before its route ran (lib/dev/refused-request.ts), over a real
 * `node:http` server: a NimbusError is answered with its own code and status; a body past the limit is 413; any
 * other error is a fault of ours, answered 500 SYSTEM_ERROR "internal error", never a 400 that repeats the fault's
 * own words (a store's message, a path) to the client.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { ErrorCode, NimbusError } from "../../lib/core/errors.js";
import { BodyTooLargeError } from "../../lib/dev/api-gateway-event.js";
import { answerUnread } from "../../lib/dev/refused-request.js";

const ERRORS: Record<string, unknown> = {
  "/nimbus": new NimbusError(ErrorCode.UNAUTHENTICATED, "the signature is not a user's"),
  "/too-large": new BodyTooLargeError("the body is over 4 MiB"),
  "/fault": new Error("SQLITE_IOERR at /var/lib/nimbus/secret.db"),
};

describe("the answer to a request refused before its route", () => {
  let server: Server;
  let base = "";
  before(async () => {
    server = createServer((req, res) => answerUnread(req, res, ERRORS[req.url ?? ""]));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const answer = async (path: string) => {
    const res = await fetch(`${base}${path}`, { method: "POST", body: "{}" });
    return { status: res.status, body: (await res.json()) as { code: string; message: string } };
  };

  it("says a NimbusError's code and a too-large body's 413", async () => {
    assert.deepEqual(await answer("/nimbus"), {
      status: 401,
      body: { code: ErrorCode.UNAUTHENTICATED, message: "the signature is not a user's" },
    });
    const tooLarge = await answer("/too-large");
    assert.equal(tooLarge.status, 413);
    assert.equal(tooLarge.body.code, ErrorCode.MESSAGE_BODY_TOO_LARGE);
  });

  it("answers any other error 500 'internal error', without its words", async () => {
    const original = console.error;
    console.error = () => {}; // the fault is logged; the log is not what this test reads
    try {
      assert.deepEqual(await answer("/fault"), {
        status: 500,
        body: { code: ErrorCode.SYSTEM_ERROR, message: "internal error" },
      });
    } finally {
      console.error = original;
    }
  });
});
