/**
 * @module `npm run bench -- --suite lambda-concurrency`: N independent single-request "containers" appending to
 * one hot queue, or to a topic of 16 queues, the way Lambda runs sends: each container has its own storage
 * client (its own connections) and its own `QueueLog` (no group commit between containers: each sends one
 * 1 KiB message at a time, closed loop), on DynamoDB Local or dynalite (+ s3rver) with injected DynamoDB
 * latencies (default 5 ms p50 / 15 ms p99). Every latency, and the queue log's own time bounds (append budget,
 * reservation lease), can be stretched by `--stretch k` so that the 2-core CPU stays out of the figure; the
 * figures are converted back (times / k, rates x k). Beside each figure: the CPU the run used (this process
 * plus the DynamoDB Local JVM) as a share of the machine. Every run is read back: every acknowledged message
 * once, at its offset, and no gap.
 *
 * `--via queue-log` (the default) runs the queue log's append path in each container (what contends);
 * `--via send-handler` runs the whole Send function instead: each container its own broker behind the HTTP
 * handler the Send Lambda runs (lib/http, SERVICE_ROUTES.Send), invoked with API Gateway HTTP API events.
 *
 * DynamoDB's per-partition-key limits (1,000 write units/s, 3,000 read units/s: test/support/dynamo-key-limits.ts)
 * stand in front of the emulator unless `--key-limits off` ("emulator, no per-key limit"); a throttled request is
 * answered as DynamoDB answers it, and the column says how many per append.
 *
 * `--index-keys K` spreads the queues' index over K partition keys (a hot queue: docs/queue-log.md, "Hot queues";
 * 1, the default, is the one-key layout). The `dead` shape is the hot queue with one container killed a third into
 * the window right after it reserved (its range never filled) and a consumer tailing the queue every 20 ms: the
 * row's p50 / p99 columns are then the consumer's delivery delay (read time - store time), and "max" its longest.
 *
 * `--batch b` sends b messages of 1 KiB per append (32 KiB: one S3 object and a small index item); `--groups G` runs G
 * consumer groups tailing the hot queue (each its own client and `QueueLog`, polling every 20 ms when it found nothing):
 * their delivery delay and the read requests the per-key limits throttled. The AWS SDK's retry back-off (1 s base
 * after a throttle, 50 ms after a 5xx: lib/storage/aws/retry.ts) is stretched with the rest, so a throttle costs in
 * the figure what it costs on DynamoDB; `--throttle-base-ms` sets the throttling base (unstretched ms), `--max-attempts`
 * the SDK's attempts per request (default 3).
 *
 * Flags: `--key-limits on|off`, `--index-keys K`, `--backends dynamodb-local,dynalite`, `--writers 1,2,4,8,16,32,64`, `--seconds <per case, stretched
 * time>`, `--stretch <k>`, `--dynamo p50/p99`, `--shapes hot,topic`, `--via queue-log|send-handler`.
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { QueueLog } from "../../lib/broker/queue-log/index.js";
import type { QueueRef } from "../../lib/broker/queue-log/queue-index.js";
import { BROKER_TABLES } from "../../lib/broker/store/tables.js";
import { createBroker } from "../../lib/config/create-broker.js";
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { isNimbusError } from "../../lib/core/errors.js";
import type { MessageRecord } from "../../lib/core/message.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import { createApiHandler } from "../../lib/http/handler.js";
import { SERVICE_ROUTES } from "../../lib/http/routes/index.js";
import {
  createAwsStorage,
  DEFAULT_AWS_TIMEOUTS,
  DEFAULT_RETRY_BACKOFF,
  ensureBucket,
  ensureTables,
} from "../../lib/storage/aws/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { Table, TableSpec } from "../../lib/storage/table.js";
import { apiGatewayEvent } from "../support/api-gateway-event.js";
import { DYNAMODB_KEY_LIMITS, startKeyLimitedDynamo } from "../support/dynamo-key-limits.js";
import { type DynamoBackend, emulatorStorageOptions, startEmulators } from "../support/emulators.js";
import { DEFAULT_AWS_LATENCIES, type LatencyProfile, withAwsLatencies } from "./aws-latency.js";

const stretched = (p: LatencyProfile, k: number): LatencyProfile => ({ p50Ms: p.p50Ms * k, p99Ms: p.p99Ms * k });

import { percentile, procCpuSeconds } from "./stats.js";

export interface ConcurrencyOptions {
  backends: DynamoBackend[];
  writers: number[];
  shapes: Shape[];
  seconds: number;
  stretch: number;
  dynamo: LatencyProfile;
  /** What each container runs: the queue log's append, or the Send function's handler (API Gateway events). */
  via: "queue-log" | "send-handler";
  /** DynamoDB's per-partition-key limits in front of the emulator (test/support/dynamo-key-limits.ts), scaled by 1/stretch. */
  keyLimits: boolean;
  /** Partition keys each queue's index is spread over (1: one key). */
  indexKeys: number;
  /** Messages (1 KiB each) per append. */
  batch: number;
  /** Consumer groups tailing the hot queue during the window (0: none). */
  groups: number;
  /** The SDK's back-off base after a throttled request (ms, before the stretch). */
  throttleBaseMs: number;
  /** The SDK's attempts per request (AwsStorageOptions.maxAttempts; its default 3). */
  maxAttempts: number;
}

