/**
 * @module A chaos producer: one OS process that sends its share of the workload, one batch at a time,
 * and retries each batch until it is acknowledged (same messages, same UNIQ_KEYs, as a RocketMQ client
 * retries). Directly on a storage (the embedded store or DynamoDB/S3 through fault proxies), with faults
 * injected at the port and a self-SIGKILL between an object PUT and its index put; or over HTTP to a
 * local server that the runner kills. Reports every ack to the runner over IPC as soon as it has it.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import type { MessageRecord } from "../../lib/core/message.js";
import { createAwsStorage } from "../../lib/storage/aws/index.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import { noFaultCounts, withFaults } from "../support/fault-storage.js";
import { batchAt, bodyOf, CHAOS_BROKER, type ProducerJob, type ProducerReport, uniqKey } from "./workload.js";

const job = JSON.parse(process.argv[2] ?? "") as ProducerJob;
const send = (report: ProducerReport) =>
  new Promise<void>((resolve, reject) =>
    process.send?.(report, (err: Error | null) => (err ? reject(err) : resolve())),
  );

const faults = noFaultCounts();
let clientRetries = 0;

/** Appends one batch, answering its queue offset, or throws (the caller retries). */
type SendBatch = (queueId: number, messages: MessageRecord[]) => Promise<number>;

function directSender(storage: Storage): SendBatch {
  const log = new QueueLog(
    withFaults(storage, {
      plan: job.plan,
      counts: faults,
      beforeIndexPut: (item) => {
        if (item.ok === undefined) return;
        if (job.killAtFirstObject === true || Math.random() < job.killBeforeIndexPut)
          process.kill(process.pid, "SIGKILL");
      },
    }),
  );
  return async (queueId, messages) => (await log.append(queue(queueId), messages)).queueOffset;
}

function httpSender(url: string): SendBatch {
  return async (queueId, messages) => {
    const response = await fetch(`${url}/send`, {
      method: "POST",
      body: JSON.stringify({
        topic: job.topic,
        brokerName: CHAOS_BROKER,
        queueId,
        messages: messages.map((m) => ({ body: Buffer.from(m.body).toString("base64"), properties: m.properties })),
      }),
    });
    const answer = (await response.json()) as { queueOffset?: number; code?: string; message?: string };
    if (response.status !== 200 || typeof answer.queueOffset !== "number") {
      throw new Error(`send answered ${response.status} ${answer.code}: ${answer.message}`);
    }
    return answer.queueOffset;
  };
}

const queue = (queueId: number) => ({ topic: job.topic, brokerName: CHAOS_BROKER, queueId });

function messagesOf(from: number, count: number, large: boolean): MessageRecord[] {
  return Array.from({ length: count }, (_, k) => ({
    bornTimestamp: Date.now(),
    flag: 0,
    tags: "Chaos",
    keys: [],
    properties: { UNIQ_KEY: uniqKey(job.producer, from + k) },
    body: new TextEncoder().encode(bodyOf(job.producer, from + k, large)),
    reconsumeTimes: 0,
  }));
}

async function run(): Promise<void> {
  const t = job.transport;
  const storage =
    t.kind === "local"
      ? createLocalStorage({ dataDir: t.dataDir })
      : t.kind === "aws"
        ? createAwsStorage(t.options)
        : undefined;
  const sendBatch = storage ? directSender(storage) : httpSender((t as { url: string }).url);
  let from = job.from;
  while (from < job.to) {
    const shape = batchAt(job.producer, from);
    const count = Math.min(shape.count, job.to - from);
    const queueId = (job.producer + from) % job.queues;
    const messages = messagesOf(from, count, shape.large);
    for (let attempt = 1; ; attempt++) {
      try {
        const queueOffset = await sendBatch(queueId, messages);
        await send({ kind: "ack", producer: job.producer, from, count, queueId, queueOffset, faults, clientRetries });
        break;
      } catch (err) {
        // Every failure is retried, as a client does; one that never goes away is a bug to report.
        if (attempt >= 1000) throw err;
        clientRetries++;
        await sleep(5 + Math.random() * 20);
      }
    }
    from += count;
  }
  await storage?.close();
  await send({ kind: "done", faults, clientRetries });
}

run().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`chaos producer ${job.producer}:`, err);
    process.exit(2);
  },
);
