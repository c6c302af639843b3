/** @module One case of the lambda-concurrency bench: N containers appending for the window, measured and read back. */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { QueueLog } from "../../lib/broker/queue-log/index.js";
import type { QueueRef } from "../../lib/broker/queue-log/queue-index.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { DynamoBackend } from "../support/emulators.js";
import { DEFAULT_AWS_LATENCIES, type LatencyProfile, withAwsLatencies } from "./aws-latency.js";
import { type Container, countingConflicts, createTopic, queueLogAppender, sendFunction } from "./lambda-containers.js";
import { checkReadBack, groupFigures, tailQueue } from "./lambda-readers.js";
import type { ConcurrencyOptions, ConcurrencyRow, Shape } from "./lambda-types.js";
import { percentile, procCpuSeconds } from "./stats.js";

/** Polls of each group at the idle queue's end, after the window. */
const IDLE_POLLS = 5;
const stretched = (p: LatencyProfile, k: number): LatencyProfile => ({ p50Ms: p.p50Ms * k, p99Ms: p.p99Ms * k });

/** Child processes of this one (the DynamoDB Local JVM). */
function childPids(): number[] {
  try {
    return readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

const cpuNow = () => procCpuSeconds(process.pid) + childPids().reduce((s, pid) => s + procCpuSeconds(pid), 0);

/** One case: `writers` containers appending to the shape's queues for the window, then the read-back. */
export async function runCase(
  options: ConcurrencyOptions,
  backend: DynamoBackend,
  shape: Shape,
  writers: number,
  open: () => Storage,
  tag: string,
  windowStarts: () => void = () => undefined,
): Promise<ConcurrencyRow> {
  const k = options.stretch;
  const latency = { p50Ms: options.dynamo.p50Ms * k, p99Ms: options.dynamo.p99Ms * k };
  const counts = { conflicts: 0, adds: 0 };
  const queues: QueueRef[] = Array.from({ length: shape === "topic" ? 16 : 1 }, (_, queueId) => ({
    topic: `LC_${tag}`,
    brokerName: "broker-a",
    queueId,
  }));
  const containers = Array.from({ length: writers }, () => {
    const storage = countingConflicts(
      withAwsLatencies(open(), {
        dynamo: latency,
        // S3's own latencies (a batch past 8 KiB is one object), stretched as the rest.
        s3Put: stretched(DEFAULT_AWS_LATENCIES.s3Put, k),
        s3Get: stretched(DEFAULT_AWS_LATENCIES.s3Get, k),
      }),
      counts,
    );
    return options.via === "send-handler"
      ? sendFunction(storage)
      : queueLogAppender(storage, k, options.indexKeys, options.hedgeBudget);
  });
  const body = new Uint8Array(1024).fill(97);
  const acked: { q: number; offset: number; id: string }[] = [];
  const batchOf = (id: string) =>
    Array.from({ length: options.batch }, (_, i) => record(options.batch === 1 ? id : `${id}.${i}`));
  const record = (id: string) => ({
    bornTimestamp: Date.now(),
    flag: 0,
    tags: "",
    keys: [],
    properties: { UNIQ_KEY: id },
    body,
    reconsumeTimes: 0,
  });
  // The queues exist before the window (their first append creates the counter): the steady state is measured.
  const warm = new QueueLog(open(), { indexKeys: options.indexKeys });
  if (options.via === "send-handler") await createTopic(open(), queues[0]?.topic ?? "", queues.length);
  for (const [q, queue] of queues.entries()) {
    const { queueOffset } = await warm.append(queue, [record(`warm_${q}`)]);
    acked.push({ q, offset: queueOffset, id: `warm_${q}` });
  }
  /** One batch of a container to the shape's queue (any of 16 for a topic), its messages acked. */
  const appendBatch = async (send: Container["send"], id: string): Promise<void> => {
    const q = shape === "topic" ? Math.floor(Math.random() * 16) : 0;
    const messages = batchOf(id);
    const { offset } = await send(queues[q] as QueueRef, messages);
    for (const [n, m] of messages.entries()) acked.push({ q, offset: offset + n, id: m.properties.UNIQ_KEY ?? "" });
  };
  // Each container's unmeasured appends (ConcurrencyOptions.warmAppends), all containers at once.
  await Promise.all(
    containers.map(async ({ send }, w) => {
      for (let i = 0; i < options.warmAppends; i++) await appendBatch(send, `warm_w${w}_${i}`);
    }),
  );
  const warmAcked = acked.length;
  // The window's requests only: each container's counter (its own storage's) starts again.
  counts.conflicts = 0;
  counts.adds = 0;
  for (const c of containers) c.storage.counter.reset();
  windowStarts();
  const latencies: number[] = [];
  let failures = 0;
  const deadline = performance.now() + options.seconds * 1000;
  const cpu0 = cpuNow();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const t0 = performance.now();
  const killAt = t0 + (options.seconds * 1000) / 3;
  const consumer =
    shape === "dead" ? tailQueue(open(), queues[0] as QueueRef, k, () => performance.now() >= deadline) : undefined;
  const groups =
    options.groups > 0 && shape !== "topic"
      ? Promise.all(
          Array.from({ length: options.groups }, () =>
            tailQueue(open(), queues[0] as QueueRef, k, () => performance.now() >= deadline, warmAcked),
          ),
        )
      : undefined;
  await Promise.all(
    containers.map(async ({ send, kill }, w) => {
      for (let i = 0; performance.now() < deadline; i++) {
        if (shape === "dead" && w === 0 && performance.now() >= killAt) {
          kill(); // its next append dies right after reserving: a hole nobody fills
          try {
            await send(queues[0] as QueueRef, batchOf(`dead_${i}`));
          } catch {
            // died
          }
          return;
        }
        const started = performance.now();
        try {
          await appendBatch(send, `w${w}_${i}`);
          latencies.push((performance.now() - started) / k);
        } catch (err) {
          if (failures++ === 0) console.error(`first failure (${writers} writers): ${String(err).slice(0, 300)}`);
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  loop.disable();
  const cpu = (cpuNow() - cpu0) / elapsed / availableParallelism();
  const writeUnits = containers.reduce((s, c) => s + c.storage.counter.snapshot().writeUnits, 0);
  // Every PUT sent, a slow one's hedge included (lib/broker/queue-log/hedged-puts.ts).
  const objectPuts = containers.reduce((s, c) => s + c.storage.counter.snapshot().objectPuts, 0);
  const consumed = await consumer;
  await consumed?.idle(0);
  const tailed = await groups;
  for (const c of containers) await c.release();
  // The writers stopped and sealed their ranges' tails: each group catches up, then polls the idle queue.
  const idleReads = tailed === undefined ? [] : await Promise.all(tailed.map((t) => t.idle(IDLE_POLLS)));
  const readBack = await checkReadBack(open(), queues, acked, k);
  const appends = (acked.length - warmAcked) / options.batch;
  for (const c of containers) await c.storage.close();
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    via: options.via,
    backend,
    shape,
    writers,
    appends,
    appendsPerSecond: (appends / elapsed) * k,
    batch: options.batch,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    failures,
    conflictsPerAppend: counts.conflicts / Math.max(1, appends),
    throttledPerAppend: 0,
    throttledReadsPerAppend: 0,
    writeUnitsPerAppend: writeUnits / Math.max(1, appends),
    objectPutsPerAppend: objectPuts / Math.max(1, appends),
    cpu,
    loopDelayP99Ms: loop.percentile(99) / 1e6 / k,
    readBack,
    indexKeys: options.indexKeys,
    reservationsPerAppend: counts.adds / Math.max(1, appends),
    ...(consumed === undefined ? {} : { consumer: consumed }),
    ...(tailed === undefined
      ? {}
      : {
          groups: groupFigures(
            tailed,
            elapsed / k,
            idleReads.reduce((a, b) => a + b, 0) / Math.max(1, idleReads.length),
          ),
        }),
  };
}
