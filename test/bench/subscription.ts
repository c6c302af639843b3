/**
 * @module `npm run bench -- --suite subscription` (docs/benchmarks/push.md "Subscriptions"): a
 * subscription with an HTTPS target (a `node:https` server on loopback with the self-signed test certificate, which
 * the server trusts by `targetCaPem`, as `nimbus dev --target-ca`; `--target http`: plain HTTP) and
 * `nimbus dev`'s in-process dispatcher delivering over POP, with the SDK's Producer sending 1 KiB messages.
 * - throughput: at `batchSize` 1 and 32, `messages` sent as fast as sends of 32 go; delivered msg/s is the count
 *   over first send → last receipt at the target;
 * - end to end at `rate` msg/s (open loop, one message per send, batchSize 32 and 1): send call start → target
 *   receipt;
 * - idle (batchSize 1): `idleRounds` times, wait `idleSeconds` with nothing sent, send one message, time it to the target.
 * Modes: `local` (embedded store) and `aws-latency` (AWS adapters on dynalite + s3rver, every call delayed:
 * aws-latency.ts). Everything runs in this process: the sender, the server, its dispatcher and the target.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Message, type MessageQueue, Producer } from "../../lib/client/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { createTopic } from "../support/consumer-helpers.js";
import { api, ok } from "../support/http.js";
import { certificateUnavailable, testCertificate } from "../support/test-certificate.js";
import { startWebhookTarget } from "../support/webhook-target.js";
import type { AwsLatencies } from "./aws-latency.js";
import { body, openServer, waitFor } from "./push-latency.js";
import { type LatencySummary, round, summarize } from "./stats.js";

export const BENCH_SECRET = "whsec-subscription-bench-0123456";
const QUEUES = 4;
/** Bound of every wait for deliveries. */
const DELIVERY_WAIT_MS = 120_000;

export interface SubscriptionBenchOptions {
  mode: "local" | "aws-latency";
  /** What the target serves: HTTPS (the test certificate) or plain HTTP. */
  target: "https" | "http";
  latencies: AwsLatencies;
  messages: number;
  rate: number;
  rateSeconds: number;
  idleSeconds: number;
  idleRounds: number;
}

export interface ThroughputRow {
  batchSize: number;
  messages: number;
  delivered: number;
  seconds: number;
  deliveredPerSec: number;
  deliveries: number;
}

export interface RateRow {
  rate: number;
  batchSize: number;
  sent: number;
  delivered: number;
  endToEnd: LatencySummary;
}

export interface SubscriptionBenchResult {
  mode: string;
  description: string;
  target: "https" | "http";
  throughput: ThroughputRow[];
  rate: RateRow[];
  idle: { idleSeconds: number; rounds: number; endToEnd: LatencySummary; samplesMs: number[] };
}

/** PUTs subscription `group` on `topic` with an HTTP target signed with BENCH_SECRET (also subscription-requests.ts). */
export async function subscribeHttp(
  serverUrl: string,
  group: string,
  topic: string,
  targetUrl: string,
  settings: { batchSize: number; maxConcurrency: number; enableMsgTrace?: boolean },
): Promise<void> {
  ok(
    await api(serverUrl).put(`/subscriptions/${group}`, {
      topic,
      target: { type: "http", url: targetUrl, secret: BENCH_SECRET },
      ...settings,
    }),
  );
}

