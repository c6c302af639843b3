/**
 * @module The chaos runner: a Jepsen-style workload on one storage mode, then the checker.
 *
 * - `local`: half the messages from producer processes appending straight to one embedded store (faults
 *   at the port: throttling, lost replies, late-applied timeouts, latency spikes; self-SIGKILL between an
 *   object PUT and its index put), half over HTTP to the local server, which is SIGKILLed and restarted
 *   while the producers retry. Afterwards the store collects its garbage: no orphan may be left.
 * - `aws`: producer processes on DynamoDB/S3 (dynalite, s3rver) through fault proxies below the SDK
 *   (dropped replies after the write applied, late-applied timeouts, throttling answers, latency spikes)
 *   and the same self-SIGKILL.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { QUEUE_INDEX_TABLE } from "../../lib/broker/queue-log/queue-index.js";
import { createAwsStorage, ensureBucket, ensureTables } from "../../lib/storage/aws/index.js";
import { createLocalStorage, type LocalStorageOptions } from "../../lib/storage/local/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import { emulatorStorageOptions, startEmulators } from "../support/emulators.js";
import { type FaultProxy, type ProxyFault, startFaultProxy } from "../support/fault-proxy.js";
import { type FaultPlan, NO_FAULTS, noFaultCounts } from "../support/fault-storage.js";
import { type CheckResult, checkQueues, unownedObjects } from "./check.js";
import { type ProducerTotals, runProducer, ServerProcess } from "./processes.js";
import type { ProducerJob, ProducerTransport } from "./workload.js";

export interface ChaosOptions {
  messages: number;
  producers: number;
  queues: number;
  /** Fault probability per call (each kind). */
  faultRate: number;
  /** Probability that a producer kills itself between an object PUT and its index put. */
  killRate: number;
  /** Local mode: how many times the local server is SIGKILLed and restarted. */
  serverKills: number;
}

export interface ChaosReport extends CheckResult {
  mode: "local" | "aws";
  messages: number;
  producers: number;
  faults: Record<string, number>;
  clientRetries: number;
  /** Local: what killed writers left after the run, before the store collected its garbage. */
  orphanObjectsFound: number;
  tempFilesFound: number;
  /** Batch objects no index item names after the run (local: after the store's garbage collection). */
  orphanObjectsLeft: number;
  tempFilesLeft: number;
}

function jobsFor(
  options: ChaosOptions,
  topic: string,
  messages: number,
  transport: ProducerTransport,
  plan: FaultPlan,
): ProducerJob[] {
  const each = Math.ceil(messages / options.producers);
  return Array.from({ length: options.producers }, (_, producer) => ({
    producer,
    transport,
    topic,
    queues: options.queues,
    from: 0,
    to: Math.min(each, messages - producer * each),
    plan,
    killBeforeIndexPut: transport.kind === "http" ? 0 : options.killRate,
    killAtFirstObject: transport.kind !== "http" && options.killRate > 0 && producer === 0,
  }));
}

const newTotals = (): ProducerTotals => ({ acks: [], faults: noFaultCounts(), clientRetries: 0, kills: 0 });