export type Shape = "hot" | "topic" | "dead";

export interface ConcurrencyRow {
  via: ConcurrencyOptions["via"];
  backend: DynamoBackend;
  shape: Shape;
  indexKeys: number;
  writers: number;
  appends: number;
  appendsPerSecond: number;
  batch: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
  conflictsPerAppend: number;
  /** Requests the per-key limits answered ProvisionedThroughputExceededException, per append (SDK retries included). */
  throttledPerAppend: number;
  /** Of those, reads (the groups' polls, the writers' layout reads). */
  throttledReadsPerAppend: number;
  writeUnitsPerAppend: number;
  /** CPU used (this process + the emulator's JVM) as a share of all cores, 0..1. */
  cpu: number;
  /** This process's event-loop delay p99 (ms, stretched time): what the machine's load adds to any wait. */
  loopDelayP99Ms: number;
  /** The dead shape: the consumer's delivery delay (read time - store time), p50 / p99 / max ms; tails sealed by owners. */
  consumer?: { p50Ms: number; p99Ms: number; maxMs: number; messages: number; seals: number };
  /** `--groups`: how many groups tailed, their delivery delay (all messages of all groups), read throttles per poll. */
  groups?: {
    count: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    messages: number;
    pollsPerSecond: number;
    failedPolls: number;
  };
  /** Counter reservations (`ADD`s) per append. */
  reservationsPerAppend: number;
  readBack: string;
}

/** Counts the conditional writes that failed (each billed as a write). */
function countingConflicts(storage: Storage, counts: { conflicts: number; adds: number }): Storage {
  const wrap = (table: Table): Table => ({
    ...table,
    spec: table.spec,
    counter: table.counter,
    get: (k, o) => table.get(k, o),
    delete: (k) => table.delete(k),
    query: (pk, o) => table.query(pk, o),
    put: async (item, o) => {
      try {
        return await table.put(item, o);
      } catch (err) {
        if (isNimbusError(err) && err.code === "CONDITION_FAILED") counts.conflicts++;
        throw err;
      }
    },
    add: async (...args: Parameters<Table["add"]>) => {
      counts.adds++;
      try {
        return await table.add(...args);
      } catch (err) {
        if (isNimbusError(err) && err.code === "CONDITION_FAILED") counts.conflicts++;
        throw err;
      }
    },
  });
  const tables = new Map<string, Table>();
  return {
    ...storage,
    objects: storage.objects,
    counter: storage.counter,
    close: () => storage.close(),
    table(spec: TableSpec): Table {
      let t = tables.get(spec.name);
      if (!t) {
        t = wrap(storage.table(spec));
        tables.set(spec.name, t);
      }
      return t;
    },
  };
}

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

