/**
 * @module Least privilege of the proxy's remoting door (`nimbus proxy --remoting-port`, what infra/grpc.ts runs on
 * a stage with `grpc.remoting`), checked as grpc-grants.test.ts checks its gRPC endpoint: the proxy (`serveProxy`)
 * serves over an embedded store wrapped to record which table or object store each call reaches, and RocketMQ's
 * classic client (rocketmq-client 4.9.8, test/interop/remoting-java) runs its scenarios through it: sync, async,
 * oneway and batch sends, a push consumer and a lite pull consumer (pulls, offsets), viewMessage and queryMessage,
 * a TransactionMQProducer's commit, and a consumer whose messages
 * go back to the retry topic and then the dead-letter queue. What the stage's own brokers do (register, create
 * topics, run delayed delivery) runs unrecorded, as on AWS. The set used must be within
 * what the task is granted on such a stage, GRPC_PROXY and REMOTING_PROXY (infra/manifest.ts), and must use every
 * table REMOTING_PROXY adds.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { GRPC_PROXY, REMOTING_PORT, REMOTING_PROXY, remotingPorts } from "../../infra/manifest.js";
import type { Broker } from "../../lib/broker/index.js";
import { createBroker } from "../../lib/config/create-broker.js";
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { stageSettings } from "../../lib/config/stages.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import { type ProxyServer, serveProxy } from "../../lib/dev/proxy-server.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import { remotingClientUnavailable, runRemotingClient } from "../support/remoting-java.js";
import { TEST_SEAL_KEY } from "../support/stage-keys.js";
import { BUCKET, recordingStorage } from "./grants-helpers.js";

const skip = remotingClientUnavailable();
// Retries after 1 s.
const config = parseNimbusConfig({
  messageDelayLevel: "1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s",
});

describe("the proxy's remoting door is granted what it uses", { skip }, () => {
  let dataDir: string;
  let storage: Storage;
  /** The stage's own brokers (functions or `nimbus dev`): registration, topics, the scheduled jobs. */
  let stage: Broker;
  let proxy: ProxyServer;
  let jobs: NodeJS.Timeout | undefined;
  const touched = new Set<string>();
  const namesrv = () => proxy.remoting?.nameServerAddress ?? "";

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "nimbus-remoting-grants-"));
    storage = createLocalStorage({ dataDir });
    stage = createBroker(storage, config, { apiUrl: "https://api.test", newMessageId, sealKey: TEST_SEAL_KEY });
    await stage.registerBrokers();
    for (const topic of ["Orders", "Ledger", "Retries", "Lookups"])
      await stage.topics.upsert(topic, { readQueueNums: 2, writeQueueNums: 2, brokerNames: ["broker-a", "broker-b"] });
    proxy = await serveProxy(recordingStorage(storage, touched), {
      port: 0,
      remotingPort: 0,
      config,
      wakeDispatch: async () => {
        touched.add("lambda:Dispatch");
      },
    });
    // The stage's scheduled functions: the timer sweep (delayed retries).
    let running = false;
    jobs = setInterval(() => {
      if (running) return;
      running = true;
      stage.moveDueMessages().finally(() => {
        running = false;
      });
    }, 250);
  });

  after(async () => {
    clearInterval(jobs);
    await proxy?.close();
    await stage?.timers.settled();
    await storage?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("the 4.9.8 client's sends, consumers, queries, transactions and retries run through the proxy", async () => {
    for (const how of ["sync", "async", "oneway", "batch"])
      await runRemotingClient(["produce", namesrv(), "Orders", how, "2", "TagG"]);
    const push = await runRemotingClient(["push", namesrv(), "GrantsPush", "Orders", "8"]);
    assert.equal(push.lines.filter((l) => l.startsWith("msg ")).length, 8);
    const lite = await runRemotingClient(["lite-assign", namesrv(), "GrantsLite", "Orders", "8"]);
    assert.equal(lite.lines.filter((l) => l.startsWith("msg ")).length, 8);
    const query = await runRemotingClient(["query", namesrv(), "Lookups"]);
    assert.equal(query.lines.filter((l) => l.startsWith("viewed ")).length, 4);
    await runRemotingClient(["transaction", namesrv(), "GrantsTx", "Ledger", "commit"]);
    const retried = await runRemotingClient(["retry-dlq", namesrv(), "GrantsRetry", "Retries"]);
    assert.equal(retried.lines.filter((l) => l.startsWith("delivery ")).length, 2);
  });

  it("uses only tables and the bucket the task is granted, and every table REMOTING_PROXY adds", () => {
    const used = [...touched].filter((r) => !r.startsWith("lambda:")).sort();
    const granted = [...GRPC_PROXY.tables, ...REMOTING_PROXY.tables, ...(GRPC_PROXY.bucket ? [BUCKET] : [])];
    assert.deepEqual(
      { usedButNotGranted: used.filter((r) => !granted.includes(r)) },
      { usedButNotGranted: [] },
      `used: ${used.join(", ")}`,
    );
    for (const table of REMOTING_PROXY.tables) assert.ok(used.includes(table), `${table} is used`);
  });

  it("the balancer's ports are the door's: a port per broker name of the stage, from REMOTING_PORT", () => {
    assert.deepEqual(remotingPorts(config), [
      { brokerName: "broker-a", port: REMOTING_PORT },
      { brokerName: "broker-b", port: REMOTING_PORT + 1 },
    ]);
    const names = proxy.remoting?.brokerNames ?? [];
    assert.deepEqual(
      names,
      remotingPorts(config).map((p) => p.brokerName),
    );
    // A stage with a broker's slaves has one port per broker name, not per broker.
    const slaves = parseNimbusConfig({ brokers: [{ brokerName: "x" }, { brokerName: "x", brokerId: 1 }] });
    assert.deepEqual(remotingPorts(slaves), [{ brokerName: "x", port: REMOTING_PORT }]);
    assert.ok(stageSettings("production").nimbus.brokers.length > 0);
  });
});
