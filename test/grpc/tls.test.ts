/**
 * @module `nimbus proxy` with TLS (`--tls-cert`, `--tls-key`) on a stage's storage, and RocketMQ's official
 * Node.js client with `sslEnabled`: its Producer sends and its SimpleConsumer receives and acks over TLS,
 * with a self-signed certificate made for the test and trusted by this process's gRPC clients; a client
 * without TLS gets no answer from the TLS port. The topic and the brokers' routes are made first by a
 * `nimbus dev` on the same data folder (a proxy serves the routes its stage's brokers registered).
 */
// First, and kept first by the statement after it (Biome sorts imports only within a run of imports): this
// module sets the roots grpc-js trusts, which grpc-js reads when it loads.
import { certificateUnavailable, testCertificate } from "../support/test-certificate.js";

const noCertificate = certificateUnavailable;

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Producer, SimpleConsumer } from "rocketmq-client-nodejs";
import { NimbusApi } from "../../lib/client/index.js";
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { startLocalServer } from "../../lib/dev/local-server.js";
import { type ProxyServer, startProxyServer } from "../../lib/dev/proxy-server.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { quietLogger } from "../support/grpc-fixture.js";
import { uniqueName } from "../support/server-fixture.js";

describe("nimbus proxy over TLS with the official Node.js client", { skip: noCertificate }, () => {
  const topic = uniqueName("GrpcTls");
  let dataDir = "";
  let proxy: ProxyServer | undefined;
  const endpoint = () => proxy?.grpc.endpoint ?? "";

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-tls-proxy-"));
    const storage = { kind: "local" as const, dataDir };
    const dev = await startLocalServer({ port: 0, storage, config: parseNimbusConfig({}) });
    try {
      // One queue: the consumer's first (empty) receive starts its new group there, before the sends.
      await createTopic(new NimbusApi({ endpoints: dev.url, timeoutMs: 10_000 }), topic, 1, ["broker-a"]);
    } finally {
      await dev.close();
    }
    const { cert, key } = testCertificate ?? { cert: Buffer.alloc(0), key: Buffer.alloc(0) };
    proxy = await startProxyServer({ port: 0, storage, tls: { cert, key } });
  });
  after(async () => {
    await proxy?.close();
    testCertificate?.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("its Producer sends and its SimpleConsumer receives and acks, with sslEnabled", async () => {
    const group = uniqueName("gTls");
    const log = quietLogger();
    const consumer = new SimpleConsumer({
      endpoints: endpoint(),
      sslEnabled: true,
      namespace: "",
      consumerGroup: group,
      subscriptions: new Map([[topic, "*"]]),
      awaitDuration: 1000,
      logger: log,
    });
    const producer = new Producer({ endpoints: endpoint(), sslEnabled: true, namespace: "", logger: quietLogger() });
    await consumer.startup().catch((err: unknown) => {
      throw new Error(`${String(err)}\n${log.lines.slice(-10).join("\n")}`);
    });
    await producer.startup();
    try {
      // The consumer's start fixed its group's start: only what is sent from now on.
      assert.deepEqual(await consumer.receive(16, 10_000), []);
      const sent = [];
      for (let i = 0; i < 2; i++) sent.push((await producer.send({ topic, body: Buffer.from(`tls ${i}`) })).messageId);
      const got: Awaited<ReturnType<SimpleConsumer["receive"]>> = [];
      await waitUntil(async () => {
        got.push(...(await consumer.receive(16, 10_000)));
        return got.length >= sent.length;
      }, "both messages received over TLS");
      assert.deepEqual(new Set(got.map((m) => m.messageId)), new Set(sent));
      for (const m of got) await consumer.ack(m);
    } finally {
      await producer.shutdown();
      await consumer.shutdown();
    }
  });

  it("a client without TLS gets no answer from the TLS port", async () => {
    const producer = new Producer({
      endpoints: endpoint(),
      namespace: "",
      requestTimeout: 2000,
      logger: quietLogger(),
    });
    try {
      await producer.startup();
      await assert.rejects(producer.send({ topic, body: Buffer.from("plain") }), /UNAVAILABLE/);
    } finally {
      await producer.shutdown().catch(() => undefined);
    }
  });
});

describe("nimbus dev with --tls-cert serves gRPC over TLS too; an open gRPC port needs TLS as HTTP does", {
  skip: noCertificate,
}, () => {
  it("the official client sends over TLS to nimbus dev's gRPC port; --auth off loopback without TLS is refused", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-tls-dev-"));
    const { cert, key } = testCertificate ?? { cert: Buffer.alloc(0), key: Buffer.alloc(0) };
    const dev = await startLocalServer({
      port: 0,
      grpcPort: 0,
      storage: { kind: "local", dataDir },
      tls: { cert, key },
    });
    try {
      const topic = uniqueName("GrpcTlsDev");
      await dev.context.broker.topics.upsert(topic, { readQueueNums: 1, writeQueueNums: 1 });
      const producer = new Producer({
        endpoints: dev.grpc?.endpoint ?? "",
        sslEnabled: true,
        namespace: "",
        logger: quietLogger(),
      });
      await producer.startup();
      try {
        const receipt = await producer.send({ topic, body: Buffer.from("over tls") });
        assert.ok(receipt.messageId.length > 0);
      } finally {
        await producer.shutdown();
      }
    } finally {
      await dev.close();
    }
    // A proxy with auth on a non-loopback address: TLS, its own or a balancer's (--tls-offloaded), or nothing.
    const auth = { root: { username: "root", password: "root-password-1" }, masterKey: Buffer.alloc(32, 7) };
    const open = { port: 0, host: "0.0.0.0", storage: { kind: "local" as const, dataDir }, auth };
    await assert.rejects(startProxyServer(open), /--auth over plain/);
    const offloaded = await startProxyServer({ ...open, tlsOffloaded: true });
    await offloaded.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
});
