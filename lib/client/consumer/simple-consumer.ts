/**
 * @module RocketMQ 5's `SimpleConsumer` (POP consumption, docs/pop.md): the application receives a batch,
 * handles it and acks each message; a message not acked within its invisible time comes back (with
 * `deliveryAttempt` + 1). No rebalance, no offsets, no heartbeat: any number of consumers of a group share
 * its topics, and one may live for a single request (a Lambda function: docs/examples/lambda-worker.ts).
 *
 * @example
 * const consumer = new SimpleConsumer({
 *   consumerGroup: "workers",
 *   endpoints: "http://127.0.0.1:9876",
 *   subscriptions: new Map([["Orders", FilterExpression.SUB_ALL]]),
 *   awaitDuration: 20_000,
 * });
 * await consumer.startup();
 * for (const m of await consumer.receive(16, 30_000)) {
 *   handle(m.body);
 *   await consumer.ack(m);
 * }
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { MessageConst } from "../../core/message.js";
import { newMessageId } from "../../core/message-id-node.js";
import { endpoints, MAX_LONG_POLL_MS, MAX_RECEIVE_MESSAGES, type ReceivedMessage } from "../../protocol/index.js";
import { localIPv4 } from "../client-id.js";
import { MessageTracer, type TracedMessage, type TraceOptions } from "../trace/index.js";
import type { TransportOptions } from "../transport/index.js";
import { NimbusApi } from "../transport/index.js";

export type FilterType = "TAG" | "SQL92";

/** RocketMQ 5's FilterExpression: a tag expression (default `*`) or an SQL92 one over user properties. */
export class FilterExpression {
  static readonly SUB_ALL = new FilterExpression("*");

  constructor(
    readonly expression = "*",
    readonly type: FilterType = "TAG",
  ) {}

  /** RocketMQ's `MessageSelector.bySql`. */
  static sql92(expression: string): FilterExpression {
    return new FilterExpression(expression, "SQL92");
  }
}

/** With `enableMsgTrace`: SubBefore at receive, SubAfter at ack (docs/trace.md). */
export interface SimpleConsumerOptions extends Omit<TransportOptions, "endpoints">, TraceOptions {
  consumerGroup: string;
  /** Name server / API base URLs. */
  endpoints: string | string[];
  /** Topic → filter (a string is a TAG expression). */
  subscriptions?: Map<string, FilterExpression | string> | Record<string, FilterExpression | string>;
  /** Long polling: how long a receive waits for a message, 0 to 20000 ms. Default 20000 (RocketMQ 5's 30 s is over the API's cap). */
  awaitDuration?: number;
}

/** A received message, as RocketMQ 5's MessageView. */
export interface MessageView {
  readonly messageId: string;
  readonly topic: string;
  readonly body: Uint8Array;
  readonly tag: string | undefined;
  readonly keys: string[];
  readonly messageGroup: string | undefined;
  /** 1 on the first delivery. */
  readonly deliveryAttempt: number;
  /** The message's properties (user properties and the broker's). */
  readonly properties: Readonly<Record<string, string>>;
  readonly bornTimestamp: number;
  readonly storeTimestamp: number;
  readonly brokerName: string;
  readonly queueId: number;
  readonly offset: number;
  /** The handle that acks it: replaced by changeInvisibleDuration. */
  receiptHandle: string;
  invisibleUntil: number;
}

type State = "CREATED" | "RUNNING" | "TERMINATED";

export class SimpleConsumer {
  readonly consumerGroup: string;
  readonly awaitDuration: number;
  readonly #api: NimbusApi;
  readonly #timeoutMs: number;
  readonly #subscriptions = new Map<string, FilterExpression>();
  /** Per topic: its brokers and their masters' addresses, when they are apart (else one all-in-one API). */
  readonly #brokers = new Map<string, { brokerName: string; baseUrl: string }[]>();
  #state: State = "CREATED";
  #next = 0;
  readonly #tracer: MessageTracer | undefined;
  /** Traced messages received and not yet acked: their receive time and trace request id. */
  readonly #received = new WeakMap<MessageView, { begin: number; requestId: string }>();
  /** This consumer in its trace records: `ip@pid`. */
  readonly clientId = `${localIPv4()}@${process.pid}`;