async function runCase(
  options: ConcurrencyOptions,
  backend: DynamoBackend,
  shape: Shape,
  writers: number,
  open: () => Storage,
  tag: string,
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
    return options.via === "send-handler" ? sendFunction(storage) : queueLogAppender(storage, k, options.indexKeys);
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
  const warmAcked = acked.length;
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
        const q = shape === "topic" ? Math.floor(Math.random() * 16) : 0;
        const started = performance.now();
        try {
          const messages = batchOf(`w${w}_${i}`);
          const { offset } = await send(queues[q] as QueueRef, messages);
          latencies.push((performance.now() - started) / k);
          for (const [n, m] of messages.entries())
            acked.push({ q, offset: offset + n, id: m.properties.UNIQ_KEY ?? "" });
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
  const consumed = await consumer;
  const tailed = await groups;
  for (const c of containers) await c.release();
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
    cpu,
    loopDelayP99Ms: loop.percentile(99) / 1e6 / k,
    readBack,
    indexKeys: options.indexKeys,
    reservationsPerAppend: counts.adds / Math.max(1, appends),
    ...(consumed === undefined ? {} : { consumer: consumed }),
    ...(tailed === undefined ? {} : { groups: groupFigures(tailed, elapsed / k) }),
  };
}

/** A consumer tailing `queue` every 20 ms (stretched) until `stop`: its delivery delays, read time - store time. */
async function tailQueue(storage: Storage, queue: QueueRef, k: number, stop: () => boolean, from = 0): Promise<Tailed> {
  const reader = new QueueLog(storage, { reservationLeaseMs: 500 * k });
  const delays: number[] = [];
  let at = from;
  let seals = 0;
  let polls = 0;
  let errors = 0;
  while (!stop()) {
    polls++;
    let got: Awaited<ReturnType<QueueLog["read"]>>;
    try {
      got = await reader.read(queue, at, { maxMessages: 256 });
    } catch {
      // A read the SDK gave up on (throttled past its attempts, or timed out): the consumer polls again later.
      errors++;
      await new Promise((resolve) => setTimeout(resolve, 20 * k));
      continue;
    }
    const now = Date.now();
    for (const m of got.messages) delays.push((now - m.storeTimestamp) / k);
    if (got.status === "NO_MATCHED_MSG") seals++;
    at = got.nextBeginOffset;
    if (got.messages.length === 0) await new Promise((resolve) => setTimeout(resolve, 20 * k));
  }
  await storage.close();
  const sorted = delays.sort((a, b) => a - b);
  return {
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted[sorted.length - 1] ?? 0,
    messages: sorted.length,
    seals,
    polls,
    errors,
    delays: sorted,
  };
}

interface Tailed {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  messages: number;
  seals: number;
  polls: number;
  errors: number;
  delays: number[];
}

/** The groups' figures together: every delivery's delay, and the polls per second (stretched time). */
function groupFigures(tailed: Tailed[], seconds: number): NonNullable<ConcurrencyRow["groups"]> {
  const all = tailed.flatMap((t) => t.delays).sort((a, b) => a - b);
  return {
    count: tailed.length,
    p50Ms: percentile(all, 50),
    p99Ms: percentile(all, 99),
    maxMs: all[all.length - 1] ?? 0,
    messages: all.length,
    pollsPerSecond: tailed.reduce((s, t) => s + t.polls, 0) / seconds,
    failedPolls: tailed.reduce((s, t) => s + t.errors, 0),
  };
}

interface Container {
  storage: Storage;
  /** Its next append dies right after reserving (the dead shape). */
  kill(): void;
  /** Seals the unused tails of the ranges it holds (the run is over). */
  release(): Promise<void>;
  /** Sends `messages` to `queue` as one append, as the container does; answers the first one's offset. */
  send(queue: QueueRef, messages: MessageRecord[]): Promise<{ offset: number }>;
}

/** A container running the queue log's append (the path that contends), its time bounds stretched by `k`. */
function queueLogAppender(storage: Storage, k: number, indexKeys: number): Container {
  let dead = false;
  const log = new QueueLog(storage, {
    maxAppendMs: 2500 * k,
    reservationLeaseMs: 500 * k,
    rangeUseMs: 200 * k,
    indexKeys,
    afterReserve: () => {
      if (dead) throw new Error("killed after reserving");
    },
  });
  return {
    storage,
    kill: () => {
      dead = true;
    },
    release: () => log.releaseRanges(),
    send: async (queue, messages) => ({ offset: (await log.append(queue, messages)).queueOffset }),
  };
}

