/**
 * @module `npm run bench -- --push`: latency with the push channel, with the SDK as a user runs it. One
 * PushConsumer (default settings: channel on) on a 4-queue topic and one Producer sending 1 KiB messages
 * open-loop at each rate; produce latency (the send call) and end-to-end latency (send call start to the
 * listener, same process) as p50/p99; then idle rounds: wait `idleSeconds`, send one message per queue, and
 * time their delivery, with the cause of the pull that found them (hint or timer). A last round does the same
 * with `pushChannel: false` (the polling baseline). Modes: `local` (embedded store) and `aws-latency` (the AWS
 * adapters on dynalite + s3rver, every call delayed as AWS would: aws-latency.ts).
 */
import diagnostics from "node:diagnostics_channel";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { Message } from "../../lib/client/message.js";
import { Producer } from "../../lib/client/producer/producer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { type LocalServer, type LocalServerOptions, openStorage, serveOn } from "../../lib/dev/local-server.js";
import { diffCounts, type RequestCounts } from "../../lib/storage/request-counter.js";
import type { Storage } from "../../lib/storage/storage.js";
import { EMULATOR_CREDENTIALS, startEmulators } from "../support/emulators.js";
import { type AwsLatencies, withAwsLatencies } from "./aws-latency.js";
import { type IdleCostResult, measureIdleCost } from "./idle-cost.js";
import { type LatencySummary, summarize } from "./stats.js";

export interface PushBenchOptions {
  mode: "local" | "aws-latency";
  latencies: AwsLatencies;
  rates: number[];
  secondsPerRate: number;
  idleSeconds: number;
  idleRounds: number;
  /** The idle cost measurement (idle-cost.ts): its shortened period and how many periods. */
  idleCostPeriodMs: number;
  idleCostPeriods: number;
  /** The rate runs' consumer with the channel (default) or polling only: the A/B of the send path. */
  ratesChannel: boolean;
}

export interface RateResult {
  targetPerSec: number;
  sent: number;
  achievedPerSec: number;
  received: number;
  /** Sends that failed (timed out or refused); their messages are not counted end to end. */
  failed: number;
  duplicates: number;
  produce: LatencySummary;
  endToEnd: LatencySummary;
}

export interface IdleResult {
  channel: boolean;
  idleSeconds: number;
  endToEnd: LatencySummary;
  /** Pulls that found the messages, by cause. */
  foundByHint: number;
  foundByTimer: number;
  /** What the idle wait cost: HTTP requests the consumer made, storage requests, push frames. */
  httpRequests: number;
  storage: RequestCounts;
  hintsReceived: number;
}

export interface PushBenchResult {
  mode: string;
  description: string;
  rates: RateResult[];
  idle: IdleResult[];
  channelPosts: number;
  channelNotifications: number;
  coalescedAppends: number;
  idleCost: IdleCostResult;
}

const BODY_BYTES = 1024;
/** Sends in flight at most: past it the producer waits (the achieved rate says so). */
const MAX_IN_FLIGHT = 64;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Counts the HTTP requests this process sends to `base`: the SDK's (its undici pool) and global fetch's, both
 * announced on undici's diagnostics channel.
 */
function countRequests(base: string): { count(): number; restore(): void } {
  let n = 0;
  const origin = new URL(base).origin;
  const onCreate = (message: unknown) => {
    const request = (message as { request?: { origin?: unknown } }).request;
    if (request !== undefined && String(request.origin ?? "").startsWith(origin)) n++;
  };
  diagnostics.subscribe("undici:request:create", onCreate);
  return { count: () => n, restore: () => diagnostics.unsubscribe("undici:request:create", onCreate) };
}

