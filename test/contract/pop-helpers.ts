/** @module What the POP contract needs: a broker on a fixture's storage with a settable clock, sends, receives. */
import { Broker } from "../../lib/broker/broker.js";
import type { PopOptions, PoppedMessage } from "../../lib/broker/pop/index.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import type { Storage } from "../../lib/storage/storage.js";
import { type FakeClock, fakeClock } from "../support/server-fixture.js";

export const BROKER = "broker-a";
let seq = 0;

export function freshNames(): { topic: string; group: string } {
  seq++;
  return { topic: `PopT_${process.pid}_${seq}`, group: `PopG_${process.pid}_${seq}` };
}

export async function popBroker(
  storage: Storage,
  clock: FakeClock = fakeClock(Date.now()),
  pop: Partial<Omit<PopOptions, "retentionMs">> = {},
  brokerNames: readonly string[] = [BROKER],
): Promise<Broker> {
  const broker = new Broker(storage, {
    brokers: brokerNames.map((brokerName) => ({
      cluster: "C",
      brokerName,
      brokerId: 0,
      address: "http://127.0.0.1:1",
    })),
    newMessageId,
    now: clock,
    pop,
  });
  await broker.registerBrokers();
  return broker;
}

/** A fresh topic with `queues` queues on the broker, and a fresh group. */
export async function topicWith(broker: Broker, queues: number): Promise<{ topic: string; group: string }> {
  const names = freshNames();
  await broker.topics.upsert(names.topic, { readQueueNums: queues, writeQueueNums: queues });
  return names;
}

export function body(text: string, bytes = 0): Uint8Array {
  const out = new Uint8Array(Math.max(bytes, text.length));
  out.set(new TextEncoder().encode(text));
  return out;
}

/** Sends messages to queue `queueId` in one batch; `groups` gives each a message group (FIFO). */
export async function sendTo(
  broker: Broker,
  topic: string,
  queueId: number,
  texts: string[],
  options: { groups?: string[]; bytes?: number; tags?: string; brokerName?: string } = {},
): Promise<void> {
  await broker.sender.send({
    topic,
    brokerName: options.brokerName ?? BROKER,
    queueId,
    messages: texts.map((t, i) => ({
      body: body(t, options.bytes),
      ...(options.tags === undefined ? {} : { tags: options.tags }),
      ...(options.groups?.[i] === undefined ? {} : { properties: { __SHARDINGKEY: options.groups[i] as string } }),
    })),
  });
}

export const text = (m: PoppedMessage): string => new TextDecoder().decode(m.body).replace(/\0+$/, "");

export function receive(
  broker: Broker,
  group: string,
  topic: string,
  maxMessages = 32,
  extra: { invisibleMs?: number; longPollMs?: number; expression?: string; brokerName?: string } = {},
): Promise<{ messages: PoppedMessage[] }> {
  return broker.pop.receive({
    group,
    topic,
    filter: { type: "TAG", expression: extra.expression ?? "*" },
    maxMessages,
    invisibleMs: extra.invisibleMs ?? 30_000,
    longPollMs: extra.longPollMs ?? 0,
    brokerName: extra.brokerName,
  });
}
