/**
 * @module The SDK's pooled connections against a local server: requests one after another reuse one
 * kept-alive connection; pulls (idempotent) are pipelined on one connection when the pool has one; a
 * transport with `binaryBatches: false` still speaks JSON to the same server.
 */
import assert from "node:assert/strict";
import diagnostics from "node:diagnostics_channel";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/api-client.js";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";

/** Counts the new connections this process opens to `origin` (undici's `undici:client:connected`). */
function countConnections(origin: string) {
  let connections = 0;
  const onConnected = (message: unknown) => {
    const { connectParams } = message as { connectParams: { origin?: string | URL; hostname: string; port: string } };
    if (String(connectParams.origin ?? `http://${connectParams.hostname}:${connectParams.port}`).startsWith(origin))
      connections++;
  };
  diagnostics.subscribe("undici:client:connected", onConnected);
  return {
    get count() {
      return connections;
    },
    stop: () => diagnostics.unsubscribe("undici:client:connected", onConnected),
  };
}

describe("SDK transport: keep-alive pool and pipelining", () => {
  let dataDir: string;
  let server: LocalServer;
  const topic = "PoolTopic";
  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-pool-"));
    server = await startLocalServer({ port: 0, storage: { kind: "local", dataDir } });
    await new NimbusApi({ endpoints: server.url }).updateTopic(topic, {
      readQueueNums: 1,
      writeQueueNums: 1,
      brokerNames: ["broker-a"],
    });
  });
  after(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("30 requests one after another use one connection", async () => {
    const counter = countConnections(server.url);
    try {
      const api = new NimbusApi({ endpoints: server.url, connections: {} });
      for (let i = 0; i < 10; i++) await api.health();
      for (let i = 0; i < 20; i++) {
        await api.send({ topic, brokerName: "broker-a", queueId: 0, messages: [{ body: new Uint8Array([i]) }] });
      }
      assert.equal(counter.count, 1);
    } finally {
      counter.stop();
    }
  });

  it("8 concurrent pulls on a pool of one connection are pipelined on it, each answered its own", async () => {
    const counter = countConnections(server.url);
    try {
      const api = new NimbusApi({ endpoints: server.url, connections: { connections: 1, pipelining: 8 } });
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          api.pull({ consumerGroup: "CG", topic, brokerName: "broker-a", queueId: 0, queueOffset: i, maxMsgNums: 1 }),
        ),
      );
      assert.deepEqual(
        answers.map((a) => a.messages.map((m) => [m.queueOffset, m.body[0]])),
        Array.from({ length: 8 }, (_, i) => [[i, i]]),
      );
      assert.equal(counter.count, 1);
    } finally {
      counter.stop();
    }
  });

  it("a JSON transport (binaryBatches: false) reads the same messages", async () => {
    const json = new NimbusApi({ endpoints: server.url, binaryBatches: false });
    const binary = new NimbusApi({ endpoints: server.url });
    const req = { consumerGroup: "CG", topic, brokerName: "broker-a", queueId: 0, queueOffset: 0, maxMsgNums: 32 };
    assert.deepEqual(await json.pull(req), await binary.pull(req));
  });
});
