/**
 * @module Storage requests per delivered subscription message (docs/cost.md "Subscriptions"), counted by the
 * storage adapter's request counter on a `nimbus dev` server: the same sends once to a topic without a
 * subscription and once to a topic with one (an HTTP target answering 204), after every message is acked; the
 * difference is what delivery costs. Then once more with `enableMsgTrace` on the subscription, after every trace
 * record is stored: the difference to the untraced one is what the delivery traces cost (docs/trace.md). Both
 * adapters count the same requests for the same calls.
 *
 *   NODE_OPTIONS=--openssl-legacy-provider npx tsx test/bench/subscription-requests.ts [local|aws]
 */
import { Message, MessageQueue, Producer } from "../../lib/client/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import type { RequestCounts } from "../../lib/storage/request-counter.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { dispatchOf, startTestServer, uniqueName } from "../support/server-fixture.js";
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
async function run(perSend: number, batchSize?: number, traced = false): Promise<Record<keyof RequestCounts, number>> {
  const topic = uniqueName("BenchTopic");
  await createTopic(client, topic, 1, ["broker-a"]);
  const settings = { batchSize: batchSize ?? 1, maxConcurrency: 1, enableMsgTrace: traced };
  if (batchSize !== undefined) await subscribeHttp(server.url, uniqueName("BenchGroup"), topic, target.url, settings);
  const acked = dispatchOf(server.server).totals.acked;
  const traceSent = dispatchOf(server.server).traceCounts.sent;
  const before = counts();
  const mq = new MessageQueue(topic, "broker-a", 0);
  for (let i = 0; i < MESSAGES; i += perSend)
    await producer.send(
      Array.from({ length: perSend }, (_, j) => new Message(topic, "TagA", `m${i + j}`)),
      mq,
    );
  if (batchSize !== undefined)
    await waitUntil(() => dispatchOf(server.server).totals.acked - acked >= MESSAGES, "every message acked", 120_000);
  if (traced)
    await waitUntil(
      () => dispatchOf(server.server).traceCounts.sent - traceSent >= 2 * MESSAGES,
      "every trace record stored",
      120_000,
    );
  return diff(before, counts());
}

try {
  for (const [perSend, batchSize] of [
    [32, 32],
    [1, 1],
  ] as const) {
    const plain = await run(perSend);
    const subscribed = await run(perSend, batchSize);
    const deliveries = target.deliveries.length;
    const traced = await run(perSend, batchSize, true);
    const per = (n: number) => (n / MESSAGES).toFixed(2);
    const line = (what: string, d: Record<keyof RequestCounts, number>) =>
      console.log(
        `${mode} sends of ${perSend}, batchSize ${batchSize}: ${what} per delivered message ` +
          `table reads ${per(d.tableReads)}, writes ${per(d.tableWrites)} ` +
          `(read units ${per(d.readUnits)}, write units ${per(d.writeUnits)}), ` +
          `object gets ${per(d.objectGets)}, puts ${per(d.objectPuts)}, lists ${per(d.objectLists)}`,
      );
    line(`delivery (${deliveries} deliveries so far)`, diff(plain, subscribed));
    line("its traces (enableMsgTrace)", diff(subscribed, traced));
  }
} finally {
  await producer.shutdown();
  await target.close();
  await server.close();
}
