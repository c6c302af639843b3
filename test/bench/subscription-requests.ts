/**
 * @module Storage requests per delivered subscription message (docs/cost.md "Subscriptions"), counted by the
 * storage adapter's request counter on a `nimbus dev` server: the same sends once to a topic without a
 * subscription and once to a topic with one (an HTTP target answering 204), after every message is acked; the
 * difference is what delivery costs. Both adapters count the same requests for the same calls.
 *
 *   NODE_OPTIONS=--openssl-legacy-provider npx tsx test/bench/subscription-requests.ts [local|aws]
 */
import { Message, MessageQueue, Producer } from "../../lib/client/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import type { RequestCounts } from "../../lib/storage/request-counter.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { startTestServer, uniqueName } from "../support/server-fixture.js";
import { startWebhookTarget } from "../support/webhook-target.js";
import { BENCH_SECRET, subscribeHttp } from "./subscription.js";

const MESSAGES = 256;
const mode = process.argv[2] === "aws" ? "aws" : "local";

const server = await startTestServer(mode);
const target = await startWebhookTarget(BENCH_SECRET, () => ({ status: 204 }));
const producer = new Producer({ producerGroup: uniqueName("BenchP"), endpoints: server.url, sendMsgTimeout: 30_000 });
await producer.start();
const client = new NimbusApi({ endpoints: server.url, timeoutMs: 30_000 });
const counts = () => server.server.storage.counter.snapshot();
const diff = (a: RequestCounts, b: RequestCounts) =>
  Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v - (a[k as keyof RequestCounts] ?? 0)])) as Record<
    keyof RequestCounts,
    number
  >;

/** Sends MESSAGES to a new 1-queue topic in requests of `perSend`; with `batchSize`, to a subscribed one. */
async function run(perSend: number, batchSize?: number): Promise<Record<keyof RequestCounts, number>> {
  const topic = uniqueName("BenchTopic");
  await createTopic(client, topic, 1, ["broker-a"]);
  if (batchSize !== undefined)
    await subscribeHttp(server.url, uniqueName("BenchGroup"), topic, target.url, { batchSize, maxConcurrency: 1 });
  const acked = server.server.dispatch.totals.acked;
  const before = counts();
  const mq = new MessageQueue(topic, "broker-a", 0);
  for (let i = 0; i < MESSAGES; i += perSend)
    await producer.send(
      Array.from({ length: perSend }, (_, j) => new Message(topic, "TagA", `m${i + j}`)),
      mq,
    );
  if (batchSize !== undefined)
    await waitUntil(() => server.server.dispatch.totals.acked - acked >= MESSAGES, "every message acked", 120_000);
  return diff(before, counts());
}

try {
  for (const [perSend, batchSize] of [
    [32, 32],
    [1, 1],
  ] as const) {
    const plain = await run(perSend);
    const subscribed = await run(perSend, batchSize);
    const delivery = diff(plain, subscribed);
    const per = (n: number) => (n / MESSAGES).toFixed(2);
    console.log(
      `${mode} sends of ${perSend}, batchSize ${batchSize}: per delivered message ` +
        `table reads ${per(delivery.tableReads)}, writes ${per(delivery.tableWrites)} ` +
        `(read units ${per(delivery.readUnits)}, write units ${per(delivery.writeUnits)}), ` +
        `object gets ${per(delivery.objectGets)}, puts ${per(delivery.objectPuts)}, lists ${per(delivery.objectLists)}; ` +
        `deliveries ${target.deliveries.length}`,
    );
  }
} finally {
  await producer.shutdown();
  await target.close();
  await server.close();
}
