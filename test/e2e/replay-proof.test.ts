/**
 * @module Issue 26, finding 13, on the embedded store and on the AWS adapters: a signed mutating admin or ACL request
 * replayed to another process (another Lambda container: a second server on the same store, with its own nonce
 * cache) is refused, through the nonce item in the ACL table; a replayed data-plane request is not (docs/security.md
 * "Replays" says why and what it may do).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { type LocalServer, serveOn } from "../../lib/dev/local-server.js";
import { type AuthServer, ROOT, signedHeaders, startAuthServer } from "../support/auth-server.js";
import { rawHttp } from "../support/raw-http.js";
import { MODE_LABEL } from "../support/server-fixture.js";

for (const mode of ["local", "aws"] as const) {
  describe(`replays across processes (${MODE_LABEL[mode]})`, () => {
    let t: AuthServer;
    let other: LocalServer;
    before(async () => {
      t = await startAuthServer(mode);
      other = await serveOn(
        t.server.storage,
        {
          port: 0,
          registerIntervalMs: 3_600_000,
          retentionIntervalMs: 3_600_000,
          auth: {
            root: { username: ROOT.accessKey, password: ROOT.secretKey },
            masterKey: new Uint8Array(randomBytes(32)),
          },
        },
        false,
      );
    });
    after(async () => {
      await other.close();
      await t.close();
    });

    /** Sends one signed request to the first server, then the same bytes to the second. */
    const twice = async (method: string, path: string, body: unknown) => {
      // Signed for the first server's host; the second is reached through the same Host header, as a load balancer does.
      const headers = signedHeaders(t.server.url, { method, path, body }, ROOT);
      const send = (base: string) =>
        fetch(base + path, { method, headers, body: JSON.stringify(body) }).then(async (r) => ({
          status: r.status,
          text: await r.text(),
        }));
      const first = await send(t.server.url);
      const host = new URL(t.server.url).host;
      const hostPinned = await rawHttp(other.url, {
        method,
        path,
        headers: { ...headers, host },
        body: JSON.stringify(body),
      });
      return { first, second: { status: hostPinned.status, text: hostPinned.text } };
    };

    it("a mutating admin request is accepted once, refused on another process", async () => {
      const topic = await twice("PUT", "/topics/Replayed", { readQueueNums: 1, writeQueueNums: 1 });
      assert.equal(topic.first.status, 200, topic.first.text);
      assert.equal(topic.second.status, 401, topic.second.text);
      assert.match(topic.second.text, /a replay/);
      const user = await twice("POST", "/acl/users", { username: "eve", password: "eve-secret-12" });
      assert.equal(user.first.status, 200, user.first.text);
      assert.equal(user.second.status, 401, user.second.text);
    });

    it("a data-plane request replayed to another process is accepted (per-process guard only)", async () => {
      const sent = await twice("POST", "/send", { topic: "Replayed", messages: [{ body: "eA==" }] });
      assert.equal(sent.first.status, 200, sent.first.text);
      assert.equal(sent.second.status, 200, sent.second.text);
    });
  });
}