/** A local server on the embedded store, or on the AWS adapters with injected latencies (also subscription.ts). */
export async function openServer(
  o: Pick<PushBenchOptions, "mode" | "latencies">,
  runId: string,
  extra: Pick<LocalServerOptions, "targetCaPem"> = {},
): Promise<{ server: LocalServer; cleanup(): Promise<void>; description: string }> {
  // Brokers register every 30 s as by default (a broker expires 120 s after its last registration).
  const timers = { ...extra, port: 0, registerIntervalMs: 30_000, retentionIntervalMs: 3_600_000 };
  if (o.mode === "local") {
    const dataDir = await mkdtemp(join(tmpdir(), "nimbus-push-bench-"));
    const storage = await openStorage({ kind: "local", dataDir });
    const server = await serveOn(storage, timers, true);
    return {
      server,
      description: "local server, embedded store (SQLite + files), no injected latency",
      cleanup: () => rm(dataDir, { recursive: true, force: true }),
    };
  }
  const emulators = await startEmulators();
  const raw: Storage = await openStorage({
    kind: "aws",
    provision: true,
    region: "us-east-1",
    bucket: `nimbus-push-${runId}`,
    tablePrefix: `push-${runId}-`,
    dynamoEndpoint: emulators.dynamoEndpoint,
    s3Endpoint: emulators.s3Endpoint,
    credentials: EMULATOR_CREDENTIALS,
  });
  const l = o.latencies;
  const server = await serveOn(withAwsLatencies(raw, l), timers, true);
  return {
    server,
    description:
      `local server, AWS adapters on dynalite + s3rver with injected latencies (p50/p99 ms): S3 PUT ${l.s3Put.p50Ms}/${l.s3Put.p99Ms}, ` +
      `S3 GET ${l.s3Get.p50Ms}/${l.s3Get.p99Ms}, DynamoDB ${l.dynamo.p50Ms}/${l.dynamo.p99Ms}`,
    cleanup: () => emulators.stop(),
  };
}

/** A consumer that records, per sequence number in the body, when the listener got it. */
function startConsumer(url: string, group: string, topic: string, channel: boolean) {
  const receivedAt = new Map<number, number>();
  let duplicates = 0;
  const consumer = new PushConsumer({
    consumerGroup: group,
    endpoints: url,
    pushChannel: channel,
    consumeThreadMax: 64,
    onError: () => {},
  });
  consumer.subscribe(topic, "*");
  consumer.registerMessageListener((msgs) => {
    const now = performance.now();
    for (const m of msgs) {
      const seq = Number(m.bodyText.slice(0, m.bodyText.indexOf(" ")));
      if (receivedAt.has(seq)) duplicates++;
      else receivedAt.set(seq, now);
    }
    return "CONSUME_SUCCESS";
  });
  return { consumer, receivedAt, duplicates: () => duplicates };
}

/** A 1 KiB body whose first word is `seq` (also subscription.ts). */
export const body = (seq: number) => `${seq} `.padEnd(BODY_BYTES, "x");

/** Polls `condition` every 5 ms for at most `maxMs`; answers whether it held (also subscription.ts). */
export async function waitFor(condition: () => boolean, maxMs: number): Promise<boolean> {
  const deadline = Date.now() + maxMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(5);
  }
  return true;
}

