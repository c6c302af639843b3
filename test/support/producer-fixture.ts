/**
 * @module The producer e2e tests' shared setup: one local server per test file, producers that are shut
 * down at the end, and helpers (topics, pulls, request counting, a dead broker address).
 */

import assert from "node:assert/strict";
import diagnostics from "node:diagnostics_channel";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { Producer, type ProducerOptions } from "../../lib/client/producer/producer.js";
import { NimbusApi, type PulledMessage } from "../../lib/client/transport/index.js";
import { isNimbusError } from "../../lib/core/errors.js";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";
import { TEST_TIMEOUT_MS } from "./timeouts.js";

export let server: LocalServer;
export let api: NimbusApi;
let dataDir: string;
let seq = 0;
const producers: Producer[] = [];
export const unique = (prefix: string) => `${prefix}-${process.pid}-${++seq}`;
export const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** Starts the local server for this test file (call once at the top level) and stops it after. */
export function useProducerServer(): void {
  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-producer-"));
    // Registration only at start: the dead-broker tests re-register broker-a by hand.
    server = await startLocalServer({ port: 0, storage: { kind: "local", dataDir }, registerIntervalMs: 3_600_000 });
    api = new NimbusApi({ endpoints: server.url, timeoutMs: TEST_TIMEOUT_MS });
  });

  after(async () => {
    for (const p of producers) await p.shutdown();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
}

export async function startProducer(options: Partial<ProducerOptions> = {}): Promise<Producer> {
  const producer = new Producer({
    producerGroup: unique("PG"),
    endpoints: server.url,
    sendMsgTimeout: TEST_TIMEOUT_MS,
    ...options,
  });
  producers.push(producer);
  await producer.start();
  return producer;
}

export async function createTopic(queues: number, brokerNames?: string[], perm?: number): Promise<string> {
  const topic = unique("ProducerTopic");
  await api.updateTopic(topic, {
    readQueueNums: queues,
    writeQueueNums: queues,
    ...(brokerNames ? { brokerNames } : {}),
    perm,
  });
  return topic;
}

export async function pullAll(mq: { topic: string; brokerName: string; queueId: number }): Promise<PulledMessage[]> {
  const out: PulledMessage[] = [];
  for (let offset = 0; ; ) {
    // At the test server itself, whatever address a test registered broker-a at.
    const res = await api.pull(
      { consumerGroup: "ProducerProbe", ...mq, queueOffset: offset, maxMsgNums: 32 },
      { baseUrl: server.url },
    );
    if (res.pullStatus !== "FOUND") return out;
    out.push(...res.messages);
    offset = res.nextBeginOffset;
  }
}

/**
 * Counts the HTTP requests this process starts (the SDK's pooled connections and `fetch` alike), from
 * undici's `undici:request:create` diagnostics channel; `restore()` stops counting.
 */
export function countRequests() {
  const urls: string[] = [];
  const onRequest = (message: unknown) => {
    const { request } = message as { request: { origin: string | URL; path: string } };
    urls.push(`${String(request.origin).replace(/\/$/, "")}${request.path}`);
  };
  diagnostics.subscribe("undici:request:create", onRequest);
  return {
    count: (pred: (url: string) => boolean) => urls.filter(pred).length,
    restore: () => {
      diagnostics.unsubscribe("undici:request:create", onRequest);
    },
  };
}

/** Points broker-a (or every broker) of the name server at `address` until `restore()`. */
export async function registerAt(address: string, brokerNames = ["broker-a"]) {
  await server.context.broker.nameServer.register(
    brokerNames.map((brokerName) => ({ cluster: "DefaultCluster", brokerName, brokerId: 0, address, perm: 6 })),
  );
  return { restore: () => server.context.broker.registerBrokers() };
}

/** An address where nothing listens: a port opened and closed again. */
export async function deadAddress(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Waits for a condition that background timers make true (no timing is asserted). */
export async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail("the condition never held");
}

export const isCode = (code: string) => (err: unknown) => isNimbusError(err) && err.code === code;
