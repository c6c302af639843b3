/**
 * @module Helpers of the consumer tests: `waitUntil` (a condition with a generous deadline, never a timed
 * assertion), fast consumer timings, topic setup and sending through `NimbusApi`, and `Received`, which
 * counts what each consumer got (distinct msgIds, duplicates, the queues messages came from).
 *
 * @example
 * const received = new Received();
 * consumer.registerMessageListener(received.listener("c1"));
 * await waitUntil(() => received.has(sentIds), "everything received");
 */

import type { ConsumerBaseOptions, MessageListenerConcurrently } from "../../lib/client/consumer/consumer-options.js";
import type { MessageExt } from "../../lib/client/message.js";
import type { NimbusApi } from "../../lib/client/transport/api-client.js";
import { MessageQueue } from "../../lib/core/message-queue.js";
import { uniqueName } from "./server-fixture.js";

/** Polls `condition` until it holds; throws after `timeoutMs` (default 30 s) naming `what`. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
  intervalMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Background failures seen by the consumers of a test (pulls, commits); printed when `DEBUG_CONSUMER` is set. */
export const backgroundErrors: string[] = [];

/** Consumer timings for tests: rebalance every 200 ms, membership every 100 ms, short idle backoff. */
export function fastTimings(): Partial<ConsumerBaseOptions> {
  return {
    rebalanceInterval: 200,
    membershipPollInterval: 100,
    persistConsumerOffsetInterval: 200,
    heartbeatInterval: 1000,
    pullIdleBackoffMillis: 20,
    pullIdleBackoffMaxMillis: 100,
    pullTimeDelayMillsWhenException: 100,
    onError: (err, what) => {
      backgroundErrors.push(`${what}: ${String(err)}`);
      if (process.env.DEBUG_CONSUMER) console.warn(what, err);
    },
  };
}

/**
 * A fresh topic and group named after `name` (`<name>`, `g<name>`), the topic with `perBroker` queues on
 * broker-a only, and `count` messages "0", "1", ... sent to its queue 0.
 */
export async function freshTopicOnBrokerA(
  api: NimbusApi,
  name: string,
  perBroker = 1,
  count = 0,
): Promise<{ topic: string; group: string }> {
  const topic = uniqueName(name);
  const group = uniqueName(`g${name}`);
  await createTopic(api, topic, perBroker, ["broker-a"]);
  if (count > 0) {
    const messages = Array.from({ length: count }, (_, i) => ({ body: new TextEncoder().encode(String(i)) }));
    await api.send({ topic, brokerName: "broker-a", queueId: 0, messages });
  }
  return { topic, group };
}

/** Creates `topic` with `perBroker` read/write queues on each named broker (default both local ones). */
export async function createTopic(
  api: NimbusApi,
  topic: string,
  perBroker: number,
  brokerNames = ["broker-a", "broker-b"],
): Promise<MessageQueue[]> {
  await api.updateTopic(topic, { readQueueNums: perBroker, writeQueueNums: perBroker, brokerNames });
  return brokerNames.flatMap((b) => Array.from({ length: perBroker }, (_, i) => new MessageQueue(topic, b, i)));
}

export interface Sent {
  msgId: string;
  queue: string;
  queueOffset: number;
  body: string;
}

/**
 * Sends `count` messages, one per request, round robin over `queues` (explicit broker and queue id), with
 * bodies `${prefix}-${i}`. Answers what was sent, in order.
 */
export async function sendRoundRobin(
  api: NimbusApi,
  queues: readonly MessageQueue[],
  count: number,
  prefix: string,
  tags?: string,
): Promise<Sent[]> {
  const sent: Sent[] = [];
  for (let i = 0; i < count; i++) {
    const mq = queues[i % queues.length] as MessageQueue;
    const body = `${prefix}-${i}`;
    const res = await api.send({
      topic: mq.topic,
      brokerName: mq.brokerName,
      queueId: mq.queueId,
      messages: [{ body: new TextEncoder().encode(body), tags }],
    });
    sent.push({ msgId: res.msgIds[0] as string, queue: mq.key(), queueOffset: res.queueOffset, body });
  }
  return sent;
}

const queueKey = (m: MessageExt) => new MessageQueue(m.topic, m.brokerName, m.queueId).key();

/** What a set of consumers received. */
export class Received {
  /** msgId to how many times it was delivered (over all consumers). */
  readonly counts = new Map<string, number>();
  /** consumer name to the messages it got, in delivery order. */
  readonly byConsumer = new Map<string, MessageExt[]>();

  record(consumer: string, msgs: readonly MessageExt[]): void {
    const list = this.byConsumer.get(consumer) ?? [];
    this.byConsumer.set(consumer, list);
    for (const m of msgs) {
      list.push(m);
      this.counts.set(m.msgId, (this.counts.get(m.msgId) ?? 0) + 1);
    }
  }

  /** A listener that records and succeeds. */
  listener(consumer: string): MessageListenerConcurrently {
    return (msgs) => {
      this.record(consumer, msgs);
      return "CONSUME_SUCCESS";
    };
  }

  /** True when every id was delivered at least once. */
  has(ids: readonly string[]): boolean {
    return ids.every((id) => this.counts.has(id));
  }

  missing(ids: readonly string[]): string[] {
    return ids.filter((id) => !this.counts.has(id));
  }

  /** Deliveries beyond the first, over all messages. */
  get duplicates(): number {
    let extra = 0;
    for (const n of this.counts.values()) extra += n - 1;
    return extra;
  }

  get deliveries(): number {
    let total = 0;
    for (const n of this.counts.values()) total += n;
    return total;
  }

  /** The queue keys a consumer's messages came from. */
  queuesOf(consumer: string): Set<string> {
    return new Set((this.byConsumer.get(consumer) ?? []).map(queueKey));
  }

  /** Deliveries to one consumer beyond the first of each message. */
  duplicatesOf(consumer: string): number {
    const list = this.byConsumer.get(consumer) ?? [];
    return list.length - new Set(list.map((m) => m.msgId)).size;
  }

  /** Distinct msgIds a consumer got. */
  distinctOf(consumer: string): Set<string> {
    return new Set((this.byConsumer.get(consumer) ?? []).map((m) => m.msgId));
  }

  /** The report's figures of a run that sent `sent` messages: distinct ones received, deliveries beyond the first. */
  summary(sent: number): { sent: number; received: number; duplicates: number } {
    return { sent, received: this.counts.size, duplicates: this.duplicates };
  }

  /** The report's figures per consumer: `<name>` distinct messages it got, `duplicates<Name>` its extra deliveries. */
  perConsumer(names: readonly string[]): Record<string, number> {
    const capital = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);
    return Object.fromEntries([
      ...names.map((name) => [name, this.distinctOf(name).size]),
      ...names.map((name) => [`duplicates${capital(name)}`, this.duplicatesOf(name)]),
    ]);
  }
}

/** Prints one line of numbers for the report (node:test shows console output). */
export function report(label: string, numbers: Record<string, number | string>): void {
  console.log(`[consumer-e2e] ${label}: ${JSON.stringify(numbers)}`);
}