export async function runLocalChaos(options: ChaosOptions): Promise<ChaosReport> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-chaos-"));
  const r = options.faultRate;
  const plan: FaultPlan = { throttle: r, dropReply: r, lateApply: r, latency: r, latencyMs: 20, lateApplyMs: 15 };
  const direct = newTotals();
  const viaServer = newTotals();
  const server = new ServerProcess(dataDir);
  try {
    await server.start();
    const half = Math.floor(options.messages / 2);
    const directJobs = jobsFor(options, "ChaosDirect", half, { kind: "local", dataDir }, plan);
    const serverJobs = jobsFor(
      options,
      "ChaosServer",
      options.messages - half,
      { kind: "http", url: server.url },
      NO_FAULTS,
    );
    let producing = true;
    let serverKills = 0;
    const killer = (async () => {
      while (producing && serverKills < options.serverKills) {
        await sleep(300 + Math.random() * 700);
        if (!producing) break;
        await server.kill();
        serverKills++;
        await server.start();
      }
    })();
    await Promise.all([
      ...directJobs.map((job) => runProducer(job, direct)),
      ...serverJobs.map((job) => runProducer(job, viaServer)),
    ]);
    producing = false;
    await killer;
    await server.kill();

    const topics = ["ChaosDirect", "ChaosServer"];
    const objectsDir = path.join(dataDir, "objects");
    const tempFilesFound = countTempFiles(objectsDir);
    const orphanObjectsFound = await withLocalStorage(dataDir, {}, (s) => unownedObjects(s, topics, options.queues));
    // Opening the store and its queue index collects garbage; grace 0, as every producer is gone now.
    await withLocalStorage(dataDir, { orphanGraceMs: 0 }, async (s) => s.table(QUEUE_INDEX_TABLE));
    return await withLocalStorage(dataDir, {}, async (storage) => {
      const checks = [
        await checkQueues(storage, "ChaosDirect", options.queues, direct.acks),
        await checkQueues(storage, "ChaosServer", options.queues, viaServer.acks),
      ];
      return {
        mode: "local" as const,
        messages: options.messages,
        producers: options.producers * 2,
        ...sumChecks(checks),
        faults: {
          ...direct.faults,
          producerKillsBetweenObjectAndIndex: direct.kills,
          serverKills,
        },
        clientRetries: direct.clientRetries + viaServer.clientRetries,
        orphanObjectsFound,
        tempFilesFound,
        orphanObjectsLeft: await unownedObjects(storage, topics, options.queues),
        tempFilesLeft: countTempFiles(objectsDir),
      };
    });
  } finally {
    await server.kill();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function runAwsChaos(options: ChaosOptions): Promise<ChaosReport> {
  const emulators = await startEmulators();
  const r = options.faultRate;
  const decide = (): ProxyFault | undefined => {
    const x = Math.random();
    if (x < r) return "drop-reply";
    if (x < 2 * r) return "late-apply";
    if (x < 3 * r) return "throttle";
    if (x < 4 * r) return { delayMs: 20 + Math.random() * 80 };
    return undefined;
  };
  const proxies: FaultProxy[] = [];
  try {
    proxies.push(await startFaultProxy({ target: emulators.dynamoEndpoint, service: "dynamodb", decide }));
    proxies.push(await startFaultProxy({ target: emulators.s3Endpoint, service: "s3", decide }));
    const direct = emulatorStorageOptions(emulators, { bucket: "nimbus-chaos", tablePrefix: "chaos-" });
    await ensureTables(direct, [QUEUE_INDEX_TABLE]);
    await ensureBucket(direct);
    const [dynamoProxy, s3Proxy] = proxies as [FaultProxy, FaultProxy];
    const transport: ProducerTransport = {
      kind: "aws",
      options: { ...direct, dynamoEndpoint: dynamoProxy.url, s3Endpoint: s3Proxy.url },
    };
    const totals = newTotals();
    await Promise.all(
      jobsFor(options, "ChaosAws", options.messages, transport, NO_FAULTS).map((job) => runProducer(job, totals)),
    );
    const storage = createAwsStorage(direct);
    try {
      const check = await checkQueues(storage, "ChaosAws", options.queues, totals.acks);
      const sum = (key: keyof FaultProxy["counts"]) => dynamoProxy.counts[key] + s3Proxy.counts[key];
      return {
        mode: "aws",
        messages: options.messages,
        producers: options.producers,
        ...check,
        faults: {
          droppedReplies: sum("droppedReplies"),
          lateApplied: sum("lateApplied"),
          throttled: sum("throttled"),
          latencySpikes: sum("delayed"),
          producerKillsBetweenObjectAndIndex: totals.kills,
        },
        clientRetries: totals.clientRetries,
        orphanObjectsFound: 0,
        tempFilesFound: 0,
        // Left for the bucket's lifecycle rule, as on AWS: reported, not collected.
        orphanObjectsLeft: await unownedObjects(storage, ["ChaosAws"], options.queues),
        tempFilesLeft: 0,
      };
    } finally {
      await storage.close();
    }
  } finally {
    for (const proxy of proxies) await proxy.stop();
    await emulators.stop();
  }
}

/** Runs `use` on the embedded store in `dataDir`, then closes it (which waits for its garbage collections). */
async function withLocalStorage<T>(
  dataDir: string,
  options: Omit<LocalStorageOptions, "dataDir">,
  use: (storage: Storage) => Promise<T>,
): Promise<T> {
  const storage = createLocalStorage({ dataDir, ...options });
  try {
    return await use(storage);
  } finally {
    await storage.close();
  }
}

function sumChecks(checks: CheckResult[]): CheckResult {
  const total: CheckResult = { acked: 0, stored: 0, lost: 0, doubleAssigned: 0, gaps: 0, sealed: 0, duplicates: 0 };
  for (const c of checks) for (const k of Object.keys(total) as (keyof CheckResult)[]) total[k] += c[k];
  return total;
}

function countTempFiles(root: string): number {
  try {
    return readdirSync(root, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".tmp")).length;
  } catch {
    return 0;
  }
}