  constructor(options: SimpleConsumerOptions) {
    if (typeof options.consumerGroup !== "string" || options.consumerGroup.length === 0) {
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "consumerGroup is empty");
    }
    this.consumerGroup = options.consumerGroup;
    this.awaitDuration = checkRange("awaitDuration", options.awaitDuration ?? MAX_LONG_POLL_MS, 0, MAX_LONG_POLL_MS);
    const {
      subscriptions,
      awaitDuration: _a,
      consumerGroup: _g,
      enableMsgTrace,
      customizedTraceTopic,
      ...transport
    } = options;
    this.#api = new NimbusApi(transport);
    this.#tracer = MessageTracer.of(options, {
      api: this.#api,
      group: this.consumerGroup,
      clientId: () => this.clientId,
    });
    this.#timeoutMs = options.timeoutMs ?? 3000;
    const entries = subscriptions instanceof Map ? [...subscriptions] : Object.entries(subscriptions ?? {});
    for (const [topic, filter] of entries) this.subscribe(topic, filter);
  }

  /** Adds (or replaces) a topic's filter. */
  subscribe(topic: string, filter: FilterExpression | string = FilterExpression.SUB_ALL): this {
    this.#subscriptions.set(topic, typeof filter === "string" ? new FilterExpression(filter) : filter);
    return this;
  }

  unsubscribe(topic: string): this {
    this.#subscriptions.delete(topic);
    return this;
  }

  /**
   * Checks every subscribed topic has a route (TOPIC_NOT_EXIST otherwise), learns its brokers and fixes the
   * group's start on it (if the group has not started yet): every message sent from now on is received.
   */
  async startup(): Promise<void> {
    if (this.#state !== "CREATED")
      throw new NimbusError(ErrorCode.SERVICE_NOT_AVAILABLE, `the consumer is ${this.#state}`);
    for (const topic of this.#subscriptions.keys()) {
      await this.#learnBrokers(topic);
      await this.#api.call(endpoints.startReceiving, { body: { consumerGroup: this.consumerGroup, topic } });
    }
    this.#state = "RUNNING";
  }

  /**
   * Receives up to `maxMessageNum` messages of one subscribed topic (topics in turn), waiting up to
   * `awaitDuration` for one; each stays invisible to the group's other consumers for `invisibleDuration` ms.
   */
  async receive(maxMessageNum = 16, invisibleDuration = 15_000): Promise<MessageView[]> {
    this.#checkRunning();
    checkRange("maxMessageNum", maxMessageNum, 1, MAX_RECEIVE_MESSAGES);
    const topics = [...this.#subscriptions.keys()];
    if (topics.length === 0) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "no subscription");
    const topic = topics[this.#next++ % topics.length] as string;
    const filter = this.#subscriptions.get(topic) ?? FilterExpression.SUB_ALL;
    const brokers = this.#brokers.get(topic) ?? (await this.#learnBrokers(topic));
    const broker = brokers.length === 0 ? undefined : brokers[this.#next % brokers.length];
    const answer = await this.#api.call(
      endpoints.receive,
      {
        body: {
          consumerGroup: this.consumerGroup,
          topic,
          filterExpression: { type: filter.type, expression: filter.expression },
          maxMessages: maxMessageNum,
          invisibleDurationMs: invisibleDuration,
          awaitDurationMs: this.awaitDuration,
          ...(broker === undefined ? {} : { brokerName: broker.brokerName }),
        },
      },
      // The answer may take the whole wait: the transport's timeout counts after it.
      { timeoutMs: this.awaitDuration + this.#timeoutMs, ...(broker === undefined ? {} : { baseUrl: broker.baseUrl }) },
    );
    const views = answer.messages.map(toView);
    if (this.#tracer !== undefined) {
      const call = { begin: Date.now(), requestId: newMessageId() };
      for (const v of views) this.#received.set(v, call);
      this.#tracer.consumed(views.map(traced), "SubBefore", call.begin, call);
    }
    return views;
  }

  /** Acks one message; a stale handle (redelivered, changed, expired) is INVALID_RECEIPT_HANDLE. */
  async ack(message: MessageView): Promise<void> {
    const [result] = await this.ackAll([message]);
    if (result !== "OK") {
      throw new NimbusError(
        ErrorCode.INVALID_RECEIPT_HANDLE,
        `message ${message.messageId}: the receipt handle is not current`,
      );
    }
  }

  /** Acks many messages in as few calls as the API allows (64 handles each); the code of each, in order. */
  async ackAll(messages: readonly MessageView[]): Promise<("OK" | "INVALID_RECEIPT_HANDLE")[]> {
    this.#checkRunning();
    const out: ("OK" | "INVALID_RECEIPT_HANDLE")[] = [];
    const byTopic = new Map<string, MessageView[]>();
    for (const m of messages) byTopic.set(m.topic, [...(byTopic.get(m.topic) ?? []), m]);
    const codes = new Map<MessageView, "OK" | "INVALID_RECEIPT_HANDLE">();
    for (const [topic, list] of byTopic) {
      for (let i = 0; i < list.length; i += 64) {
        const chunk = list.slice(i, i + 64);
        const answer = await this.#api.call(endpoints.ack, {
          body: { consumerGroup: this.consumerGroup, topic, receiptHandles: chunk.map((m) => m.receiptHandle) },
        });
        for (const [j, m] of chunk.entries()) codes.set(m, answer.entries[j]?.code ?? "INVALID_RECEIPT_HANDLE");
      }
    }
    for (const m of messages) out.push(codes.get(m) ?? "INVALID_RECEIPT_HANDLE");
    for (const m of this.#tracer === undefined ? [] : messages) {
      const call = this.#received.get(m);
      const status = codes.get(m) === "OK" ? "CONSUME_SUCCESS" : "INVALID_RECEIPT_HANDLE";
      if (call !== undefined) this.#tracer?.consumed([traced(m)], "SubAfter", call.begin, { ...call, status });
      this.#received.delete(m);
    }
    return out;
  }

  /** Gives the message `invisibleDuration` ms more from now; its receipt handle is replaced (the old one dies). */
  async changeInvisibleDuration(message: MessageView, invisibleDuration: number): Promise<void> {
    this.#checkRunning();
    const answer = await this.#api.call(endpoints.changeInvisibleDuration, {
      body: {
        consumerGroup: this.consumerGroup,
        topic: message.topic,
        receiptHandle: message.receiptHandle,
        invisibleDurationMs: invisibleDuration,
      },
    });
    message.receiptHandle = answer.receiptHandle;
    message.invisibleUntil = answer.invisibleUntil;
  }

  /** Stops: nothing is held by a simple consumer, so unacked messages simply come back after their invisible time. */
  async shutdown(): Promise<void> {
    this.#state = "TERMINATED";
    await this.#tracer?.close();
    await this.#api.close();
  }

  /** A topic's brokers at their masters' addresses; none when one API serves them all (an all-in-one). */
  async #learnBrokers(topic: string): Promise<{ brokerName: string; baseUrl: string }[]> {
    const route = await this.#api.topicRoute(topic);
    const brokers = route.queueDatas.flatMap((qd) => {
      const baseUrl = this.#api.brokers.candidates(qd.brokerName, "write")[0];
      return baseUrl === undefined ? [] : [{ brokerName: qd.brokerName, baseUrl }];
    });
    const apart = new Set(brokers.map((b) => b.baseUrl)).size > 1 ? brokers : [];
    this.#brokers.set(topic, apart);
    return apart;
  }

  #checkRunning(): void {
    if (this.#state !== "RUNNING") {
      throw new NimbusError(ErrorCode.SERVICE_NOT_AVAILABLE, `the consumer is ${this.#state}: call startup() first`);
    }
  }
}

function toView(m: ReceivedMessage): MessageView {
  return {
    messageId: m.msgId,
    topic: m.topic,
    body: m.body,
    tag: m.tags === "" ? undefined : m.tags,
    keys: m.keys,
    messageGroup: m.properties[MessageConst.SHARDING_KEY],
    deliveryAttempt: m.deliveryAttempt,
    properties: m.properties,
    bornTimestamp: m.bornTimestamp,
    storeTimestamp: m.storeTimestamp,
    brokerName: m.brokerName,
    queueId: m.queueId,
    offset: m.queueOffset,
    receiptHandle: m.receiptHandle,
    invisibleUntil: m.invisibleUntil,
  };
}

/** A view as a trace record reads it. */
function traced(m: MessageView): TracedMessage {
  return {
    msgId: m.messageId,
    topic: m.topic,
    tags: m.tag ?? "",
    keys: m.keys,
    properties: m.properties,
    brokerName: m.brokerName,
    queueId: m.queueId,
    queueOffset: m.offset,
    reconsumeTimes: m.deliveryAttempt - 1,
  };
}

function checkRange(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}
