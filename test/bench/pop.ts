/**
 * @module The POP phase of `npm run bench`: receive + ack of 1 KiB messages at batch 32 over HTTP on loopback,
 * `clients` receivers of one group at once (POST /receive of 32, then POST /ack of the batch's handles), on
 * a topic filled beforehand. Reports msg/s, CPU µs per message (this process: server and clients) and the
 * storage requests per message of the receive + ack path alone (the sends are outside the measured phase),
 * priced as docs/cost.md does and compared with SQS's receive + delete of 10.
 */
import type { LocalServer } from "../../lib/dev/local-server.js";
import { diffCounts } from "../../lib/storage/request-counter.js";
import { BROKER, createTopic, MAX_ERRORS } from "./data-plane.js";
import { call, mustCall } from "./http.js";
import {
  type CostBreakdown,
  costPerMillion,
  type PerUnit,
  perUnit,
  round,
  roundPerUnit,
  SQS_PER_MILLION_REQUESTS,
} from "./stats.js";

export interface PopBenchResult {
  messages: number;
  batch: number;
  clients: number;
  msgsPerSec: number;
  cpuMicrosPerMsg: number;
  perMessage: PerUnit;
  costPerMillionMessages: CostBreakdown;
  /** Storage only (DynamoDB + S3), API calls excluded: what is compared with SQS. */
  storageCostPerMillion: number;
  /** SQS: receive of 10 + delete of 10 per 10 messages. */
  sqsPerMillion: number;
  errors: number;
}

interface Received {
  messages: { receiptHandle: string }[];
}

export async function runPop(
  server: LocalServer,
  topic: string,
  o: { messages: number; batch: number; clients: number; queues: number },
): Promise<PopBenchResult> {
  await server.context.broker.registerBrokers();
  await createTopic(server, topic, o.queues);
  const group = `${topic}_pop`;
  const receive = {
    consumerGroup: group,
    topic,
    maxMessages: o.batch,
    invisibleDurationMs: 60_000,
    awaitDurationMs: 0,
  };
  await mustCall(server.url, "POST", "/receive", receive); // the group's start
  const body = Buffer.alloc(1024, 120).toString("base64");
  for (let sent = 0; sent < o.messages; sent += 32) {
    const n = Math.min(32, o.messages - sent);
    const queueId = (sent / 32) % o.queues;
    await mustCall(server.url, "POST", "/send", {
      topic,
      brokerName: BROKER,
      queueId,
      messages: Array(n).fill({ body }),
    });
  }
  const before = server.storage.counter.snapshot();
  const cpu = process.cpuUsage();
  const started = performance.now();
  let received = 0;
  let apiCalls = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: o.clients }, async () => {
      for (let empty = 0; received < o.messages && empty < 3 && errors < MAX_ERRORS; ) {
        const r = await call<Received>(server.url, "POST", "/receive", JSON.stringify(receive));
        apiCalls++;
        if (!r.ok) {
          errors++;
          continue;
        }
        const handles = r.body.messages.map((m) => m.receiptHandle);
        if (handles.length === 0) {
          empty++;
          continue;
        }
        received += handles.length;
        const a = await call(
          server.url,
          "POST",
          "/ack",
          JSON.stringify({ consumerGroup: group, topic, receiptHandles: handles }),
        );
        apiCalls++;
        if (!a.ok) errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const per = perUnit(diffCounts(server.storage.counter.snapshot(), before), apiCalls, received);
  const cost = costPerMillion(per);
  return {
    messages: received,
    batch: o.batch,
    clients: o.clients,
    msgsPerSec: Math.round(received / seconds),
    cpuMicrosPerMsg: Math.round((used.user + used.system) / Math.max(1, received)),
    perMessage: roundPerUnit(per),
    costPerMillionMessages: cost,
    storageCostPerMillion: round(cost.dynamo + cost.s3, 4),
    sqsPerMillion: round((2 / 10) * SQS_PER_MILLION_REQUESTS, 4),
    errors,
  };
}

export function formatPop(mode: string, r: PopBenchResult): string {
  const p = r.perMessage;
  return (
    `POP ${mode}: receive+ack of ${r.messages} x 1 KiB at batch ${r.batch}, ${r.clients} clients: ${r.msgsPerSec} msg/s, ` +
    `${r.cpuMicrosPerMsg} µs CPU/msg; per message ${p.tableReads} table reads, ${p.tableWrites} writes, ` +
    `${p.readUnits} RRU, ${p.writeUnits} WRU, ${p.s3Gets} S3 GETs, ${p.apiCalls} API calls; storage $${r.storageCostPerMillion}/M msgs ` +
    `(SQS receive+delete of 10: $${r.sqsPerMillion}/M; with API Gateway + Lambda $${r.costPerMillionMessages.total}/M)` +
    (r.errors > 0 ? `; ${r.errors} errors` : "")
  );
}
