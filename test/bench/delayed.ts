/**
 * @module The delayed-delivery benchmark (part of `npm run bench`): how late a delayed message is appended
 * to its queue after its due time (its store time minus its TIMER_DELIVER_MS, both the server's clock), and
 * what a delayed message costs in AWS requests.
 *
 * - "with traffic": the local timer job is off, so only the requests that already run move due messages,
 *   as on AWS: one consumer pulls the topic's queues every `pullEveryMs` (each pull may sweep, at most once
 *   per timerSweepIntervalMs per process).
 * - "no traffic": no request at all; one run of the scheduled job (functions/delayed-delivery.ts), started
 *   before the messages fall due, staying up through its window as on AWS.
 * - cost: delayed sends with no sweep running (the send's requests), then sweeps until every message moved
 *   (the move's requests, bucket reads and leases included), per message.
 */
import type { Broker } from "../../lib/broker/broker.js";
import { TIMERS_TABLE } from "../../lib/broker/store/tables.js";
import { TimerStore } from "../../lib/broker/timers/timer-store.js";
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { type LocalServer, type StorageChoice, startLocalServer } from "../../lib/dev/local-server.js";
import type { RequestCounts } from "../../lib/storage/request-counter.js";
import { diffCounts } from "../../lib/storage/request-counter.js";
import { type LatencySummary, type PerUnit, perUnit, roundPerUnit, summarize } from "./stats.js";

export interface DelayedResult {
  withTraffic: LatencySummary & { pullEveryMs: number; sweepIntervalMs: number };
  noTraffic: LatencySummary;
  /** Per delayed message: the send (API call, item + bucket entry), the move, and both. */
  perMessage: { send: PerUnit; move: PerUnit; total: PerUnit };
  messages: number;
}

