/**
 * @module The gRPC phases of `npm run bench`: RocketMQ's official Node.js client (`rocketmq-client-nodejs`)
 * producing through the local server's gRPC endpoint, one message per send as that client sends, with the
 * same producers, body size and budget as the HTTP cases beside it; msg/s, CPU µs per message (this whole
 * process: client, server, emulators) and storage requests per message. Receive + ack runs once POP serves
 * ReceiveMessage (see docs/grpc.md for what is measured).
 */
import { randomBytes } from "node:crypto";
import { Producer } from "rocketmq-client-nodejs";
import type { LocalServer } from "../../lib/dev/local-server.js";
import { diffCounts } from "../../lib/storage/request-counter.js";
import { type CaseOptions, createTopic, MAX_ERRORS, type PhaseResult, phase } from "./data-plane.js";

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

export interface GrpcResult {
  produce: PhaseResult;
}

export async function runGrpcProduce(server: LocalServer, topic: string, o: CaseOptions): Promise<GrpcResult> {
  const endpoint = server.grpc?.endpoint;
  if (endpoint === undefined) throw new Error("the bench server has no gRPC endpoint");
  await server.context.broker.registerBrokers();
  await createTopic(server, topic, o.queues);
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
  return { produce };
}
