/**
 * @module The data-plane benchmark of one case (one batch size, one fresh topic), against a running local
 * server over HTTP: produce with a few concurrent producers for a time budget (or up to a message cap),
 * then pull every produced message back with as many consumers, then (separately) idle polls on empty
 * queues. Every phase reads the storage's request counter before and after, so the AWS requests it
 * caused are known per message. Every loop is bounded in count and in time.
 */
import { randomBytes } from "node:crypto";
import type { LocalServer } from "../../lib/dev/local-server.js";
import type { RequestCounts } from "../../lib/storage/request-counter.js";
import { type Answer, call, mustCall, type PullAnswer, type SendAnswer, sendBody } from "./http.js";
import { type PhaseRates, phaseRates, startMeter } from "./meter.js";
import { type CostBreakdown, costPerMillion, type PerUnit, perUnit, roundPerUnit } from "./stats.js";

export interface CaseOptions {
  batch: number;
  /** Each message carries one key of its own. */
  keys?: boolean;
  /** The topic's `key.index` attribute (default on). */
  keyIndex?: boolean;
  bodyBytes: number;
  queues: number;
  producers: number;
  consumers: number;
  /** Produce for this long... */
  produceBudgetMs: number;
  /** ...or until this many messages are sent, whichever comes first. */
  maxMessages: number;
  /** Give up consuming after this long (the case is then reported incomplete). */
  consumeBudgetMs: number;
}

export interface PhaseResult extends PhaseRates {
  messages: number;
  requests: number;
  errors: number;
  counts: RequestCounts;
  perMessage: PerUnit;
  costPerMillionMessages: CostBreakdown;
}

export interface CaseResult {
  batch: number;
  topic: string;
  maxMsgNums: number;
  /** Conditional index puts that lost the race for a slot (writes beyond one per send). */
  lostRaces: number;
  produce: PhaseResult;
  consume: PhaseResult;
  /** Every produced message came back, in order, with its body. */
  complete: boolean;
  /** The end offset of each queue after the produce phase (queue id = index). */
  queueEnds: number[];
}

export const BROKER = "broker-a";
export const GROUP = "bench_consumer";
/** Stop a phase early after this many failed calls: something is broken, the numbers would mean nothing. */
export const MAX_ERRORS = 20;

export function phase(
  messages: number,
  requests: number,
  errors: number,
  ms: number,
  cpu: NodeJS.CpuUsage,
  latencies: number[],
  counts: RequestCounts,
): PhaseResult {
  const per = perUnit(counts, requests, messages);
  return {
    messages,
    requests,
    errors,
    ...phaseRates(messages, ms, cpu, latencies),
    counts,
    perMessage: roundPerUnit(per, 5),
    costPerMillionMessages: costPerMillion(per),
  };
}

/** Creates `topic` with `queues` read and write queues on broker-a only (so the topic has exactly that many). */
export async function createTopic(
  server: { url: string },
  topic: string,
  queues: number,
  keyIndex?: boolean,
): Promise<void> {
  await mustCall(server.url, "PUT", `/topics/${topic}`, {
    readQueueNums: queues,
    writeQueueNums: queues,
    brokerNames: [BROKER],
    ...(keyIndex === undefined ? {} : { keyIndex }),
  });
}