export interface DelayedOptions {
  /** Delayed messages per scenario. */
  messages: number;
  /** Their due times spread over this window, starting `leadMs` after the sends. */
  spreadMs: number;
  leadMs: number;
  pullEveryMs: number;
  sweepIntervalMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const QUEUES = 4;

async function post<T>(server: LocalServer, path: string, body: unknown): Promise<T> {
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as T;
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(answer)}`);
  return answer;
}

interface Pulled {
  pullStatus: string;
  nextBeginOffset: number;
  messages: { storeTimestamp: number; properties: Record<string, string> }[];
}

/** Sends `n` delayed messages in batches of 20 (all due at their own times), 4 requests in flight. */
async function sendDelayed(server: LocalServer, topic: string, n: number, dueOf: (i: number) => number) {
  const BATCH = 20;
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const first = next;
      next = Math.min(n, next + BATCH);
      const messages = [];
      for (let i = first; i < next; i++) {
        messages.push({
          body: Buffer.from(`delayed-${i}`).toString("base64"),
          properties: { TIMER_DELIVER_MS: String(dueOf(i)) },
        });
      }
      await post(server, "/send", { topic, brokerName: "broker-a", queueId: (first / BATCH) % QUEUES, messages });
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return Date.now();
}

/**
 * Reads every queue of the topic from `offsets` on; returns the lateness of each new message due after
 * `countFrom` (one due while the sends were still running would measure the sends, not the timer).
 */
async function pullAll(server: LocalServer, topic: string, offsets: number[], countFrom: number) {
  const late: number[] = [];
  let seen = 0;
  for (let q = 0; q < QUEUES; q++) {
    const res = await post<Pulled>(server, "/pull", {
      consumerGroup: "bench-delayed",
      topic,
      brokerName: "broker-a",
      queueId: q,
      queueOffset: offsets[q] ?? 0,
      maxMsgNums: 1024,
    });
    for (const m of res.messages) {
      const due = Number(m.properties.TIMER_DELIVER_MS);
      if (due > countFrom) late.push(m.storeTimestamp - due);
    }
    seen += res.messages.length;
    if (res.pullStatus === "FOUND") offsets[q] = res.nextBeginOffset;
  }
  return { late, seen };
}

async function withServer<T>(
  storage: StorageChoice,
  sweepIntervalMs: number,
  run: (server: LocalServer, broker: Broker) => Promise<T>,
): Promise<T> {
  const server = await startLocalServer({
    port: 0,
    storage,
    config: parseNimbusConfig({ timerSweepIntervalMs: Math.min(sweepIntervalMs, 60_000) }),
    registerIntervalMs: 3_600_000,
    retentionIntervalMs: 3_600_000,
    // The local timer job off: only requests (or the bench, standing in for the schedule) move messages.
    delayedDeliveryIntervalMs: 3_600_000,
  });
  try {
    const broker = server.context.broker;
    await post(server, "/send", {
      topic: `warm${Date.now()}`,
      messages: [{ body: Buffer.from("w").toString("base64") }],
    }).catch(() => undefined);
    return await run(server, broker);
  } finally {
    await server.close();
  }
}

export async function runDelayed(storage: StorageChoice, runId: string, o: DelayedOptions): Promise<DelayedResult> {
  const dueOf = (start: number) => (i: number) => start + o.leadMs + Math.floor((i * o.spreadMs) / o.messages);

  // With traffic: a consumer's pulls are the only sweeps.
  const withTraffic = await withServer(storage, o.sweepIntervalMs, async (server) => {
    const topic = `BenchDelayT${runId}`;
    const sentAt = await sendDelayed(server, topic, o.messages, dueOf(Date.now()));
    const offsets = Array.from({ length: QUEUES }, () => 0);
    const late: number[] = [];
    let seen = 0;
    const deadline = Date.now() + o.leadMs + o.spreadMs + 60_000;
    while (seen < o.messages && Date.now() < deadline) {
      const page = await pullAll(server, topic, offsets, sentAt);
      late.push(...page.late);
      seen += page.seen;
      await sleep(o.pullEveryMs);
    }
    return late;
  });

  // No traffic: one run of the scheduled job, up before the first message is due.
  const noTraffic = await withServer(storage, 60_000, async (server, broker) => {
    const topic = `BenchDelayN${runId}`;
    const sentAt = await sendDelayed(server, topic, o.messages, dueOf(Date.now()));
    await broker.moveDueMessages(Math.max(0, dueOf(sentAt)(o.messages) - Date.now()) + 5000);
    return (
      await pullAll(
        server,
        topic,
        Array.from({ length: QUEUES }, () => 0),
        sentAt,
      )
    ).late;
  });

  // Cost: sends with no sweep running (due in a minute), then one sweep as if that minute had passed.
  const cost = await withServer(storage, 60_000, async (server, broker) => {
    const topic = `BenchDelayC${runId}`;
    const counter = server.storage.counter;
    const beforeSend: RequestCounts = counter.snapshot();
    const start = Date.now();
    // Due times over 10 s: about as many buckets as a real spread of one message per 10 ms would use.
    await sendDelayed(server, topic, o.messages, (i) => start + 60_000 + Math.floor((i * 10_000) / o.messages));
    const sent = diffCounts(counter.snapshot(), beforeSend);
    const later = new TimerStore(server.storage.table(TIMERS_TABLE), broker.queueLog, {
      retentionMs: 3_600_000,
      sweepIntervalMs: 60_000,
      now: () => start + 120_000,
    });
    const beforeMove = counter.snapshot();
    const moved = (await later.sweep()).moved;
    if (moved !== o.messages) throw new Error(`the cost sweep moved ${moved} of ${o.messages}`);
    const move = diffCounts(counter.snapshot(), beforeMove);
    return { sent, move };
  });

  const send = perUnit(cost.sent, Math.ceil(o.messages / 20), o.messages);
  const move = perUnit(cost.move, 0, o.messages);
  const total = {
    apiCalls: send.apiCalls,
    tableReads: send.tableReads + move.tableReads,
    tableWrites: send.tableWrites + move.tableWrites,
    readUnits: send.readUnits + move.readUnits,
    writeUnits: send.writeUnits + move.writeUnits,
    s3Puts: send.s3Puts + move.s3Puts,
    s3Gets: send.s3Gets + move.s3Gets,
  };
  return {
    messages: o.messages,
    withTraffic: { ...summarize(withTraffic), pullEveryMs: o.pullEveryMs, sweepIntervalMs: o.sweepIntervalMs },
    noTraffic: summarize(noTraffic),
    perMessage: { send: roundPerUnit(send), move: roundPerUnit(move), total: roundPerUnit(total) },
  };
}

/** The delayed-delivery lines of a mode's report. */
export function formatDelayed(r: DelayedResult): string {
  const t = r.perMessage.total;
  return [
    `Delayed delivery (${r.messages} timer messages per scenario, sent in batches of 20; lateness = store time - deliver time, of the messages due after the sends ended):`,
    `  with traffic (a pull every ${r.withTraffic.pullEveryMs} ms, sweeps at most every ${r.withTraffic.sweepIntervalMs} ms per process): ` +
      `p50 ${r.withTraffic.p50Ms} ms, p99 ${r.withTraffic.p99Ms} ms, max ${r.withTraffic.maxMs} ms (${r.withTraffic.count} measured: due after the sends ended)`,
    `  no traffic (one scheduled run): p50 ${r.noTraffic.p50Ms} ms, p99 ${r.noTraffic.p99Ms} ms, max ${r.noTraffic.maxMs} ms (${r.noTraffic.count} measured)`,
    `  AWS requests per delayed message: ${r.perMessage.send.apiCalls} API calls, ${t.tableReads} DynamoDB reads, ${t.tableWrites} writes, ` +
      `${t.s3Puts} S3 PUTs, ${t.s3Gets} S3 GETs (send: ${r.perMessage.send.tableWrites} writes; move: ` +
      `${r.perMessage.move.tableReads} reads, ${r.perMessage.move.tableWrites} writes)`,
  ].join("\n");
}
