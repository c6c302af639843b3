/**
 * @module The gRPC phases of `npm run bench`: RocketMQ's official Node.js client (`rocketmq-client-nodejs`)
 * producing through the local server's gRPC endpoint, one message per send as that client sends, with the
 * same producers, body size and budget as the HTTP cases beside it; then receiving and acking every message
 * it produced with as many SimpleConsumers as the HTTP cases' consumers, as that client does (ReceiveMessage
 * of up to 32 on POP, then one AckMessage per message). For each: msg/s, CPU µs per message (this whole
 * process: clients, server, emulators), gRPC calls and storage requests per message (docs/grpc.md).
 */
import { randomBytes } from "node:crypto";
import { Producer, SimpleConsumer } from "rocketmq-client-nodejs";
import type { LocalServer } from "../../lib/dev/local-server.js";
import { diffCounts } from "../../lib/storage/request-counter.js";
import { startPopGroup } from "../support/pop-group.js";
import { type CaseOptions, createTopic, MAX_ERRORS, type PhaseResult, phase } from "./data-plane.js";

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

export interface GrpcResult {
  produce: PhaseResult;
  /** SimpleConsumers receiving (batches of up to 32) and acking (one call per message) what was produced. */
  receiveAck: PhaseResult;
}

/** Messages per ReceiveMessage (the most the endpoint hands out per call). */
export const GRPC_RECEIVE_BATCH = 32;
/** A consumer stops after this many empty receives in a row. */
const EMPTY_RECEIVES = 3;

export async function runGrpc(server: LocalServer, topic: string, o: CaseOptions): Promise<GrpcResult> {
  const endpoint = server.grpc?.endpoint;
  if (endpoint === undefined) throw new Error("the bench server has no gRPC endpoint");
  await server.context.broker.registerBrokers();
  await createTopic(server, topic, o.queues);
  const group = `${topic}_grpc`;
  // A POP group gets what is stored from its start on: start it before producing.
  await startPopGroup(server.context.broker, group, topic);
  const produce = await produceOverGrpc(server, endpoint, topic, o);
  // Every message produced is received and acked, the producers' warm-up sends (one each) too.
  const expected = produce.messages + o.producers;
  const receiveAck = await receiveAndAck(server, endpoint, topic, group, expected, o.consumers);
  return { produce, receiveAck };
}

async function produceOverGrpc(server: LocalServer, endpoint: string, topic: string, o: CaseOptions) {
  const producers = await Promise.all(
    Array.from({ length: o.producers }, async () => {
      const p = new Producer({ endpoints: endpoint, namespace: "", logger: silent, topics: [topic] });
      await p.startup();
      return p;
    }),
  );
  const body = randomBytes(o.bodyBytes);
  // One warm-up send each (route, Telemetry), outside the measured phase.
  await Promise.all(producers.map((p) => p.send({ topic, body })));
  const latencies: number[] = [];
  let claimed = 0;
  let sent = 0;
  let errors = 0;
  const before = server.storage.counter.snapshot();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + o.produceBudgetMs;
  await Promise.all(
    producers.map(async (p) => {
      while (claimed < o.maxMessages && performance.now() < deadline && errors < MAX_ERRORS) {
        claimed++;
        const t = performance.now();
        try {
          await p.send({ topic, body });
          sent++;
        } catch (err) {
          errors++;
          if (errors === 1) console.error("grpc send failed:", err);
        }
        latencies.push(performance.now() - t);
      }
    }),
  );
  const ms = performance.now() - started;
  const counts = diffCounts(server.storage.counter.snapshot(), before);
  const produce = phase(sent, sent + errors, errors, ms, process.cpuUsage(cpuBefore), latencies, counts);
  await Promise.all(producers.map((p) => p.shutdown()));
  return produce;
}

async function receiveAndAck(
  server: LocalServer,
  endpoint: string,
  topic: string,
  group: string,
  expected: number,
  consumers: number,
): Promise<PhaseResult> {
  const clients = await Promise.all(
    Array.from({ length: consumers }, async () => {
      const c = new SimpleConsumer({
        endpoints: endpoint,
        namespace: "",
        consumerGroup: group,
        subscriptions: new Map([[topic, "*"]]),
        awaitDuration: 0,
        logger: silent,
      });
      await c.startup();
      return c;
    }),
  );
  const latencies: number[] = [];
  let acked = 0;
  let calls = 0;
  let errors = 0;
  const before = server.storage.counter.snapshot();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      for (let empty = 0; acked < expected && empty < EMPTY_RECEIVES && errors < MAX_ERRORS; ) {
        const t = performance.now();
        calls++;
        try {
          const got = await c.receive(GRPC_RECEIVE_BATCH, 60_000);
          latencies.push(performance.now() - t);
          empty = got.length === 0 ? empty + 1 : 0;
          for (const m of got) {
            const a = performance.now();
            calls++;
            await c.ack(m);
            latencies.push(performance.now() - a);
            acked++;
          }
        } catch (err) {
          errors++;
          if (errors === 1) console.error("grpc receive/ack failed:", err);
        }
      }
    }),
  );
  const ms = performance.now() - started;
  const counts = diffCounts(server.storage.counter.snapshot(), before);
  const result = phase(acked, calls, errors, ms, process.cpuUsage(cpuBefore), latencies, counts);
  await Promise.all(clients.map((c) => c.shutdown()));
  if (acked < expected) console.error(`grpc receive + ack: ${acked} of ${expected} messages`);
  return result;
}