export async function runPushLatency(o: PushBenchOptions): Promise<PushBenchResult> {
  const runId = Date.now().toString(36);
  const { server, cleanup, description } = await openServer(o, runId);
  const requests = countRequests(server.url);
  try {
    const api = new NimbusApi({ endpoints: server.url, timeoutMs: 30_000 });
    const topic = `PushBench${runId}`;
    await api.updateTopic(topic, { readQueueNums: 2, writeQueueNums: 2, brokerNames: ["broker-a", "broker-b"] });
    const c = startConsumer(server.url, `gPushBench${runId}`, topic, o.ratesChannel);
    await c.consumer.start();
    await waitFor(
      () => (c.consumer.pushChannelStats.up || !o.ratesChannel) && c.consumer.assignedQueues().length === 4,
      60_000,
    );
    const producer = new Producer({
      producerGroup: `pPushBench${runId}`,
      endpoints: server.url,
      sendMsgTimeout: 30_000,
    });
    await producer.start();
    let seq = 0;
    const sentAt = new Map<number, number>();

    let failed = 0;
    const sendOne = async (produce: number[]): Promise<number | undefined> => {
      const n = seq++;
      const start = performance.now();
      sentAt.set(n, start);
      try {
        await producer.send(new Message(topic, body(n)));
      } catch {
        failed++;
        return undefined;
      }
      produce.push(performance.now() - start);
      return n;
    };

    const rates: RateResult[] = [];
    for (const rate of o.rates) {
      const total = Math.max(1, Math.round(rate * o.secondsPerRate));
      const produce: number[] = [];
      const mine: number[] = [];
      const inFlight = new Set<Promise<unknown>>();
      const failedBefore = failed;
      const t0 = performance.now();
      for (let i = 0; i < total; i++) {
        const due = t0 + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        while (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
        const p = sendOne(produce).then((n) => (n === undefined ? undefined : mine.push(n)));
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
      }
      await Promise.all(inFlight);
      const elapsed = (performance.now() - t0) / 1000;
      await waitFor(() => mine.every((n) => c.receivedAt.has(n)), 120_000);
      const e2e = mine.filter((n) => c.receivedAt.has(n)).map((n) => (c.receivedAt.get(n) ?? 0) - (sentAt.get(n) ?? 0));
      rates.push({
        targetPerSec: rate,
        sent: total,
        achievedPerSec: Math.round(total / Math.max(elapsed, 1e-3)),
        received: e2e.length,
        failed: failed - failedBefore,
        duplicates: c.duplicates(),
        produce: summarize(produce),
        endToEnd: summarize(e2e),
      });
      console.error(`push bench ${o.mode} ${rate}/s: ${JSON.stringify(rates[rates.length - 1])}`);
    }

    const idle: IdleResult[] = [];
    const idleRound = async (consumer: ReturnType<typeof startConsumer>, channel: boolean, t: string) => {
      const s0 = consumer.consumer.pushChannelStats;
      const r0 = requests.count();
      const c0 = server.storage.counter.snapshot();
      await sleep(o.idleSeconds * 1000);
      const httpRequests = requests.count() - r0;
      const storage = diffCounts(server.storage.counter.snapshot(), c0);
      const produce: number[] = [];
      const mine: number[] = [];
      for (let q = 0; q < 4; q++) {
        const n = seq++;
        const start = performance.now();
        sentAt.set(n, start);
        await producer.send(new Message(t, body(n)));
        produce.push(performance.now() - start);
        mine.push(n);
      }
      await waitFor(() => mine.every((n) => consumer.receivedAt.has(n)), 120_000);
      const s1 = consumer.consumer.pushChannelStats;
      const e2e = mine
        .filter((n) => consumer.receivedAt.has(n))
        .map((n) => (consumer.receivedAt.get(n) ?? 0) - (sentAt.get(n) ?? 0));
      idle.push({
        channel,
        idleSeconds: o.idleSeconds,
        endToEnd: summarize(e2e),
        foundByHint: s1.foundBy.byHint - s0.foundBy.byHint,
        foundByTimer: s1.foundBy.byTimer - s0.foundBy.byTimer,
        httpRequests,
        storage,
        hintsReceived: s1.hints - s0.hints,
      });
      console.error(`push bench ${o.mode} idle (channel ${channel}): ${JSON.stringify(idle[idle.length - 1])}`);
    };
    for (let r = 0; r < o.idleRounds; r++) await idleRound(c, o.ratesChannel, topic);
    await c.consumer.shutdown();

    // The baseline: the same idle round with polling only.
    const baseTopic = `PushBase${runId}`;
    await api.updateTopic(baseTopic, { readQueueNums: 2, writeQueueNums: 2, brokerNames: ["broker-a", "broker-b"] });
    const base = startConsumer(server.url, `gPushBase${runId}`, baseTopic, false);
    await base.consumer.start();
    await waitFor(() => base.consumer.assignedQueues().length === 4, 60_000);
    await idleRound(base, false, baseTopic);
    await base.consumer.shutdown();
    await producer.shutdown();
    const idleCost = await measureIdleCost(server, requests, o.idleCostPeriodMs, o.idleCostPeriods);
    console.error(`push bench ${o.mode} idle cost: ${JSON.stringify(idleCost)}`);
    const stats = server.context.broker.channel.stats;
    return {
      mode: o.mode,
      description,
      rates,
      idle,
      channelPosts: stats.posts,
      channelNotifications: stats.notifications,
      coalescedAppends: stats.coalesced,
      idleCost,
    };
  } finally {
    requests.restore();
    await server.close();
    await cleanup();
  }
}
