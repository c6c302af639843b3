/**
 * @module Issue 26's findings under `--auth` (findings 1, 3 and 5), on either storage mode: a user refused a topic
 * is refused before the body is decoded (a small 403, whatever the body), a malformed `Host` answers 401 the same
 * for a known user and an unknown one (no 500, no user enumeration), on the API and on `/channel`, and the
 * configured root user's name cannot be created as a stored user.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { signNimbusRequest } from "../../lib/core/request-signing.js";
import { type AuthServer, call, createUserAndTopics, ROOT, startAuthServer } from "../support/auth-server.js";
import { b64 } from "../support/http.js";
import { rawHttp } from "../support/raw-http.js";
import { MODE_LABEL, type ServerMode } from "../support/server-fixture.js";
import { MAX_BAD_ANSWER_BYTES } from "./hardening-suite.js";

export function hardeningAuthSuite(mode: ServerMode): void {
  describe(`hostile input under --auth (${MODE_LABEL[mode]})`, () => {
    let t: AuthServer;
    let url = "";
    const bob = { accessKey: "bob", secretKey: "bob-secret-123" };
    const writes = () => {
      const c = t.server.storage.counter.snapshot();
      return c.tableWrites + c.objectPuts + c.objectDeletes;
    };
    /** `body` sent to `path` signed by `credentials`, with `host` as the Host header. */
    const signed = (path: string, body: string, credentials: typeof bob, host?: string) => {
      const headers = { "content-type": "application/json" };
      const sig = signNimbusRequest({ method: "POST", url: url + path, headers, body, credentials });
      return rawHttp(url, { method: "POST", path, headers: { ...headers, ...sig, ...(host ? { host } : {}) }, body });
    };

    before(async () => {
      t = await startAuthServer(mode);
      url = t.server.url;
      await createUserAndTopics(url, bob, ["Secret"]);
    });
    after(async () => {
      await t.close();
    });

    it("1: a user without Pub gets a small answer for a megabyte of bad messages, never a list of issues", async () => {
      const body = `{"topic":"Secret","messages":[${"1,".repeat(500_000)}1]}`;
      const before = writes();
      const answer = await signed("/send", body, bob);
      // The text scan refuses the shape before anything is parsed, for any caller.
      assert.equal(answer.status, 400, answer.text.slice(0, 300));
      assert.ok(answer.bytes < 1024, `a ${answer.bytes}-byte answer`);
      // The same user, a body under the shape bounds but invalid: still the 403, never the schema's issues.
      const invalid = await signed("/send", JSON.stringify({ topic: "Secret", messages: Array(4000).fill(1) }), bob);
      assert.equal(invalid.status, 403);
      const admin = await signed("/acl/users", JSON.stringify({ username: 1, password: [] }), bob);
      assert.equal(admin.status, 403, "a Super user's endpoint refuses others before their body is decoded");
      assert.equal(writes(), before);
    });

    it("3: a malformed Host is 401 for a known user and an unknown one alike, on the API and the channel", async () => {
      const stranger = { accessKey: "nobody", secretKey: "nobody-secret-1" };
      const body = JSON.stringify({ topic: "Secret", messages: [{ body: b64("x") }] });
      for (const host of ["a b", "[", "%", "a%zz", "host:port:1"]) {
        const known = await signed("/send", body, bob, host);
        const unknown = await signed("/send", body, stranger, host);
        assert.equal(known.status, 401, `${host}: ${known.text}`);
        assert.equal(unknown.status, 401, `${host}: ${unknown.text}`);
        assert.equal(known.text, unknown.text, "the same answer whether the user exists or not");
        assert.ok(known.bytes < MAX_BAD_ANSWER_BYTES);
      }
      const upgrade = (credentials: typeof bob) => {
        const headers = {
          connection: "Upgrade",
          upgrade: "websocket",
          "sec-websocket-version": "13",
          "sec-websocket-key": Buffer.alloc(16, 2).toString("base64"),
        };
        const sig = signNimbusRequest({ method: "GET", url: `${url}/channel`, headers, credentials });
        return rawHttp(url, { method: "GET", path: "/channel", headers: { ...headers, ...sig, host: "a b" } });
      };
      const known = await upgrade(bob);
      const unknown = await upgrade(stranger);
      assert.equal(known.status, 401, known.text);
      assert.equal(known.text, unknown.text);
    });

    it("5: the configured root user's name cannot be created as a stored user", async () => {
      const before = writes();
      const answer = await call(
        url,
        { method: "POST", path: "/acl/users", body: { username: ROOT.accessKey, password: "another-secret-1" } },
        ROOT,
      );
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(answer.body.code, "PARAMETER_ILLEGAL");
      // The one write is the request's nonce (replay-proof routes record it once authorized, before the route runs).
      assert.equal(writes(), before + 1);
      const listed = await call(url, { method: "GET", path: "/acl/users" }, ROOT);
      assert.ok(!JSON.stringify(listed.body).includes(`"${ROOT.accessKey}"`), JSON.stringify(listed.body));
    });
  });
}
