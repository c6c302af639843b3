/**
 * @module The phases of the peer table (`npm run bench -- --suite peer`), measured through the SDK's
 * `NimbusApi` as an application would use it: produce with one batch in flight, consume with one pull in
 * flight, and end-to-end at a fixed offered rate with one message per send. Every phase reads the process's
 * CPU time and (in-process servers) the storage's request counter around it.
 */
import type { NimbusApi } from "../../lib/client/transport/api-client.js";
import type { LocalServer } from "../../lib/dev/local-server.js";
import { type PhaseRates, phaseRates, startMeter } from "./meter.js";
import { type LatencySummary, type PerUnit, perUnit, round, roundPerUnit, summarize } from "./stats.js";

export const PEER_GROUP = "bench_peer";
const MAX_ERRORS = 20;

export interface PeerPhase extends PhaseRates {
  messages: number;
  calls: number;
  errors: number;
  /** Storage requests per message; undefined against an external server. */
  perMessage: PerUnit | undefined;
}

export interface QueueEnd {
  brokerName: string;
  queueId: number;
  end: number;
}

interface Meter {
  finish(messages: number, calls: number, errors: number, latencies: number[]): PeerPhase;
}

function meter(server: LocalServer | undefined): Meter {
  const m = startMeter(server);
  return {
    finish(messages, calls, errors, latencies) {
      const { ms, cpu, counts } = m.stop();
      return {
        messages,
        calls,
        errors,
        ...phaseRates(messages, ms, cpu, latencies),
        perMessage: counts ? roundPerUnit(perUnit(counts, calls, messages), 5) : undefined,
      };
    },
  };
}

/** Sends batches of `batch` copies of `body` to `topic`, one batch in flight, for `seconds`. */
export async function producePhase(
  api: NimbusApi,
  server: LocalServer | undefined,
  topic: string,
  batch: number,
  body: Uint8Array,
  seconds: number,
): Promise<{ phase: PeerPhase; ends: QueueEnd[] }> {
  const messages = Array.from({ length: batch }, () => ({ body }));
  const ends = new Map<string, QueueEnd>();
  const latencies: number[] = [];
  let sent = 0;
  let calls = 0;
  let errors = 0;
  const m = meter(server);
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline && errors < MAX_ERRORS) {
    const started = performance.now();
    calls++;
    try {
      const answer = await api.send({ topic, messages });
      latencies.push(performance.now() - started);
      const q = answer.messageQueue;
      const key = `${q.brokerName}/${q.queueId}`;
      const end = answer.queueOffset + batch;
      if ((ends.get(key)?.end ?? 0) < end) ends.set(key, { brokerName: q.brokerName, queueId: q.queueId, end });
      sent += batch;
    } catch (err) {
      if (errors++ === 0) console.error("bench peer: send failed:", err);
    }
  }
  return { phase: m.finish(sent, calls, errors, latencies), ends: [...ends.values()] };
}

/** Reads every queue of `ends` from 0 to its end, one pull of `maxMsgNums` in flight; checks order and bodies. */
export async function consumePhase(
  api: NimbusApi,
  server: LocalServer | undefined,
  topic: string,
  ends: readonly QueueEnd[],
  maxMsgNums: number,
  bodyBytes: number,
): Promise<{ phase: PeerPhase; intact: boolean }> {
  const latencies: number[] = [];
  let received = 0;
  let calls = 0;
  let errors = 0;
  let intact = true;
  const m = meter(server);
  for (const q of ends) {
    let offset = 0;
    while (offset < q.end && errors < MAX_ERRORS) {
      const started = performance.now();
      calls++;
      try {
        const res = await api.pull({
          consumerGroup: PEER_GROUP,
          topic,
          brokerName: q.brokerName,
          queueId: q.queueId,
          queueOffset: offset,
          maxMsgNums,
        });
        latencies.push(performance.now() - started);
        if (res.pullStatus !== "FOUND") throw new Error(`pull answered ${res.pullStatus}`);
        for (const msg of res.messages) {
          if (msg.queueOffset !== offset || msg.body.byteLength !== bodyBytes) intact = false;
          offset++;
        }
        received += res.messages.length;
      } catch (err) {
        if (errors++ === 0) console.error("bench peer: pull failed:", err);
      }
    }
    if (offset !== q.end) intact = false;
  }
  return { phase: m.finish(received, calls, errors, latencies), intact };
}

