/**
 * @module A benchmark's load as its own OS process (overload.ts and json-rate.ts start it, one process per
 * role): `node --import tsx test/bench/load-process.ts '<LoadSpec as JSON>'`. It prints `READY`, starts
 * when a line arrives on stdin (so every process of a phase starts together), writes its result as JSON to
 * `spec.out` and exits.
 *
 * - `closed`: `senders` JSON single sends in a loop, each waiting for its answer, one connection each.
 * - `open`: JSON single sends on a fixed schedule (`rate` per second) from a pool of `connections`, never
 *   waiting for earlier answers; each answer is timed from its scheduled start (a late generator counts
 *   against the broker's figure, never hides it).
 * - `health`: `GET /health` every `intervalMs` on the same kind of schedule.
 * - `e2e`: peer-phases.ts's end-to-end phase through the SDK (`via: "sdk"`: binary batches, shed retries) or
 *   its JSON transport with no retries (`via: "json"`); the consumer is a second client with its own connections.
 * Sends and probes are plain HTTP (undici), never the SDK: every raw answer counts, SYSTEM_BUSY included.
 */
import { writeFileSync } from "node:fs";
import { Pool } from "undici";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { type SendAnswer, sendBody } from "./http.js";
import { type EndToEndResult, endToEndPhase } from "./peer-phases.js";
import { type LatencySummary, summarize } from "./stats.js";

interface Target {
  url: string;
  seconds: number;
  out: string;
}
export type LoadSpec = Target &
  (
    | { kind: "closed"; topic: string; senders: number; warmupSeconds: number; bodyBytes: number }
    | { kind: "open"; topic: string; rate: number; connections: number; bodyBytes: number }
    | { kind: "health"; intervalMs: number }
    | { kind: "e2e"; topic: string; rate: number; bodyBytes: number; via: "json" | "sdk" }
  );

/** An acknowledged send: where the broker says it put the message. */
export type Ack = [queueId: number, queueOffset: number, msgId: string];

export interface AnswerTally {
  /** Requests started in the measured window. */
  offered: number;
  ok: number;
  busy: number;
  /** Other answers (first few kept in `samples`) and requests that got no answer (timeout, reset). */
  otherAnswers: number;
  noAnswer: number;
  seconds: number;
  /** Every answer, OK or not, from its scheduled start (closed loop: from its start). */
  all: LatencySummary;
  /** Every answer from when its request went out on a free connection (what the broker and the wire took). */
  onWire: LatencySummary;
  okLatency: LatencySummary;
  busyLatency: LatencySummary;
  /** How long requests waited for a free connection (or the generator's tick) past their schedule (open loop). */
  startLag: LatencySummary;
  cpuSeconds: number;
  samples: string[];
}

export interface LoadResult {
  tally?: AnswerTally;
  /** Every acked send of the run, warm-up included: what the read-back must find. */
  acks?: Ack[];
  e2e?: EndToEndResult;
}

const ANSWER_TIMEOUT_MS = 30_000;
const MAX_OUTSTANDING = 8192;
const HEALTH_CONNECTIONS = 8;
/** The end-to-end consumer keeps one pull in flight: a connection or two is all it uses. */
const CONSUMER_CONNECTIONS = 2;

type Outcome = "ok" | "busy" | "other" | "none";

class Recorder {
  readonly acks: Ack[] = [];
  readonly #all: number[] = [];
  readonly #wire: number[] = [];
  readonly #ok: number[] = [];
  readonly #busy: number[] = [];
  readonly #lag: number[] = [];
  readonly samples: string[] = [];
  readonly counts = { offered: 0, ok: 0, busy: 0, other: 0, none: 0 };
  measuring = false;

  record(outcome: Outcome, ms: number, lagMs: number): void {
    if (!this.measuring) return;
    this.counts.offered++;
    this.#lag.push(lagMs);
    if (outcome === "none") {
      this.counts.none++;
      return;
    }
    this.#all.push(ms);
    this.#wire.push(ms - lagMs);
    if (outcome === "ok") this.#ok.push(ms);
    if (outcome === "busy") this.#busy.push(ms);
    this.counts[outcome]++;
  }

