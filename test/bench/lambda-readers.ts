/**
 * @module The lambda-concurrency bench's readers: consumer groups tailing the hot queue during the window, and the
 * read-back after it (every acknowledged message once, at its offset, and no gap).
 */
import { QueueLog } from "../../lib/broker/queue-log/index.js";
import type { QueueRef } from "../../lib/broker/queue-log/queue-index.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { ConcurrencyRow } from "./lambda-types.js";
import { percentile } from "./stats.js";

/**
 * A consumer tailing `queue` every 20 ms (stretched) until `stop`: its delivery delays, read time - store time, and
 * how long its reads took. Its `idle` then catches up with the queue (once the writers stopped) and polls it at
 * its end `polls` times: the table reads per idle poll of a caught-up reader.
 */
export async function tailQueue(
  storage: Storage,
  queue: QueueRef,
  k: number,
  stop: () => boolean,
  from = 0,
): Promise<Tailed> {
  const reader = new QueueLog(storage, { reservationLeaseMs: 500 * k });
  const delays: number[] = [];
  // Of each delivery's delay, the part before the poll that delivered it started (the rest is that poll's read).
  const waits: number[] = [];
  let at = from;
  let seals = 0;
  let polls = 0;
  let errors = 0;
  const readMs: number[] = [];
  while (!stop()) {
    polls++;
    let got: Awaited<ReturnType<QueueLog["read"]>>;
    const started = performance.now();
    const startedWall = Date.now();
    try {
      got = await reader.read(queue, at, { maxMessages: 256 });
      readMs.push((performance.now() - started) / k);
    } catch {
      // A read the SDK gave up on (throttled past its attempts, or timed out): the consumer polls again later.
      errors++;
      await new Promise((resolve) => setTimeout(resolve, 20 * k));
      continue;
    }
    const now = Date.now();
    for (const m of got.messages) {
      delays.push((now - m.storeTimestamp) / k);
      waits.push(Math.max(0, startedWall - m.storeTimestamp) / k);
    }
    if (got.status === "NO_MATCHED_MSG") seals++;
    at = got.nextBeginOffset;
    if (got.messages.length === 0) await new Promise((resolve) => setTimeout(resolve, 20 * k));
  }
  const tableReads = storage.counter.snapshot().tableReads;
  const idle = async (idlePolls: number): Promise<number> => {
    try {
      if (idlePolls === 0) return 0;
      // Caught up first (bounded: a hole left by a writer waits for the hole lease), then `idlePolls` at the end.
      const giveUp = performance.now() + 5000 * k;
      for (;;) {
        const got = await reader.read(queue, at, { maxMessages: 256 });
        if (got.nextBeginOffset === at && (at >= got.maxOffset || performance.now() > giveUp)) break;
        if (got.nextBeginOffset === at) await new Promise((resolve) => setTimeout(resolve, 20 * k));
        at = got.nextBeginOffset;
      }
      const before = storage.counter.snapshot().tableReads;
      // A writer's tail seal still landing (its range's timer fired before the writers stopped) moves `at` on.
      for (let n = 0; n < idlePolls; n++) at = (await reader.read(queue, at, { maxMessages: 256 })).nextBeginOffset;
      return (storage.counter.snapshot().tableReads - before) / Math.max(1, idlePolls);
    } finally {
      await storage.close();
    }
  };
  const sorted = delays.sort((a, b) => a - b);
  const reads = readMs.sort((a, b) => a - b);
  return {
    idle,
    readP50Ms: percentile(reads, 50),
    readP99Ms: percentile(reads, 99),
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted[sorted.length - 1] ?? 0,
    messages: sorted.length,
    seals,
    polls,
    errors,
    tableReads,
    delays: sorted,
    waits: waits.sort((a, b) => a - b),
  };
}

export interface Tailed {
  /** Catches up once the writers stopped, polls the end `polls` times (0: none), closes its storage: reads per idle poll. */
  idle: (polls: number) => Promise<number>;
  /** How long one poll's read took, p50 / p99 (ms, stretched time). */
  readP50Ms: number;
  readP99Ms: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  messages: number;
  seals: number;
  polls: number;
  errors: number;
  /** DynamoDB GetItem + Query calls its reads made. */
  tableReads: number;
  delays: number[];
  /** Of each delay, the part before the delivering poll started (sorted, ms). */
  waits: number[];
}

/** The groups' figures together: every delivery's delay, and the polls per second (stretched time). */
export function groupFigures(
  tailed: Tailed[],
  seconds: number,
  readsPerIdlePoll: number,
): NonNullable<ConcurrencyRow["groups"]> {
  const all = tailed.flatMap((t) => t.delays).sort((a, b) => a - b);
  const waits = tailed.flatMap((t) => t.waits).sort((a, b) => a - b);
  const mean = (f: (t: Tailed) => number) => tailed.reduce((s, t) => s + f(t), 0) / Math.max(1, tailed.length);
  return {
    readsPerIdlePoll,
    readsPerMessage: tailed.reduce((s, t) => s + t.tableReads, 0) / Math.max(1, all.length),
    waitP50Ms: percentile(waits, 50),
    waitP99Ms: percentile(waits, 99),
    readP50Ms: mean((t) => t.readP50Ms),
    readP99Ms: mean((t) => t.readP99Ms),
    count: tailed.length,
    p50Ms: percentile(all, 50),
    p99Ms: percentile(all, 99),
    maxMs: all[all.length - 1] ?? 0,
    messages: all.length,
    pollsPerSecond: tailed.reduce((s, t) => s + t.polls, 0) / seconds,
    failedPolls: tailed.reduce((s, t) => s + t.errors, 0),
    readsPerPoll:
      tailed.reduce((s, t) => s + t.tableReads, 0) /
      Math.max(
        1,
        tailed.reduce((s, t) => s + t.polls, 0),
      ),
  };
}

/** Every acked message once at its offset, and every offset of every queue accounted for: "ok", or what is wrong. */
export async function checkReadBack(
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