export interface EndToEndResult {
  offeredPerSec: number;
  seconds: number;
  sent: number;
  received: number;
  sendErrors: number;
  /** Messages sent per second of the sending window (below the offered rate: the client fell behind). */
  sentPerSec: number;
  /** Messages received per second, from the first send to the last receipt. */
  receivedPerSec: number;
  /** Send start to receipt by the consumer. */
  latency: LatencySummary;
  /** Send start to its answer. */
  sendLatency: LatencySummary;
  /** Messages received that were not awaited: a second copy, or a send that failed at the client (timed out) yet was stored. */
  strays: number;
  /** Every message came back once, at least 98 % of the offered rate from the first send to the last receipt. */
  sustained: boolean;
  cpuUsPerMsg: number;
}

/**
 * Open loop: every millisecond tick sends the messages due by the schedule (`rate` per second), one message
 * per send, without waiting for earlier sends; a consumer keeps one pull in flight on the topic's one queue
 * (pulling again at once after an empty answer) and times each message from its send's start. The consumer
 * pulls through `consumerApi` when given (its own connections, as a consumer application has), else `api`.
 */
export async function endToEndPhase(
  api: Pick<NimbusApi, "send" | "pull">,
  topic: string,
  brokerName: string,
  rate: number,
  seconds: number,
  bodyBytes: number,
  consumerApi: Pick<NimbusApi, "pull"> = api,
): Promise<EndToEndResult> {
  const sentAt = new Map<number, number>();
  const latencies: number[] = [];
  const sendLatencies: number[] = [];
  const total = Math.round(rate * seconds);
  let strays = 0;
  let sent = 0;
  let sendErrors = 0;
  let received = 0;
  let sending = true;
  const cpu = process.cpuUsage();
  const started = performance.now();
  let lastReceipt = started;
  const consumer = (async () => {
    let offset = 0;
    let pullErrors = 0;
    const drainDeadline = () => (sending ? Number.POSITIVE_INFINITY : performance.now() + 10_000);
    let stopAt = Number.POSITIVE_INFINITY;
    while (received < total - sendErrors && pullErrors < MAX_ERRORS) {
      if (!sending && stopAt === Number.POSITIVE_INFINITY) stopAt = drainDeadline();
      if (performance.now() > stopAt) break;
      try {
        const res = await consumerApi.pull({
          consumerGroup: PEER_GROUP,
          topic,
          brokerName,
          queueId: 0,
          queueOffset: offset,
          maxMsgNums: 256,
        });
        const now = performance.now();
        for (const msg of res.messages) {
          const seq = new DataView(msg.body.buffer, msg.body.byteOffset, 8).getFloat64(0, true);
          const at = sentAt.get(seq);
          if (at !== undefined) latencies.push(now - at);
          else strays++;
          sentAt.delete(seq);
          received++;
          lastReceipt = now;
        }
        offset = res.nextBeginOffset;
        if (res.messages.length === 0) await new Promise((resolve) => setImmediate(resolve));
      } catch (err) {
        if (pullErrors++ === 0) console.error("bench peer: e2e pull failed:", err);
      }
    }
  })();
  const inFlight = new Set<Promise<void>>();
  const sendOne = (seq: number) => {
    const body = new Uint8Array(bodyBytes);
    new DataView(body.buffer).setFloat64(0, seq, true);
    const sendStarted = performance.now();
    sentAt.set(seq, sendStarted);
    const p = api
      .send({ topic, brokerName, queueId: 0, messages: [{ body }] })
      .then(() => {
        sendLatencies.push(performance.now() - sendStarted);
      })
      .catch((err: unknown) => {
        sentAt.delete(seq);
        if (sendErrors++ === 0) console.error("bench peer: e2e send failed:", err);
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    while (sent < due) sendOne(sent++);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const sendWindow = (performance.now() - started) / 1000;
  await Promise.all(inFlight);
  sending = false;
  await consumer;
  const used = process.cpuUsage(cpu);
  const sentPerSec = round((sent - sendErrors) / sendWindow, 1);
  const receivedPerSec = round(received / ((lastReceipt - started) / 1000), 1);
  return {
    offeredPerSec: rate,
    seconds,
    sent,
    received,
    sendErrors,
    sentPerSec,
    receivedPerSec,
    latency: summarize(latencies),
    sendLatency: summarize(sendLatencies),
    strays,
    sustained: received === sent && strays === 0 && sendErrors === 0 && receivedPerSec >= rate * 0.98,
    cpuUsPerMsg: round((used.user + used.system) / Math.max(1, received), 1),
  };
}
