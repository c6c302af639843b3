/**
 * @module What an idle consumer on the push channel costs (docs/cost.md): one PushConsumer holding 4 queues
 * with every channel period shortened to `periodMs` (idle reads, rebalances, pings), its requests counted
 * over `periods` periods after a warm-up: HTTP requests it sends (pulls, rebalances), storage requests the
 * broker makes for them, pings. One ping's storage requests are counted apart. Monthly figures scale the
 * per-period counts by the SDK's default periods (10 min reads and rebalances, 8 min pings).
 */

import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import type { LocalServer } from "../../lib/dev/local-server.js";
import { diffCounts, type RequestCounts } from "../../lib/storage/request-counter.js";

export interface IdleCostResult {
  periodMs: number;
  periods: number;
  /** Per period of idle reads and rebalances (the default period is 10 min); the storage includes one ping's. */
  httpRequestsPerPeriod: number;
  storagePerPeriod: RequestCounts;
  /** Storage requests of one ping (the default ping period is 8 min). */
  storagePerPing: RequestCounts;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function scaled(c: RequestCounts, k: number): RequestCounts {
  return Object.fromEntries(
    Object.entries(c).map(([key, v]) => [key, Math.round((v / k) * 1000) / 1000]),
  ) as unknown as RequestCounts;
}

export async function measureIdleCost(
  server: LocalServer,
  requests: { count(): number },
  periodMs: number,
  periods: number,
): Promise<IdleCostResult> {
  const runId = Date.now().toString(36);
  const api = new NimbusApi({ endpoints: server.url, timeoutMs: 30_000 });
  const topic = `IdleCost${runId}`;
  await api.updateTopic(topic, { readQueueNums: 2, writeQueueNums: 2, brokerNames: ["broker-a", "broker-b"] });
  const consumer = new PushConsumer({
    consumerGroup: `gIdleCost${runId}`,
    endpoints: server.url,
    pullIdleBackoffMillis: periodMs,
    pullIdleBackoffMaxMillis: periodMs,
    channelPollInterval: periodMs,
    channelPingInterval: periodMs,
    onError: () => {},
  });
  consumer.subscribe(topic, "*");
  consumer.registerMessageListener(() => "CONSUME_SUCCESS");
  await consumer.start();
  try {
    while (!(consumer.pushChannelStats.up && consumer.assignedQueues().length === 4)) await sleep(50);
    await sleep(2 * periodMs);
    const r0 = requests.count();
    const c0 = server.storage.counter.snapshot();
    await sleep(periods * periodMs);
    const httpRequests = requests.count() - r0;
    const storage = diffCounts(server.storage.counter.snapshot(), c0);
    // One ping's storage requests, through the broker as the channel's frame handler calls it.
    const broker = server.context.broker;
    const table = server.storage;
    const connection = await findConnection(server, `gIdleCost${runId}`);
    const s0 = table.counter.snapshot();
    const pings = 10;
    for (let i = 0; i < pings; i++) await broker.channel.ping(connection);
    const perPing = scaled(diffCounts(table.counter.snapshot(), s0), pings);
    return {
      periodMs,
      periods,
      httpRequestsPerPeriod: Math.round((httpRequests / periods) * 100) / 100,
      storagePerPeriod: scaled(storage, periods),
      storagePerPing: perPing,
    };
  } finally {
    await consumer.shutdown();
  }
}

async function findConnection(server: LocalServer, group: string): Promise<string> {
  const { CONNECTIONS_TABLE } = await import("../../lib/broker/store/tables.js");
  const page = await server.storage.table(CONNECTIONS_TABLE).query(`cg:${group}`);
  const sk = page.items[0]?.sk;
  if (typeof sk !== "string") throw new Error("the idle consumer has no channel registration");
  return sk;
}
