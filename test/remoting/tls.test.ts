/**
 * @module The remoting door over TLS (`nimbus dev --auth --tls-cert --tls-key`): RocketMQ's 4.9.8 client with
 * `tls.enable`, trusting only the test certificate (tls.client.authServer, tls.client.trustCertPath), and signing
 * with AclClientRPCHook, sends and its push consumer receives, over the HTTPS port (name server and broker-a) and
 * broker-b's own TLS port; what it sent is read over HTTPS; a remoting client without TLS gets no answer. The same
 * client through `nimbus proxy --auth --tls-cert --remoting-port`, whose every door port is TLS.
 */
// First: the certificate module sets the roots grpc-js trusts when it loads (test/support/test-certificate.ts).
import { certificateUnavailable, testCertificate } from "../support/test-certificate.js";

const noCertificate = certificateUnavailable;

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:https";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { startLocalServer } from "../../lib/dev/local-server.js";
import { type ProxyServer, startProxyServer } from "../../lib/dev/proxy-server.js";
import { RequestCode, ResponseCode } from "../../lib/remoting/index.js";
import { remotingSignature, signedContent } from "../../lib/remoting/signature.js";
import { type AuthServer, call, ROOT, signedHeaders, startAuthServer } from "../support/auth-server.js";
import { remotingClientUnavailable, runRemotingClient } from "../support/remoting-java.js";
import { RawRemoting } from "../support/remoting-raw.js";
import { uniqueName } from "../support/server-fixture.js";

function rootSigned(extFields: Record<string, string>): Record<string, string> {
  const fields = { ...extFields, AccessKey: ROOT.accessKey };
  return { ...fields, Signature: remotingSignature(ROOT.secretKey, signedContent(fields, undefined)) };
}

