/**
 * @module Issue 26, finding 14: the local server serves HTTPS with `--tls-cert`/`--tls-key` (and wss:// for the
 * channel), and refuses `--auth` on a non-loopback address without them: passwords of createUser and updateUser
 * never cross a network in clear.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:https";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { ErrorCode, NimbusError } from "../../lib/core/errors.js";
import { startLocalServer } from "../../lib/dev/local-server.js";
import { certificateUnavailable, testCertificate } from "../support/test-certificate.js";

const quiet = { port: 0, registerIntervalMs: 3_600_000, retentionIntervalMs: 3_600_000 };
const auth = { root: { username: "root", password: "root-secret-123" }, masterKey: new Uint8Array(32), cacheMs: 0 };

function httpsGet(url: string, ca: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const r = request(url, { ca }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => {
        text += c.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    r.on("error", reject);
    r.end();
  });
}

describe("TLS for the local server", { skip: certificateUnavailable }, () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "nimbus-tls-"));
  const cert = testCertificate?.cert ?? Buffer.alloc(0);
  const key = testCertificate?.key ?? Buffer.alloc(0);
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    testCertificate?.remove();
  });

  it("refuses --auth on a non-loopback address without TLS, before listening", async () => {
    await assert.rejects(
      startLocalServer({ ...quiet, host: "0.0.0.0", storage: { kind: "local", dataDir: path.join(dir, "a") }, auth }),
      (err: unknown) =>
        err instanceof NimbusError && err.code === ErrorCode.PARAMETER_ILLEGAL && /tls-cert/.test(err.message),
    );
  });

  it("serves HTTPS and wss:// with a certificate, on a non-loopback address with --auth too", async () => {
    const server = await startLocalServer({
      ...quiet,
      host: "127.0.0.1",
      storage: { kind: "local", dataDir: path.join(dir, "b") },
      auth,
      tls: { cert, key },
    });
    try {
      assert.match(server.url, /^https:\/\//);
      assert.match(server.channelUrl, /^wss:\/\//);
      const health = await httpsGet(`${server.url}/health`, cert);
      assert.equal(health.status, 200, health.text);
      await assert.rejects(fetch(`${server.url.replace("https", "http")}/health`), "plain HTTP is not served");
    } finally {
      await server.close();
    }
    const wide = await startLocalServer({
      ...quiet,
      host: "0.0.0.0",
      storage: { kind: "local", dataDir: path.join(dir, "c") },
      auth,
      tls: { cert, key },
    });
    await wide.close();
  });
});