/** A container of the Send function: its own broker behind the Send Lambda's HTTP handler, API Gateway events. */
function sendFunction(storage: Storage): Container {
  const broker = createBroker(storage, parseNimbusConfig({}), { apiUrl: "https://api.test", newMessageId });
  const handle = createApiHandler(SERVICE_ROUTES.Send, async () => ({ broker, role: { kind: "all" as const } }));
  return {
    storage,
    kill: () => undefined,
    release: async () => undefined,
    send: async (queue, messages) => {
      const request = {
        topic: queue.topic,
        brokerName: queue.brokerName,
        queueId: queue.queueId,
        messages: messages.map((m) => ({ body: Buffer.from(m.body).toString("base64"), properties: m.properties })),
      };
      const answer = await handle(apiGatewayEvent("POST", "/send", request));
      if (answer.statusCode !== 200) throw new Error(`send answered ${answer.statusCode}: ${answer.body}`);
      const sent = JSON.parse(answer.body ?? "{}") as { queueOffset: number; msgIds: string[] };
      return { offset: sent.queueOffset };
    },
  };
}

/** The topic of `queues` queues on broker-a, with the brokers registered (what the Send function looks up). */
async function createTopic(storage: Storage, topic: string, queues: number): Promise<void> {
  const broker = createBroker(storage, parseNimbusConfig({}), { apiUrl: "https://api.test", newMessageId });
  try {
    await broker.registerBrokers();
    await broker.topics.upsert(topic, { readQueueNums: queues, writeQueueNums: queues, brokerNames: ["broker-a"] });
  } finally {
    await storage.close();
  }
}

/** Every acked message once at its offset, and every offset of every queue accounted for: "ok", or what is wrong. */
async function checkReadBack(
  storage: Storage,
  queues: QueueRef[],
  acked: { q: number; offset: number; id: string }[],
  k: number,
): Promise<string> {
  const reader = new QueueLog(storage, { reservationLeaseMs: 500 * k });
  try {
    for (const [n, queue] of queues.entries()) {
      const want = new Map(acked.filter((a) => a.q === n).map((a) => [a.offset, a.id]));
      const seen = new Map<number, string>();
      // A hole (a dead writer's range, a tail its owner did not seal) is waited for until the hole lease seals it.
      const giveUp = performance.now() + 5000 * k;
      for (let at = 0; ; ) {
        const got = await reader.read(queue, at, { maxMessages: 1024 });
        for (const m of got.messages) {
          if (seen.has(m.queueOffset)) return `offset ${m.queueOffset} of queue ${n} read twice`;
          seen.set(m.queueOffset, m.properties.UNIQ_KEY ?? "");
        }
        if (got.nextBeginOffset === at) {
          if (at >= got.maxOffset || performance.now() > giveUp) break;
          await new Promise((resolve) => setTimeout(resolve, 50 * k));
        }
        at = got.nextBeginOffset;
      }
      for (const [offset, id] of want)
        if (seen.get(offset) !== id) return `acked ${id} at ${offset} of queue ${n} not read back`;
      const ids = [...seen.values()];
      if (new Set(ids).size !== ids.length) return `queue ${n}: a message stored twice`;
      if (seen.size !== want.size)
        return `queue ${n}: ${seen.size - want.size} messages never acked (given up after landing)`;
    }
    return "ok";
  } finally {
    await storage.close();
  }
}

