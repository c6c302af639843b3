/**
 * @module The SDK's message model, as RocketMQ's: `Message` (what a producer sends), `MessageExt` (what a
 * consumer receives), `SendResult` and `PullResult`.
 *
 * @example
 * const msg = new Message("TopicTest", "TagA", "order-1", "Hello");
 * msg.putUserProperty("region", "eu");
 */
import { MessageConst } from "../core/message.js";
import { MessageQueue } from "../core/message-queue.js";
import type { PulledMessage, PullStatus } from "./transport/index.js";

export class Message {
  topic: string;
  body: Uint8Array;
  tags: string;
  keys: string[];
  flag = 0;
  readonly properties: Record<string, string> = {};

  /** As RocketMQ's constructors: `(topic, body)`, `(topic, tags, body)`, `(topic, tags, keys, body)`. */
  constructor(topic: string, body: Uint8Array | string);
  constructor(topic: string, tags: string, body: Uint8Array | string);
  constructor(topic: string, tags: string, keys: string | string[], body: Uint8Array | string);
  constructor(
    topic: string,
    ...rest: [Uint8Array | string] | [string, Uint8Array | string] | [string, string | string[], Uint8Array | string]
  ) {
    this.topic = topic;
    const body = rest[rest.length - 1] as Uint8Array | string;
    this.body = typeof body === "string" ? new TextEncoder().encode(body) : body;
    this.tags = rest.length >= 2 ? (rest[0] as string) : "";
    const keys = rest.length === 3 ? rest[1] : [];
    this.keys = Array.isArray(keys) ? keys : keys.split(MessageConst.KEY_SEPARATOR).filter((k) => k.length > 0);
  }

  putUserProperty(name: string, value: string): void {
    this.properties[name] = value;
  }

  getUserProperty(name: string): string | undefined {
    return this.properties[name];
  }

  /**
   * RocketMQ's delay level: delivered after the deployment's delay of `level` (by default 1s 5s 10s 30s 1m
   * 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h for levels 1 to 18); 0 clears it. Sets the `DELAY` property.
   */
  setDelayTimeLevel(level: number): void {
    if (level === 0) delete this.properties[MessageConst.DELAY];
    else this.properties[MessageConst.DELAY] = String(level);
  }

  getDelayTimeLevel(): number {
    return Number(this.properties[MessageConst.DELAY] ?? 0);
  }

  /**
   * RocketMQ 5's timer message: delivered at `epochMs` (ms since the epoch), at most the deployment's
   * `timerMaxDelaySec` ahead (default 7 days). Sets the `TIMER_DELIVER_MS` property.
   */
  setDeliverTimeMs(epochMs: number): void {
    this.properties[MessageConst.TIMER_DELIVER_MS] = String(Math.floor(epochMs));
  }

  getDeliverTimeMs(): number | undefined {
    const value = this.properties[MessageConst.TIMER_DELIVER_MS];
    return value === undefined ? undefined : Number(value);
  }

  /** RocketMQ's client-side unique id (UNIQ_KEY), set by the producer on send. */
  get msgId(): string | undefined {
    return this.properties[MessageConst.UNIQ_KEY];
  }
}

/** A received message: RocketMQ's MessageExt. */
export interface MessageExt extends PulledMessage {
  /** The body as UTF-8 text (convenience). */
  readonly bodyText: string;
}

export function toMessageExt(m: PulledMessage): MessageExt {
  return {
    ...m,
    get bodyText() {
      return new TextDecoder().decode(m.body);
    },
  };
}

export type SendStatus = "SEND_OK" | "FLUSH_DISK_TIMEOUT" | "FLUSH_SLAVE_TIMEOUT" | "SLAVE_NOT_AVAILABLE";

export interface SendResult {
  sendStatus: SendStatus;
  /** The first message's id (UNIQ_KEY); `msgIds` has one per message of a batch. */
  msgId: string;
  msgIds: string[];
  messageQueue: MessageQueue;
  /** 0 for a delayed message: it gets its offset when it is due. */
  queueOffset: number;
  /** A delayed message: when it is due (appended to `messageQueue`). */
  deliverTimeMs?: number;
}

export interface PullResult {
  pullStatus: PullStatus;
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
  msgFoundList: MessageExt[];
}

export function toMessageQueue(q: { topic: string; brokerName: string; queueId: number }): MessageQueue {
  return new MessageQueue(q.topic, q.brokerName, q.queueId);
}
