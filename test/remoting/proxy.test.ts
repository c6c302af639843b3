/**
 * @module `nimbus proxy --remoting-port` as a user runs it (the built CLI, what the ECS task of infra/grpc.ts runs),
 * on the AWS adapters (dynalite and s3rver), with two worker processes sharing its ports: RocketMQ's classic
 * remoting client (rocketmq-client 4.9.8, test/interop/remoting-java) is pointed at the proxy's name server
 * address, whose routes name the proxy's own port of each broker under its advertised host (`localhost` here, as a
 * load balancer's DNS name on AWS); its DefaultMQProducer's sync and async sends are stored as sent, and a
 * clustering DefaultMQPushConsumer on both brokers receives all of them and a message sent over HTTP, each equal
 * field by field to what HTTP reads. The stage's own broker (`nimbus dev`'s local server in this process, on the
 * same tables and bucket) registers the brokers and serves HTTP, as the stage's functions do on AWS.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { storedMessages } from "../grpc/producer-suite.js";
import { ensureBuilt, type RunningCli, spawnNimbus } from "../support/cli-runner.js";
import { createTopic } from "../support/consumer-helpers.js";
import { EMULATOR_CREDENTIALS } from "../support/emulators.js";
import { remotingClientUnavailable, runRemotingClient } from "../support/remoting-java.js";
import { assertSameAsHttp, type Consumed, consumedLines } from "../support/remoting-lines.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

const skip = remotingClientUnavailable();

/** The proxy's banner line for the remoting door: the name server's address, then each broker's. */
const BANNER = /remoting: name server (\S+) \(brokers: ([^)]*)\)/;

/** `nimbus proxy --remoting-port 0 --workers 2` on the storage of `storage` (the AWS adapters' emulators). */
function spawnProxy(storage: { bucket: string; tablePrefix: string; dynamo: string; s3: string }): RunningCli {
  return spawnNimbus(
    [
      "proxy",
      ...["--port", "0", "--remoting-port", "0", "--advertised-host", "localhost", "--workers", "2"],
      ...["--storage", "aws", "--region", "us-east-1", "--bucket", storage.bucket],
      ...["--table-prefix", storage.tablePrefix, "--dynamo-endpoint", storage.dynamo, "--s3-endpoint", storage.s3],
    ],
    {
      env: {
        AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey,
      },
    },
  );
}

describe("nimbus proxy serves RocketMQ 4.9.8's remoting client (aws: dynalite+s3rver, --workers 2)", { skip }, () => {
  let proxy: RunningCli | undefined;
  // Registered before the test server's own: `after` hooks run in the order they were declared, so the proxy has
  // ended before the server closes dynalite (a proxy still writing then met a closed database in this process).
  after(async () => {
    proxy?.child.kill("SIGTERM");
    await proxy?.exited;
  });
  const ctx = useTestServer("aws");
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
  let namesrv = "";
  let brokers = "";

  before(async () => {
    await ensureBuilt();
    const choice = ctx.server.storage;
    if (choice.kind !== "aws") throw new Error("the aws mode's storage");
    proxy = spawnProxy({
      bucket: choice.bucket,
      tablePrefix: choice.tablePrefix ?? "",
      dynamo: choice.dynamoEndpoint ?? "",
      s3: choice.s3Endpoint ?? "",
    });
    await proxy.waitForStdout(/2 worker processes serve these ports/);
    const banner = BANNER.exec(proxy.stdout());
    namesrv = banner?.[1] ?? "";
    brokers = banner?.[2] ?? "";
  });

  it("names each broker at a port of its own under the advertised host", () => {
    assert.match(namesrv, /^localhost:\d+$/);
    const ports = [...brokers.matchAll(/(broker-[ab]) localhost:(\d+)/g)].map((m) => [m[1], m[2]]);
    assert.equal(ports.length, 2, brokers);
    assert.equal(`localhost:${ports[0]?.[1]}`, namesrv, "the first broker's port is the name server's");
    assert.notEqual(ports[0]?.[1], ports[1]?.[1]);
  });

  it("sync and async sends are stored as sent; a push consumer receives them and HTTP's, fields equal", async () => {
    const topic = uniqueName("ProxyRemoting");
    await createTopic(api(), topic, 2);
    const sent: string[] = [];
    for (const how of ["sync", "async"]) {
      const run = await runRemotingClient(["produce", namesrv, topic, how, "4", "TagP"]);
      sent.push(...run.lines.filter((l) => l.startsWith("sent ")).map((l) => l.split(" ")[1] ?? ""));
    }
    assert.equal(sent.length, 8);
    const viaHttp = await api().send({
      topic,
      messages: [{ body: new TextEncoder().encode("over http"), tags: "TagH", keys: ["hk"] }],
    });

    const stored = await storedMessages(api(), topic);
    assert.equal(stored.length, 9, "8 sends through the proxy, 1 over HTTP");
    for (const id of sent)
      assert.ok(
        stored.some((m) => m.msgId === id && m.tags === "TagP"),
        `${id} is stored`,
      );
    assert.deepEqual(new Set(stored.map((m) => m.brokerName)), new Set(["broker-a", "broker-b"]), "both brokers");

    const push = await runRemotingClient(["push", namesrv, uniqueName("ProxyPush"), topic, "9"]);
    const consumed = consumedLines(push.lines);
    assert.deepEqual(consumed.map((c) => c.msgId).sort(), stored.map((m) => m.msgId).sort());
    for (const m of stored) assertSameAsHttp(consumed.find((c) => c.msgId === m.msgId) as Consumed, m);
    assert.ok(
      consumed.some((c) => c.msgId === viaHttp.msgIds[0]),
      "the HTTP send reached the 4.x consumer",
    );
  });
});