function httpsGet(url: string, headers: Record<string, string>, ca: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const r = request(url, { ca, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (c: string) => {
        text += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    r.on("error", reject);
    r.end();
  });
}

describe("the remoting door over TLS", { skip: noCertificate ?? remotingClientUnavailable() }, () => {
  let auth: AuthServer;
  const cert = () => testCertificate ?? { cert: Buffer.alloc(0), key: Buffer.alloc(0), certFile: "" };
  const topic = uniqueName("TlsTopic");

  before(async () => {
    auth = await startAuthServer("local", { tls: { cert: cert().cert, key: cert().key } });
    // The topic on both brokers, each created over its own TLS port (the HTTPS port is broker-a's).
    const ports = [auth.server.port, auth.server.remoting?.portOf("broker-b") ?? 0];
    for (const port of ports) {
      const raw = await RawRemoting.openTls(port, cert().cert);
      try {
        const fields = rootSigned({ topic, readQueueNums: "1", writeQueueNums: "1", perm: "6" });
        const created = await raw.request({ code: RequestCode.UPDATE_AND_CREATE_TOPIC, extFields: fields });
        assert.equal(created.code, ResponseCode.SUCCESS, created.remark);
      } finally {
        raw.close();
      }
    }
  });
  after(() => auth.close());

  it("a TLS client signed as a user sends and its push consumer receives; HTTPS reads what was sent", async () => {
    const ns = `127.0.0.1:${auth.server.port}`;
    const tls = ["tls", cert().certFile];
    const keys = [ROOT.accessKey, ROOT.secretKey];
    const produced = await runRemotingClient([...tls, "acl-produce", ns, ...keys, uniqueName("TlsP"), topic, "4"]);
    assert.equal(produced.lines[0], "route ok", produced.lines.join("\n"));
    const sent = produced.lines.filter((l) => l.startsWith("sent ")).map((l) => l.split(" ")[1]);
    assert.equal(sent.length, 4, produced.lines.join("\n"));
    const pushed = await runRemotingClient([...tls, "acl-push", ns, ...keys, uniqueName("TlsC"), topic, "4"]);
    const read = pushed.lines.filter((l) => l.startsWith("msg ")).map((l) => l.split(" ")[1]);
    assert.deepEqual([...read].sort(), [...sent].sort());

    const path = `/topics/${topic}/status`;
    const status = await httpsGet(
      auth.server.url + path,
      signedHeaders(auth.server.url, { method: "GET", path }, ROOT),
      cert().cert,
    );
    assert.equal(status.status, 200, status.text);
    const queues = (JSON.parse(status.text) as { queues: { brokerName: string; maxOffset: number }[] }).queues;
    assert.equal(
      queues.reduce((n, q) => n + q.maxOffset, 0),
      4,
    );
  });

  it("a remoting client without TLS gets no answer from the TLS port", async () => {
    const raw = await RawRemoting.open(auth.server.port);
    try {
      const answered = raw.request({ code: RequestCode.GET_ROUTEINFO_BY_TOPIC, extFields: rootSigned({ topic }) });
      const outcome = await Promise.race([answered.then(() => "answered"), raw.closed.then(() => "closed")]);
      assert.equal(outcome, "closed");
      // Whatever the TLS server wrote back (an alert), it was no remoting answer.
      assert.equal(await Promise.race([answered.then(() => true), Promise.resolve(false)]), false);
    } finally {
      raw.close();
    }
  });
});

describe("nimbus proxy --auth --tls-cert --remoting-port", {
  skip: noCertificate ?? remotingClientUnavailable(),
}, () => {
  const topic = uniqueName("ProxyTlsAuth");
  const auth = {
    root: { username: ROOT.accessKey, password: ROOT.secretKey },
    masterKey: new Uint8Array(randomBytes(32)),
    cacheMs: 0,
  };
  let dataDir = "";
  let proxy: ProxyServer | undefined;

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-remoting-tls-proxy-"));
    const storage = { kind: "local" as const, dataDir };
    // The stage's brokers register and the topic is made on both (the proxy serves the routes they registered).
    const dev = await startLocalServer({ port: 0, storage, config: parseNimbusConfig({}), auth });
    try {
      const body = { readQueueNums: 1, writeQueueNums: 1 };
      const made = await call(dev.url, { method: "PUT", path: `/topics/${topic}`, body }, ROOT);
      assert.equal(made.status, 200, JSON.stringify(made.body));
    } finally {
      await dev.close();
    }
    const { cert, key } = testCertificate ?? { cert: Buffer.alloc(0), key: Buffer.alloc(0) };
    proxy = await startProxyServer({ port: 0, storage, tls: { cert, key }, auth, remotingPort: 0 });
  });
  after(async () => {
    await proxy?.close();
    rmSync(dataDir, { recursive: true, force: true });
    // The last user of the certificate in this file.
    testCertificate?.remove();
  });

  it("a signed TLS client sends and its push consumer receives through every door port", async () => {
    const door = proxy?.remoting;
    assert.ok(door);
    const ns = door.nameServerAddress;
    const tls = ["tls", testCertificate?.certFile ?? ""];
    const keys = [ROOT.accessKey, ROOT.secretKey];
    const produced = await runRemotingClient([...tls, "acl-produce", ns, ...keys, uniqueName("PTlsP"), topic, "4"]);
    assert.equal(produced.lines[0], "route ok", produced.lines.join("\n"));
    const sent = produced.lines.filter((l) => l.startsWith("sent ")).map((l) => l.split(" ")[1]);
    assert.equal(sent.length, 4, produced.lines.join("\n"));
    const pushed = await runRemotingClient([...tls, "acl-push", ns, ...keys, uniqueName("PTlsC"), topic, "4"]);
    const read = pushed.lines.filter((l) => l.startsWith("msg ")).map((l) => l.split(" ")[1]);
    assert.deepEqual([...read].sort(), [...sent].sort());
    // Unsigned, over TLS: refused as on nimbus dev.
    const raw = await RawRemoting.openTls(door.portOf(door.brokerNames[0] ?? "") ?? 0, testCertificate?.cert ?? "");
    try {
      const route = await raw.request({ code: RequestCode.GET_ROUTEINFO_BY_TOPIC, extFields: { topic } });
      assert.equal(route.code, ResponseCode.NO_PERMISSION);
    } finally {
      raw.close();
    }
  });
});