  note(text: string): void {
    if (this.samples.length < 5) this.samples.push(text.slice(0, 300));
  }

  tally(seconds: number, cpu: NodeJS.CpuUsage): AnswerTally {
    const c = this.counts;
    return {
      offered: c.offered,
      ok: c.ok,
      busy: c.busy,
      otherAnswers: c.other,
      noAnswer: c.none,
      seconds,
      all: summarize(this.#all),
      onWire: summarize(this.#wire),
      okLatency: summarize(this.#ok),
      busyLatency: summarize(this.#busy),
      startLag: summarize(this.#lag),
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      samples: this.samples,
    };
  }
}

/** One request; its outcome from the raw answer (no retry), its time from `scheduledAt`. */
async function exchange(
  pool: Pool,
  rec: Recorder,
  scheduledAt: number,
  path: string,
  body: string | undefined,
): Promise<void> {
  const lag = performance.now() - scheduledAt;
  let outcome: Outcome = "none";
  try {
    const res = await pool.request({
      path,
      method: body === undefined ? "GET" : "POST",
      ...(body === undefined ? {} : { body, headers: { "content-type": "application/json" } }),
      headersTimeout: ANSWER_TIMEOUT_MS,
      bodyTimeout: ANSWER_TIMEOUT_MS,
    });
    const text = await res.body.text();
    outcome = classify(rec, res.statusCode, text, body !== undefined);
  } catch (err) {
    rec.note(`no answer: ${String(err)}`);
  }
  rec.record(outcome, performance.now() - scheduledAt, lag);
}

function classify(rec: Recorder, status: number, text: string, isSend: boolean): Outcome {
  if (status === 200 && !isSend) return "ok";
  const parsed = JSON.parse(text) as Partial<SendAnswer> & { code?: string };
  if (status === 200 && parsed.sendStatus === "SEND_OK" && parsed.messageQueue && parsed.msgIds?.[0]) {
    rec.acks.push([parsed.messageQueue.queueId, parsed.queueOffset ?? -1, parsed.msgIds[0]]);
    return "ok";
  }
  if (status === 503 && parsed.code === "SYSTEM_BUSY") return "busy";
  rec.note(`${status} ${text}`);
  return "other";
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function closedLoop(spec: Extract<LoadSpec, { kind: "closed" }>, rec: Recorder): Promise<AnswerTally> {
  const pool = new Pool(spec.url, { connections: spec.senders, pipelining: 1 });
  const body = sendBody(spec.topic, 1, Buffer.alloc(spec.bodyBytes, 7));
  const warmupEnd = performance.now() + spec.warmupSeconds * 1000;
  const end = warmupEnd + spec.seconds * 1000;
  let cpu = process.cpuUsage();
  setTimeout(
    () => {
      rec.measuring = true;
      cpu = process.cpuUsage();
    },
    Math.max(0, warmupEnd - performance.now()),
  );
  const sender = async () => {
    while (performance.now() < end) await exchange(pool, rec, performance.now(), "/send", body);
  };
  await Promise.all(Array.from({ length: spec.senders }, sender));
  const tally = rec.tally(spec.seconds, process.cpuUsage(cpu));
  await pool.close();
  return tally;
}

/**
 * Starts `issue(scheduledAt)` `rate` times a second for `seconds`, without waiting for what it started, at
 * most `connections` at once (one request per connection, as HTTP/1.1 without pipelining): the others wait
 * here in order, their wait counted in their answer time. Past `MAX_OUTSTANDING` waiting, sends are skipped.
 */
async function onSchedule(
  rate: number,
  seconds: number,
  connections: number,
  issue: (scheduledAt: number) => Promise<void>,
): Promise<{ skipped: number }> {
  const started = performance.now();
  const total = Math.round(rate * seconds);
  const line: number[] = [];
  const running = new Set<Promise<void>>();
  let issued = 0;
  let skipped = 0;
  const pump = () => {
    while (running.size < connections && line.length > 0) {
      const p: Promise<void> = issue(line.shift() ?? 0).finally(() => {
        running.delete(p);
        pump();
      });
      running.add(p);
    }
  };
  while (issued < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    for (; issued < due; issued++) {
      if (line.length >= MAX_OUTSTANDING) skipped++;
      else line.push(started + (issued * 1000) / rate);
    }
    pump();
    await sleep(1);
  }
  while (running.size > 0) await Promise.race(running);
  return { skipped };
}

async function openLoop(spec: Extract<LoadSpec, { kind: "open" }>, rec: Recorder): Promise<AnswerTally> {
  const pool = new Pool(spec.url, { connections: spec.connections, pipelining: 1 });
  const body = sendBody(spec.topic, 1, Buffer.alloc(spec.bodyBytes, 7));
  // Every connection opened first, as a running producer has them: one health read on each at once (a cold
  // pool would connect 256 sockets while the schedule runs, and that start would be timed as overload).
  await Promise.all(
    Array.from({ length: spec.connections }, async () => {
      const res = await pool.request({ path: "/health", method: "GET", headersTimeout: ANSWER_TIMEOUT_MS });
      await res.body.dump();
    }),
  );
  rec.measuring = true;
  const cpu = process.cpuUsage();
  const { skipped } = await onSchedule(spec.rate, spec.seconds, spec.connections, (at) =>
    exchange(pool, rec, at, "/send", body),
  );
  if (skipped > 0) rec.note(`the generator skipped ${skipped} sends (${MAX_OUTSTANDING} waiting for a connection)`);
  const tally = rec.tally(spec.seconds, process.cpuUsage(cpu));
  await pool.close();
  return tally;
}

async function probeHealth(spec: Extract<LoadSpec, { kind: "health" }>, rec: Recorder): Promise<AnswerTally> {
  const pool = new Pool(spec.url, { connections: HEALTH_CONNECTIONS, pipelining: 1 });
  rec.measuring = true;
  const cpu = process.cpuUsage();
  await onSchedule(1000 / spec.intervalMs, spec.seconds, HEALTH_CONNECTIONS, (at) =>
    exchange(pool, rec, at, "/health", undefined),
  );
  const tally = rec.tally(spec.seconds, process.cpuUsage(cpu));
  await pool.close();
  return tally;
}

async function endToEnd(spec: Extract<LoadSpec, { kind: "e2e" }>): Promise<EndToEndResult> {
  const options = {
    endpoints: spec.url,
    timeoutMs: ANSWER_TIMEOUT_MS,
    ...(spec.via === "json" ? { binaryBatches: false, shedRetries: 0 } : {}),
  };
  const api = new NimbusApi(options);
  // The consumer is another client with its own connections, as a consumer application is (RocketMQ's
  // clients multiplex one connection, so a pull never waits behind queued sends there either).
  const consumer = new NimbusApi({ ...options, connections: { connections: CONSUMER_CONNECTIONS } });
  // Warm-up on another topic: routes learned, connections open (as a running producer has).
  const warm = new Uint8Array(spec.bodyBytes);
  for (let i = 0; i < 200; i++) await api.send({ topic: `${spec.topic}Warm`, messages: [{ body: warm }] });
  try {
    return await endToEndPhase(api, spec.topic, "broker-a", spec.rate, spec.seconds, spec.bodyBytes, consumer);
  } finally {
    await consumer.close();
  }
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? "") as LoadSpec;
  process.stdout.write("READY\n");
  await new Promise((resolve) => process.stdin.once("data", resolve));
  process.stdin.pause();
  const rec = new Recorder();
  let result: LoadResult;
  if (spec.kind === "closed") result = { tally: await closedLoop(spec, rec), acks: rec.acks };
  else if (spec.kind === "open") result = { tally: await openLoop(spec, rec), acks: rec.acks };
  else if (spec.kind === "health") result = { tally: await probeHealth(spec, rec) };
  else result = { e2e: await endToEnd(spec) };
  writeFileSync(spec.out, JSON.stringify(result));
}

main().catch((err: unknown) => {
  console.error("load process failed:", err);
  process.exitCode = 1;
});
