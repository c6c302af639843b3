/**
 * @module A dispatcher killed mid-batch loses nothing (docs/subscriptions.md "At least once"), on the embedded store
 * and on the AWS adapters (dynalite + s3rver started by the test): `nimbus dev` runs as its own OS process
 * (`--data-dir`, or `--storage aws` on the emulators), delivers a batch to an HTTPS target (trusted by
 * `--target-ca`) that holds it unanswered, and is killed with SIGKILL while the delivery is in flight. A new server
 * on the same data (this process) finds the batch's checkpoint at start, wakes when its invisible time ends, and
 * delivers every message again; the target acks them. Asserted on the path (the held batch, the redelivery with
 * reconsumeTimes 1, the acks), never on time.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { Message, MessageQueue, Producer } from "../../lib/client/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { type LocalServer, type StorageChoice, startLocalServer } from "../../lib/dev/local-server.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { EMULATOR_CREDENTIALS, EMULATOR_TIMEOUTS } from "../support/emulators.js";
import { api, ok } from "../support/http.js";
import { dispatchOf, MODE_LABEL, uniqueName } from "../support/server-fixture.js";
import { acquireEmulators } from "../support/shared-emulators.js";
import { TEST_SEAL_KEY } from "../support/stage-keys.js";
import { SECRET } from "../support/subscription-delivery.js";
import { testCertificate } from "../support/test-certificate.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";
import { freePort, NimbusProcess } from "../support/topology.js";
import { startWebhookTarget } from "../support/webhook-target.js";

/** The dispatching process's arguments and environment, and the same data as the next server opens it. */
interface CrashData {
  args: string[];
  env: Record<string, string>;
  storage: StorageChoice;
  release(): Promise<void>;
}

async function crashData(mode: "local" | "aws"): Promise<CrashData> {
  if (mode === "local") {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-sub-crash-"));
    return {
      args: ["--data-dir", dataDir],
      env: { NIMBUS_SEAL_KEY: Buffer.from(TEST_SEAL_KEY).toString("hex") },
      storage: { kind: "local", dataDir },
      release: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const { emulators, release } = await acquireEmulators();
  const bucket = `nimbus-sub-crash-${process.pid}`;
  const tablePrefix = `subcrash${process.pid}-`;
  const endpoints = { dynamoEndpoint: emulators.dynamoEndpoint, s3Endpoint: emulators.s3Endpoint };
  return {
    args: [
      ...["--storage", "aws", "--provision", "--bucket", bucket, "--table-prefix", tablePrefix],
      ...["--dynamo-endpoint", endpoints.dynamoEndpoint, "--s3-endpoint", endpoints.s3Endpoint],
    ],
    // The emulators' fixed test keys, read by the SDK's default credential chain in the child.
    env: {
      AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey,
      // The stage's seal key of webhook secrets: the next process opens what this one sealed.
      NIMBUS_SEAL_KEY: Buffer.from(TEST_SEAL_KEY).toString("hex"),
    },
    storage: {
      kind: "aws",
      region: "us-east-1",
      bucket,
      tablePrefix,
      ...endpoints,
      credentials: EMULATOR_CREDENTIALS,
      timeouts: EMULATOR_TIMEOUTS,
    },
    release,
  };
}

for (const mode of ["local", "aws"] as const) {
  describe(`subscription delivery across a SIGKILL of the dispatching process (${MODE_LABEL[mode]})`, () => {
    let data: CrashData | undefined;
    let dev: NimbusProcess | undefined;
    let next: LocalServer | undefined;
    after(async () => {
      await dev?.kill();
      await next?.close();
      await data?.release();
    });

    it("the batch in flight is delivered again by the next process, and acked", { timeout: 180_000 }, async () => {
      data = await crashData(mode);
      let held = false;
      const target = await startWebhookTarget(
        SECRET,
        (d) => {
          if (!held && d.records.every((r) => r.reconsumeTimes === 0)) {
            held = true;
            return "hold";
          }
          return { status: 200 };
        },
        { tls: testCertificate },
      );
      try {
        const trust = testCertificate ? ["--target-ca", testCertificate.certFile] : [];
        const args = ["dev", ...data.args, ...trust, "--grpc-port", "0"];
        dev = await new NimbusProcess(args, await freePort(), data.env).start();
        const topic = uniqueName("CrashTopic");
        const group = uniqueName("CrashGroup");
        await createTopic(new NimbusApi({ endpoints: dev.url, timeoutMs: TEST_TIMEOUT_MS }), topic, 1, ["broker-a"]);
        ok(
          await api(dev.url).put(`/subscriptions/${group}`, {
            topic,
            target: { type: "http", url: target.url, secret: SECRET },
            timeoutMs: 5000,
          }),
        );
        const producer = new Producer({
          producerGroup: uniqueName("CrashP"),
          endpoints: dev.url,
          sendMsgTimeout: TEST_TIMEOUT_MS,
        });
        await producer.start();
        const bodies = ["c0", "c1", "c2"];
        await producer.send(
          bodies.map((b) => new Message(topic, "TagA", b)),
          new MessageQueue(topic, "broker-a", 0),
        );
        await producer.shutdown();
        await waitUntil(() => held, "the first delivery reached the target (held unanswered)", 60_000);
        await dev.kill();

        next = await startLocalServer({
          port: 0,
          storage: data.storage,
          sealKey: TEST_SEAL_KEY,
          ...(testCertificate ? { targetCaPem: testCertificate.cert } : {}),
        });
        const server = next;
        await waitUntil(
          () => dispatchOf(server).totals.acked >= bodies.length,
          `every message delivered again and acked by the next process: ${JSON.stringify(dispatchOf(server).errors)}`,
          90_000,
        );
        const [first, ...later] = target.deliveries;
        assert.deepEqual(first?.bodies, bodies, "the killed process's batch: all three, held");
        const again = later.flatMap((d) => d.records.map((r, i) => [d.bodies[i], r.reconsumeTimes] as const));
        assert.deepEqual(
          [...again].sort(),
          bodies.map((b) => [b, 1] as const),
          "each message once more, reconsumeTimes 1",
        );
        assert.match(target.url, testCertificate ? /^https:/ : /^http:/);
      } finally {
        await target.close();
      }
    });
  });
}
