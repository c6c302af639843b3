/**
 * `readHeldBody`'s `prechecked`, which the local server passes on as `signedHeadersChecked` (the handler then only
 * compares the body with its signed hash): true only when a precheck ran and passed before the body was read.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { readHeldBody } from "../../lib/dev/request-body.js";
import { InFlightBytes } from "../../lib/dev/server-guard.js";

/** What the server saw of the last request: its precheck calls, `prechecked`, or the error. */
type Seen = { prechecks: number; prechecked?: boolean; error?: string; body?: string };

describe("readHeldBody: prechecked", () => {
  let server: Server;
  let url: string;
  let precheck: ((req: IncomingMessage) => Promise<void>) | undefined;
  let seen: Seen = { prechecks: 0 };
  before(async () => {
    server = createServer((req, res) => {
      const counted = precheck;
      const options = {
        bytes: new InFlightBytes(1 << 20),
        timeoutMs: 5_000,
        precheck:
          counted &&
          (async (r: IncomingMessage) => {
            seen.prechecks++;
            await counted(r);
          }),
      };
      readHeldBody(req, options).then(
        (held) => {
          seen = { ...seen, prechecked: held.prechecked, body: held.body.toString() };
          held.release();
          res.end("ok");
        },
        (err: unknown) => {
          seen = { ...seen, error: String(err) };
          req.resume();
          res.end("refused");
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/send`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const send = async (init: RequestInit): Promise<Seen> => {
    seen = { prechecks: 0 };
    await (await fetch(url, init)).text();
    return seen;
  };

  it("is true after a precheck that passed, with the body read", async () => {
    precheck = async () => {};
    assert.deepEqual(await send({ method: "POST", body: "abc" }), { prechecks: 1, prechecked: true, body: "abc" });
  });

  it("is false with no precheck, and for a request without a body (no precheck runs)", async () => {
    precheck = undefined;
    assert.deepEqual(await send({ method: "POST", body: "abc" }), { prechecks: 0, prechecked: false, body: "abc" });
    precheck = async () => {};
    assert.deepEqual(await send({ method: "GET" }), { prechecks: 0, prechecked: false, body: "" });
  });

  it("never answers when the precheck throws: the body is not read", async () => {
    precheck = async () => {
      throw new Error("not a user's signature");
    };
    const refused = await send({ method: "POST", body: "abc" });
    assert.equal(refused.prechecks, 1);
    assert.equal(refused.prechecked, undefined);
    assert.match(refused.error ?? "", /not a user's signature/);
  });
});
