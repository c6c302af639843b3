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
 * their delivery delay and the read requests the per-key limits throttled. The DynamoDB client's retry back-off
 * (lib/storage/aws/retry.ts: 50 ms bases, 6 attempts, at most 2 s waited) is stretched with the rest, so a throttle
 * costs in the figure what it costs on DynamoDB; `--throttle-base-ms` sets the throttling base (unstretched ms),
 * `--max-attempts` the attempts per request (defaults: the adapter's).
 *
 * Flags: `--key-limits on|off`, `--index-keys K`, `--backends dynamodb-local,dynalite`, `--writers 1,2,4,8,16,32,64`, `--seconds <per case, stretched
 * time>`, `--stretch <k>`, `--dynamo p50/p99`, `--shapes hot,topic`, `--via queue-log|send-handler`, `--warm-appends N` (each
 * container's unmeasured appends before the window), `--hedge-budget b` (the share of S3 PUTs that may be hedged; 0: none).
 */
import { BROKER_TABLES } from "../../lib/broker/store/tables.js";
import {
  createAwsStorage,
  DEFAULT_AWS_TIMEOUTS,
  DEFAULT_RETRY_BACKOFF,
  ensureBucket,
  ensureTables,
} from "../../lib/storage/aws/index.js";
import { DYNAMODB_KEY_LIMITS, startKeyLimitedDynamo } from "../support/dynamo-key-limits.js";
import { emulatorStorageOptions, startEmulators } from "../support/emulators.js";
import { runCase } from "./lambda-case.js";
import type { ConcurrencyOptions, ConcurrencyRow } from "./lambda-types.js";

export type { ConcurrencyOptions, ConcurrencyRow, Shape } from "./lambda-types.js";

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
          maxWaitMs: DEFAULT_RETRY_BACKOFF.maxWaitMs * options.stretch,
          maxElapsedMs: DEFAULT_RETRY_BACKOFF.maxElapsedMs * options.stretch,
        },
      };
      await ensureTables(aws, BROKER_TABLES);
      await ensureBucket(aws);
      for (const shape of options.shapes) {
        for (const writers of options.writers) {
          let throttledBefore = limited?.throttled() ?? 0;
          let readsBefore = limited?.throttledReads() ?? 0;
          const measured = await runCase(
            options,
            backend,
            shape,
            writers,
            // S3's hedged PUTs, as on AWS. s3rver rewrites an object in place, so a reader must not meet a late
            // twin: only in cases nobody reads during the window (the read-back waits for every PUT, releaseRanges).
            () => createAwsStorage({ ...aws, hedgeObjectPuts: shape !== "dead" && options.groups === 0 }),
            `${runId}_${backend.replace("-", "")}_${shape}_${writers}`,
            () => {
              throttledBefore = limited?.throttled() ?? 0;
              readsBefore = limited?.throttledReads() ?? 0;
            },
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
        ? ` ${g.count} groups: ${f(g.p50Ms)} / ${f(g.p99Ms)} / max ${f(g.maxMs)} (${g.messages}, ${f(g.pollsPerSecond)} polls/s, ${f(g.readsPerPoll, 1)} reads/poll, ${f(g.readsPerMessage, 2)} reads/message, read p50 / p99 ${f(g.readP50Ms)} / ${f(g.readP99Ms)} ms, before the poll p50 / p99 ${f(g.waitP50Ms)} / ${f(g.waitP99Ms)} ms, idle: ${f(g.readsPerIdlePoll, 1)} reads/poll, ${g.failedPolls} failed)`
        : "";
  return `| ${r.via} | ${r.backend} | ${shape} | ${r.indexKeys} | ${r.writers} | ${r.batch} | ${f(r.appendsPerSecond)} | ${f(r.appendsPerSecond * r.batch)} | ${f(r.p50Ms)} / ${f(r.p99Ms)} | ${f(r.conflictsPerAppend, 2)} | ${f(r.throttledPerAppend, 2)} (${f(r.throttledReadsPerAppend, 2)} reads) | ${f(r.writeUnitsPerAppend, 2)} | ${f(r.objectPutsPerAppend, 2)} | ${f(r.reservationsPerAppend, 2)} | ${r.failures} | ${f(r.cpu * 100)} % (loop p99 ${f(r.loopDelayP99Ms)} ms) |${consumer} | ${r.readBack} (${r.appends}) |`;
}

export const TABLE_HEADER =
  "| via | DynamoDB | queues | index keys | writers | batch | appends/s | msgs/s | p50 / p99 ms | failed conditional writes per append | throttled requests per append | write units per append | S3 PUTs per append | reservations per append | failures | CPU | consumer delay p50 / p99 / max ms | read-back (appends) |\n| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |";
