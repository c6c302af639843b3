/**
 * @module The AWS stage's `grpc.remoting: "tls"` shape, on one machine: a load balancer that ends TLS on each
 * broker's port and forwards it in clear to the same port of the proxy (as infra/grpc.ts's listeners do), played by
 * Node TLS servers on 127.0.0.1 in front of `nimbus proxy --remoting-port` listening on 127.0.0.2 (the task's own
 * address) and advertising 127.0.0.1. RocketMQ's classic client 4.9.8 with `-Dtls.enable=true` (what a user sets
 * for a `tls` stage) sends through the fronts and a push consumer receives what it sent: every connection the
 * client made, to the name server and to each broker, went through TLS. On the AWS adapters (dynalite and
 * s3rver), beside the stage's broker.
 */
import assert from "node:assert/strict";
import { connect, type Server } from "node:net";
import { after, before, describe, it } from "node:test";
import { createServer as createTlsServer } from "node:tls";
import { NimbusApi } from "../../lib/client/index.js";
import { type ProxyServer, startProxyServer } from "../../lib/dev/proxy-server.js";
import { storedMessages } from "../grpc/producer-suite.js";
import { createTopic } from "../support/consumer-helpers.js";
import { javaModule } from "../support/java-module.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";
import { makeTestCertificate } from "../support/test-certificate.js";

/**
 * The 4.9.8 client of test/interop/remoting-java, its every connection over TLS (TlsSystemConfig's `tls.enable`):
 * Interop.java's scenarios, and PatientSend.java's sync sends, whose time limits allow a cold JVM's first TLS
 * handshakes on a busy machine.
 */
const tlsModule = (mainClass: string) =>
  javaModule({
    folder: "remoting-java",
    jar: "nimbus-remoting-interop-1.0.0.jar",
    mainClass,
    label: "the remoting Java client (TLS)",
    logProperties: (root) => [`-Drocketmq.client.logRoot=${root}`, `-Duser.home=${root}`, "-Dtls.enable=true"],
  });
const tlsClient = tlsModule("nimbus.remoting.Interop");
const patientSend = tlsModule("nimbus.remoting.PatientSend");
const certificate = makeTestCertificate();
const skip = tlsClient.unavailable() ?? (typeof certificate === "string" ? certificate : undefined);

const TASK = "127.0.0.2";
const BALANCER = "127.0.0.1";

describe("the remoting door behind a TLS-ending balancer (aws: dynalite+s3rver)", { skip }, () => {
  const ctx = useTestServer("aws");
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
  let proxy: ProxyServer | undefined;
  const fronts: Server[] = [];
  /** TLS connections each front ended, by port. */
  const secured = new Map<number, number>();

  before(async () => {
    if (typeof certificate === "string") return;
    const choice = ctx.server.storage;
    if (choice.kind !== "aws") throw new Error("the aws mode's storage");
    proxy = await startProxyServer({
      port: 0,
      host: TASK,
      remotingPort: 0,
      advertisedHost: BALANCER,
      tlsOffloaded: true,
      storage: { ...choice, provision: false },
    });
    const door = proxy.remoting;
    assert.ok(door);
    for (const name of door.brokerNames) {
      const port = door.portOf(name) ?? 0;
      const front = createTlsServer({ cert: certificate.cert, key: certificate.key }, (socket) => {
        secured.set(port, (secured.get(port) ?? 0) + 1);
        const upstream = connect(port, TASK);
        socket.pipe(upstream).pipe(socket);
        socket.on("error", () => upstream.destroy());
        upstream.on("error", () => socket.destroy());
      });
      await new Promise<void>((resolve, reject) => {
        front.once("error", reject);
        front.listen(port, BALANCER, () => resolve());
      });
      fronts.push(front);
    }
  });

  after(async () => {
    for (const front of fronts) await new Promise<void>((resolve) => front.close(() => resolve()));
    await proxy?.close();
    if (typeof certificate !== "string") certificate.remove();
  });

  it("sends and a push consumer go over TLS to the name server and to each broker's port", async () => {
    const door = proxy?.remoting;
    assert.ok(door);
    assert.match(door.nameServerAddress, /^127\.0\.0\.1:\d+$/, "the advertised address");
    const topic = uniqueName("ProxyTls");
    await createTopic(api(), topic, 2);
    const namesrv = door.nameServerAddress;
    const run = await patientSend.run([namesrv, topic, "4", "TagS"]);
    const sent = run.lines.filter((l) => l.startsWith("sent ")).map((l) => l.split(" ")[1] ?? "");
    assert.equal(sent.length, 4);
    const push = await tlsClient.run(["push", namesrv, uniqueName("ProxyTlsPush"), topic, "4"]);
    const consumed = push.lines
      .filter((l) => l.startsWith("msg "))
      .map((l) => (JSON.parse(l.slice(4)) as { msgId: string }).msgId);
    assert.deepEqual(consumed.sort(), [...sent].sort());
    const stored = await storedMessages(api(), topic);
    assert.deepEqual(new Set(stored.map((m) => m.brokerName)), new Set(["broker-a", "broker-b"]), "both brokers");
    for (const name of door.brokerNames)
      assert.ok((secured.get(door.portOf(name) ?? 0) ?? 0) > 0, `${name}'s port was reached over TLS`);
  });
});