export async function runLambdaConcurrency(options: ConcurrencyOptions, runId: string): Promise<ConcurrencyRow[]> {
  const rows: ConcurrencyRow[] = [];
  for (const backend of options.backends) {
    const emulators = await startEmulators(backend, { keyLimits: false });
    // In stretched time DynamoDB's per-key rates are 1/stretch of theirs (rates are multiplied back by stretch).
    const limited = options.keyLimits
      ? await startKeyLimitedDynamo(emulators.dynamoEndpoint, {
          writeUnitsPerSecond: DYNAMODB_KEY_LIMITS.writeUnitsPerSecond / options.stretch,
          readUnitsPerSecond: DYNAMODB_KEY_LIMITS.readUnitsPerSecond / options.stretch,
        })
      : undefined;
    try {
      const names = { bucket: `nimbus-lc-${runId}`, tablePrefix: `lc-${runId}-` };
      const aws = {
        ...emulatorStorageOptions(
          { ...emulators, dynamoEndpoint: limited?.endpoint ?? emulators.dynamoEndpoint },
          names,
        ),
        // The SDK's timeouts and back-off in stretched time too: a throttle costs in the figure what it costs on DynamoDB.
        timeouts: {
          connectMs: DEFAULT_AWS_TIMEOUTS.connectMs * options.stretch,
          dynamoRequestMs: DEFAULT_AWS_TIMEOUTS.dynamoRequestMs * options.stretch,
          s3RequestMs: DEFAULT_AWS_TIMEOUTS.s3RequestMs * options.stretch,
        },
        maxAttempts: options.maxAttempts,
        retryBackoff: {
          throttlingBaseMs: options.throttleBaseMs * options.stretch,
          baseMs: DEFAULT_RETRY_BACKOFF.baseMs * options.stretch,
        },
      };
      await ensureTables(aws, BROKER_TABLES);
      await ensureBucket(aws);
      for (const shape of options.shapes) {
        for (const writers of options.writers) {
          const throttledBefore = limited?.throttled() ?? 0;
          const readsBefore = limited?.throttledReads() ?? 0;
          const measured = await runCase(
            options,
            backend,
            shape,
            writers,
            () => createAwsStorage(aws),
            `${runId}_${backend.replace("-", "")}_${shape}_${writers}`,
          );
          const throttled = (limited?.throttled() ?? 0) - throttledBefore;
          const reads = (limited?.throttledReads() ?? 0) - readsBefore;
          const row = {
            ...measured,
            throttledPerAppend: throttled / Math.max(1, measured.appends),
            throttledReadsPerAppend: reads / Math.max(1, measured.appends),
          };
          console.error(formatRow(row));
          rows.push(row);
        }
      }
    } finally {
      await limited?.stop();
      await emulators.stop();
    }
  }
  return rows;
}

export function formatRow(r: ConcurrencyRow): string {
  const f = (x: number, d = 0) => x.toFixed(d);
  const shape = r.shape === "topic" ? "16 queues" : r.shape === "dead" ? "1 queue, dead writer" : "1 queue";
  const c = r.consumer;
  const g = r.groups;
  const consumer =
    c !== undefined
      ? ` ${f(c.p50Ms)} / ${f(c.p99Ms)} / max ${f(c.maxMs)} (${c.messages})`
      : g !== undefined
        ? ` ${g.count} groups: ${f(g.p50Ms)} / ${f(g.p99Ms)} / max ${f(g.maxMs)} (${g.messages}, ${f(g.pollsPerSecond)} polls/s, ${g.failedPolls} failed)`
        : "";
  return `| ${r.via} | ${r.backend} | ${shape} | ${r.indexKeys} | ${r.writers} | ${r.batch} | ${f(r.appendsPerSecond)} | ${f(r.appendsPerSecond * r.batch)} | ${f(r.p50Ms)} / ${f(r.p99Ms)} | ${f(r.conflictsPerAppend, 2)} | ${f(r.throttledPerAppend, 2)} (${f(r.throttledReadsPerAppend, 2)} reads) | ${f(r.writeUnitsPerAppend, 2)} | ${f(r.reservationsPerAppend, 2)} | ${r.failures} | ${f(r.cpu * 100)} % (loop p99 ${f(r.loopDelayP99Ms)} ms) |${consumer} | ${r.readBack} (${r.appends}) |`;
}

export const TABLE_HEADER =
  "| via | DynamoDB | queues | index keys | writers | batch | appends/s | msgs/s | p50 / p99 ms | failed conditional writes per append | throttled requests per append | write units per append | reservations per append | failures | CPU | consumer delay p50 / p99 / max ms | read-back (appends) |\n| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |";