export async function runCase(server: LocalServer, topic: string, o: CaseOptions): Promise<CaseResult> {
  // Registration is the scheduled job's (every 30 s in a deployment); the run does it between phases, so
  // that its writes never fall inside a measured phase.
  await server.context.broker.registerBrokers();
  await createTopic(server, topic, o.queues, o.keyIndex);

  // Produce: the broker picks the queue (round robin over the topic's 8 queues), as for a plain client.
  const ends = new Map<number, number>();
  const produceLatencies: number[] = [];
  const target = Math.max(o.batch, Math.floor(o.maxMessages / o.batch) * o.batch);
  let claimed = 0;
  let sent = 0;
  let sendRequests = 0;
  let sendErrors = 0;
  const produceMeter = startMeter(server);
  const deadline = produceMeter.started + o.produceBudgetMs;
  const producer = async (): Promise<void> => {
    const body = sendBody(topic, o.batch, randomBytes(o.bodyBytes), o.keys === true);
    while (claimed < target && performance.now() < deadline && sendErrors < MAX_ERRORS) {
      claimed += o.batch;
      const answer = await call<SendAnswer>(server.url, "POST", "/send", body);
      sendRequests++;
      produceLatencies.push(answer.elapsedMs);
      if (!answer.ok || answer.body.sendStatus !== "SEND_OK") {
        sendErrors++;
        if (sendErrors === 1) console.error(`send failed (${answer.status}):`, JSON.stringify(answer.body));
        continue;
      }
      const q = answer.body.messageQueue.queueId;
      ends.set(q, Math.max(ends.get(q) ?? 0, answer.body.queueOffset + o.batch));
      sent += o.batch;
    }
  };
  await Promise.all(Array.from({ length: o.producers }, producer));
  const produced = produceMeter.stop();
  const produce = phase(sent, sendRequests, sendErrors, produced.ms, produced.cpu, produceLatencies, produced.counts);

  // Consume: consumer c owns the queues q with q % consumers == c (RocketMQ's averagely allocation, by
  // stride), and reads each from offset 0 to its end, one pull in flight per consumer.
  const maxMsgNums = o.batch === 1 ? 32 : o.batch;
  const consumeLatencies: number[] = [];
  const expectedBodyChars = Math.ceil(o.bodyBytes / 3) * 4;
  let received = 0;
  let pullRequests = 0;
  let pullErrors = 0;
  let intact = true;
  const consumeMeter = startMeter(server);
  const cDeadline = consumeMeter.started + o.consumeBudgetMs;
  const consumer = async (c: number): Promise<void> => {
    for (let queueId = c; queueId < o.queues; queueId += o.consumers) {
      const end = ends.get(queueId) ?? 0;
      let offset = 0;
      // At most one pull per message (and a few for errors) even if a pull returned nothing new.
      for (let pulls = 0; offset < end && pulls <= end + MAX_ERRORS; pulls++) {
        if (performance.now() > cDeadline || pullErrors >= MAX_ERRORS) {
          intact = false;
          return;
        }
        const request = { consumerGroup: GROUP, topic, brokerName: BROKER, queueId, queueOffset: offset, maxMsgNums };
        const answer: Answer<PullAnswer> = await call<PullAnswer>(server.url, "POST", "/pull", JSON.stringify(request));
        pullRequests++;
        consumeLatencies.push(answer.elapsedMs);
        if (!answer.ok || answer.body.pullStatus !== "FOUND") {
          pullErrors++;
          if (pullErrors === 1)
            console.error(`pull failed (${answer.status}):`, JSON.stringify(answer.body).slice(0, 300));
          continue;
        }
        for (const m of answer.body.messages) {
          if (m.queueOffset !== offset || m.body.length !== expectedBodyChars) intact = false;
          offset++;
        }
        received += answer.body.messages.length;
        if (answer.body.nextBeginOffset !== offset) intact = false;
      }
      if (offset !== end) intact = false;
    }
  };
  await Promise.all(Array.from({ length: o.consumers }, (_, c) => consumer(c)));
  const consumed = consumeMeter.stop();
  const consume = phase(
    received,
    pullRequests,
    pullErrors,
    consumed.ms,
    consumed.cpu,
    consumeLatencies,
    consumed.counts,
  );

  return {
    batch: o.batch,
    topic,
    maxMsgNums,
    lostRaces: Math.max(0, produced.counts.tableWrites - (sendRequests - sendErrors)),
    produce,
    consume,
    complete: intact && received === sent && sendErrors === 0 && pullErrors === 0,
    queueEnds: Array.from({ length: o.queues }, (_, q) => ends.get(q) ?? 0),
  };
}
