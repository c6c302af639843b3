/**
 * @module `npm run bench -- --suite pop-idle` (the goal "delivery latency with long polling after 60 s idle",
 * docs/benchmarks/data-plane.md, POP "Delivery after 60 s idle"): one SimpleConsumer of the SDK keeps one long-polling receive in flight
 * (`awaitDuration`, default 20 s, so an idle minute spans several polls that end empty and start again); the
 * SDK's Producer sends nothing for `idleSeconds`, then one 1 KiB message. A sample is the send call's start to the
 * receive call returning that message, in this process, which holds the server, the producer and the consumer.
 * Modes: `local` (embedded store) and `aws-latency` (AWS adapters on dynalite + s3rver, every call delayed:
 * aws-latency.ts), as the push and subscription suites have them.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { FilterExpression, Message, type MessageQueue, Producer, SimpleConsumer } from "../../lib/client/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { createTopic } from "../support/consumer-helpers.js";
import type { AwsLatencies } from "./aws-latency.js";
import { body, openServer, waitFor } from "./push-latency.js";
import { type LatencySummary, round, summarize } from "./stats.js";

const QUEUES = 4;
/** Bound of every wait for a message to come back. */
const RECEIVE_WAIT_MS = 120_000;

export interface PopIdleOptions {
  mode: "local" | "aws-latency";
  latencies: AwsLatencies;
  idleSeconds: number;
  idleRounds: number;
  /** The receive's long-poll wait (the SimpleConsumer's `awaitDuration`). */
  awaitMs: number;
}

export interface PopIdleResult {
  mode: string;
  description: string;
  idleSeconds: number;
  awaitMs: number;
  rounds: number;
  /** Receives that ended empty while the consumer waited (long polls that timed out and were started again). */
  emptyReceives: number;
  endToEnd: LatencySummary;
  samplesMs: number[];
  /** The send calls' own durations (start to answer), of the same samples. */
  sendMs: number[];
}

export async function runPopIdle(o: PopIdleOptions, runId: string): Promise<PopIdleResult> {
  const { server, cleanup, description } = await openServer(o, `${runId}pi`);
  const topic = `PopIdle${o.mode === "local" ? "L" : "A"}${runId}`;
  const group = `${topic}_g`;
  const endpoints = server.url;
  const producer = new Producer({ producerGroup: `${topic}_p`, endpoints });
  const consumer = new SimpleConsumer({
    consumerGroup: group,
    endpoints,
    subscriptions: new Map([[topic, FilterExpression.SUB_ALL]]),
    awaitDuration: o.awaitMs,
  });
  const receivedAt = new Map<number, number>();
  let emptyReceives = 0;
  let running = true;
  let loop: Promise<void> | undefined;
  try {
    await server.context.broker.registerBrokers();
    const queues = await createTopic(new NimbusApi({ endpoints }), topic, QUEUES, ["broker-a"]);
    await producer.start();
    await consumer.startup();
    loop = (async () => {
      while (running) {
        const got = await consumer.receive(16, 60_000).catch(() => []);
        const at = performance.now();
        if (got.length === 0) emptyReceives++;
        for (const m of got) {
          receivedAt.set(Number.parseInt(Buffer.from(m.body).toString("utf8"), 10), at);
          await consumer.ack(m).catch(() => undefined);
        }
      }
    })();
    // The consumer's start fixed its group's start: warm up with one message, sent again until one arrives.
    for (let tries = 0; !receivedAt.has(0); tries++) {
      if (tries === 20) throw new Error("the warm-up message never came");
      await producer.send(new Message(topic, "TagA", body(0)), queues[0] as MessageQueue);
      await waitFor(() => receivedAt.has(0), 5_000);
    }
    emptyReceives = 0;
    const samples: number[] = [];
    const sendMs: number[] = [];
    for (let r = 1; r <= o.idleRounds; r++) {
      await sleep(o.idleSeconds * 1000);
      const at = performance.now();
      await producer.send(new Message(topic, "TagA", body(r)), queues[r % QUEUES] as MessageQueue);
      sendMs.push(round(performance.now() - at, 2));
      await waitFor(() => receivedAt.has(r), RECEIVE_WAIT_MS);
      const got = receivedAt.get(r);
      if (got !== undefined) samples.push(round(got - at, 2));
      console.error(
        `bench pop-idle ${o.mode} after ${o.idleSeconds} s idle: ${samples.at(-1) ?? "lost"} ms (send ${sendMs.at(-1)} ms)`,
      );
    }
    return {
      mode: o.mode,
      description,
      idleSeconds: o.idleSeconds,
      awaitMs: o.awaitMs,
      rounds: o.idleRounds,
      emptyReceives,
      endToEnd: summarize(samples),
      samplesMs: samples,
      sendMs,
    };
  } finally {
    running = false;
    await producer.shutdown();
    // The receive in flight ends within its long poll once the server closes.
    await server.close();
    await loop?.catch(() => undefined);
    await consumer.shutdown();
    await cleanup();
  }
}

export function formatPopIdle(r: PopIdleResult): string {
  const e = r.endToEnd;
  return [
    `\nPOP after idle — ${r.mode}: ${r.description}; SimpleConsumer long poll ${r.awaitMs} ms`,
    "phase | samples | p50 ms | p99 ms | max ms | of which the send call, max ms | empty receives while idle",
    `after ${r.idleSeconds} s idle | ${e.count}/${r.rounds} | ${e.p50Ms} | ${e.p99Ms} | ${e.maxMs} | ${Math.max(0, ...r.sendMs)} | ${r.emptyReceives}`,
  ].join("\n");
}