export async function runSubscriptionBench(o: SubscriptionBenchOptions): Promise<SubscriptionBenchResult> {
  const runId = Date.now().toString(36);
  const tls = o.target === "https" ? testCertificate : undefined;
  if (o.target === "https" && tls === undefined) throw new Error(`--target https: ${certificateUnavailable}`);
  const { server, cleanup, description } = await openServer(o, runId, tls && { targetCaPem: tls.cert });
  /** Receipt time at the target per sequence number (the body's first word); seq is unique over the run. */
  const receivedAt = new Map<number, number>();
  let deliveries = 0;
  const target = await startWebhookTarget(
    BENCH_SECRET,
    (d) => {
      const now = performance.now();
      deliveries++;
      for (const b of d.bodies) receivedAt.set(Number(b.slice(0, b.indexOf(" "))), now);
      return { status: 204 };
    },
    { tls },
  );
  const producer = new Producer({ producerGroup: `SubBenchP${runId}`, endpoints: server.url, sendMsgTimeout: 30_000 });
  await producer.start();
  const client = new NimbusApi({ endpoints: server.url, timeoutMs: 30_000 });
  let seq = 0;
  let phase = 0;
  /** A new topic of QUEUES queues with its own subscription; answers its queues. */
  const subscribed = async (batchSize: number): Promise<{ topic: string; queues: MessageQueue[] }> => {
    const topic = `SubBench${runId}T${++phase}`;
    const queues = await createTopic(client, topic, QUEUES, ["broker-a"]);
    await subscribeHttp(server.url, `SubBench${runId}G${phase}`, topic, target.url, {
      batchSize,
      maxConcurrency: QUEUES,
    });
    return { topic, queues };
  };
  try {
    const throughput: ThroughputRow[] = [];
    for (const batchSize of [1, 32]) {
      const { topic, queues } = await subscribed(batchSize);
      const first = seq;
      const d0 = deliveries;
      const started = performance.now();
      // One sender per queue, sends of 32: the sender is not what is measured.
      await Promise.all(
        queues.map(async (mq, q) => {
          for (let i = q * 32; i < o.messages; i += QUEUES * 32) {
            const n = Math.min(32, o.messages - i);
            await producer.send(
              Array.from({ length: n }, (_, j) => new Message(topic, "TagA", body(first + i + j))),
              mq,
            );
          }
        }),
      );
      seq += o.messages;
      const delivered = () => countIn(receivedAt, first, seq);
      await waitFor(() => delivered() >= o.messages, DELIVERY_WAIT_MS);
      const last = Math.max(...rangeTimes(receivedAt, first, seq));
      const seconds = (last - started) / 1000;
      throughput.push({
        batchSize,
        messages: o.messages,
        delivered: delivered(),
        seconds: round(seconds, 2),
        deliveredPerSec: Math.round(delivered() / seconds),
        deliveries: deliveries - d0,
      });
      console.error(`bench subscription ${o.mode} batchSize ${batchSize}: ${JSON.stringify(throughput.at(-1))}`);
    }

    // Open loop at `rate` msg/s, one message per send, round robin over the queues, at batchSize 32 then 1.
    const rate: RateRow[] = [];
    let idleTopic: { topic: string; queues: MessageQueue[] } | undefined;
    for (const batchSize of [32, 1]) {
      const rateTopic = await subscribed(batchSize);
      idleTopic = rateTopic;
      const sentAt = new Map<number, number>();
      const rateFirst = seq;
      const total = Math.round(o.rate * o.rateSeconds);
      const t0 = performance.now();
      const sends: Promise<unknown>[] = [];
      for (let i = 0; i < total; i++) {
        const wait = t0 + (i * 1000) / o.rate - performance.now();
        if (wait > 0) await sleep(wait);
        const s = seq++;
        sentAt.set(s, performance.now());
        sends.push(
          producer.send(new Message(rateTopic.topic, "TagA", body(s)), rateTopic.queues[i % QUEUES] as MessageQueue),
        );
      }
      await Promise.all(sends);
      await waitFor(() => countIn(receivedAt, rateFirst, seq) >= total, DELIVERY_WAIT_MS);
      const samples = [...sentAt].flatMap(([s, at]) => {
        const got = receivedAt.get(s);
        return got === undefined ? [] : [got - at];
      });
      rate.push({ rate: o.rate, batchSize, sent: total, delivered: samples.length, endToEnd: summarize(samples) });
      console.error(`bench subscription ${o.mode} ${o.rate} msg/s: ${JSON.stringify(rate.at(-1))}`);
    }
    if (idleTopic === undefined) throw new Error("no rate phase ran");
    const rateTopic = idleTopic;

    // Idle: the same subscription, nothing sent for idleSeconds, then one message.
    const idleSamples: number[] = [];
    for (let r = 0; r < o.idleRounds; r++) {
      await sleep(o.idleSeconds * 1000);
      const s = seq++;
      const at = performance.now();
      await producer.send(new Message(rateTopic.topic, "TagA", body(s)), rateTopic.queues[r % QUEUES] as MessageQueue);
      await waitFor(() => receivedAt.has(s), DELIVERY_WAIT_MS);
      const got = receivedAt.get(s);
      if (got !== undefined) idleSamples.push(round(got - at, 2));
      console.error(`bench subscription ${o.mode} after ${o.idleSeconds} s idle: ${idleSamples.at(-1) ?? "lost"} ms`);
    }
    return {
      mode: o.mode,
      description,
      target: o.target,
      throughput,
      rate,
      idle: {
        idleSeconds: o.idleSeconds,
        rounds: o.idleRounds,
        endToEnd: summarize(idleSamples),
        samplesMs: idleSamples,
      },
    };
  } finally {
    await producer.shutdown();
    await target.close();
    await server.close();
    await cleanup();
    testCertificate?.remove();
  }
}

function countIn(m: ReadonlyMap<number, number>, from: number, to: number): number {
  let n = 0;
  for (let s = from; s < to; s++) if (m.has(s)) n++;
  return n;
}

function rangeTimes(m: ReadonlyMap<number, number>, from: number, to: number): number[] {
  const out: number[] = [];
  for (let s = from; s < to; s++) {
    const t = m.get(s);
    if (t !== undefined) out.push(t);
  }
  return out;
}

export function formatSubscription(r: SubscriptionBenchResult): string {
  const lines = [
    `\nSubscription delivery — ${r.mode}: ${r.description}; ${r.target === "https" ? "HTTPS target on loopback (TLS, self-signed certificate trusted by targetCaPem)" : "HTTP target on loopback (plain HTTP, no TLS)"}`,
    "batchSize | messages | delivered | seconds | delivered msg/s | target requests",
    ...r.throughput.map(
      (t) => `${t.batchSize} | ${t.messages} | ${t.delivered} | ${t.seconds} | ${t.deliveredPerSec} | ${t.deliveries}`,
    ),
    "phase | samples | p50 ms | p99 ms | max ms",
    ...r.rate.map(
      (x) =>
        `${x.rate} msg/s (batchSize ${x.batchSize}) | ${x.endToEnd.count}/${x.sent} | ${x.endToEnd.p50Ms} | ${x.endToEnd.p99Ms} | ${x.endToEnd.maxMs}`,
    ),
    `after ${r.idle.idleSeconds} s idle (batchSize 1) | ${r.idle.endToEnd.count}/${r.idle.rounds} | ${r.idle.endToEnd.p50Ms} | ${r.idle.endToEnd.p99Ms} | ${r.idle.endToEnd.maxMs}`,
  ];
  return lines.join("\n");
}
