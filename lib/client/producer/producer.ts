/**
 * @module RocketMQ's `DefaultMQProducer` over the Nimbus HTTP API: round robin over the topic's writable
 * queues, retries that leave the broker that just failed, sends to a chosen queue or through a
 * `MessageQueueSelector`, batches, one-way sends, and optional client-side batching.
 *
 * @example
 * const producer = new Producer({ producerGroup: "orders", endpoints: "http://127.0.0.1:9876" });
 * await producer.start();
 * const result = await producer.send(new Message("TopicTest", "TagA", "Hello"));
 * await producer.send(new Message("TopicTest", "order-1 paid"), new SelectMessageQueueByHash(), "order-1");
 * await producer.shutdown();
 */

import { isDelayed } from "../../core/delay-levels.js";
import { ErrorCode, isNimbusError, NimbusError } from "../../core/errors.js";
import { MessageQueue } from "../../core/message-queue.js";
import { validateGroup } from "../../core/names.js";
import { buildMQClientId, DEFAULT_INSTANCE_NAME, localIPv4, resolveInstanceName } from "../client-id.js";
import type { Message, SendResult } from "../message.js";
import type { ServiceState } from "../service-state.js";
import {
  type HeartbeatResponse,
  type IamAuth,
  isUnreachable,
  NimbusApi,
  type NimbusCredentials,
  type SendResponse,
} from "../transport/index.js";

import { ClientInstance } from "./client-instance.js";
import { isMessageQueueSelector, type MessageQueueSelector, selectMessageQueue } from "./message-queue-selector.js";
import { isRetryable, type Prepared, prepare } from "./prepare.js";
import { type BatchingOptions, resultAt, SendBatcher } from "./send-batcher.js";
import { type TopicPublishInfo, topicRouteData2TopicPublishInfo } from "./topic-publish-info.js";

export { SelectMessageQueueByHash, SelectMessageQueueByRandom } from "./message-queue-selector.js";

export interface ProducerOptions {
  producerGroup: string;
  /** Name server / API base URLs (a list, or `;`-separated). */
  endpoints: string | string[];
  /** Sign every request with SigV4 for a stage with IAM auth (docs/deploy.md). */
  iam?: IamAuth;
  /** A Nimbus user's keys: every request is signed with them (a stage or `nimbus dev --auth` with ACLs). */
  credentials?: NimbusCredentials;
  /** Default "DEFAULT", which becomes `<pid>#<nanoTime>` (see `resolveInstanceName`). */
  instanceName?: string;
  unitName?: string;
  /** Time for a whole send, retries and route lookup included. Default 3000 ms. */
  sendMsgTimeout?: number;
  /** Extra attempts after a retryable failure (busy, network, timeout, 5xx). Default 2. */
  retryTimesWhenSendFailed?: number;
  /** How often used topics' routes are fetched again. Default 30000 ms. */
  pollNameServerInterval?: number;
  /** How often the producer's heartbeat is sent. Default 30000 ms. */
  heartbeatBrokerInterval?: number;
  /** Groups `send(msg)` calls to one topic into one request (see `SendBatcher`). Off by default. */
  batching?: BatchingOptions;
  /** Extra headers on every request (e.g. auth). */
  headers?: Record<string, string>;
  /** Failures of background work and of one-way sends; ignored by default. */
  onError?: (err: unknown, during: ProducerErrorSource) => void;
}

/** What failed in the background: a heartbeat, a route poll, a one-way send, leaving, a transaction's end or check. */
export type ProducerErrorSource = "heartbeat" | "route" | "oneway" | "unregister" | "transaction";

/**
 * The producer groups started in this process: RocketMQ allows one producer instance per group per
 * process (MQClientInstance.registerProducer), so two instances never answer for one group.
 */
const startedGroups = new Set<string>();

/** The first retry after a SYSTEM_BUSY answer waits up to this long (jittered), the next up to twice as long. */
export const BUSY_BACKOFF_MS = 50;

/** The broker answered SYSTEM_BUSY (it shed the request): not a network failure or a timeout of ours. */
function isBusyAnswer(err: unknown): boolean {
  return isNimbusError(err, ErrorCode.SYSTEM_BUSY) && !isUnreachable(err);
}

/** Where a send goes: round robin over the publish queues, a given queue, or the queue a selector picks. */
type Target =
  | { kind: "any" }
  | { kind: "queue"; mq: MessageQueue }
  | { kind: "select"; selector: MessageQueueSelector<unknown>; arg: unknown; head: Message };

/** RocketMQ's producer, HTTP edition. See the module example. */
export class Producer {
  readonly producerGroup: string;
  /** `clientIP@instanceName[@unitName]` (RocketMQ's buildMQClientId). */
  readonly clientId: string;
  readonly sendMsgTimeout: number;
  readonly retryTimesWhenSendFailed: number;
  readonly api: NimbusApi;
  readonly #instance: ClientInstance;
  readonly #publishInfo = new Map<string, TopicPublishInfo>();
  readonly #batcher: SendBatcher | undefined;
  readonly #oneways = new Set<Promise<void>>();
  readonly #onError: ProducerOptions["onError"];
  #state: ServiceState = "CREATE_JUST";

  constructor(options: ProducerOptions) {
    validateGroup(options.producerGroup);
    this.producerGroup = options.producerGroup;
    this.sendMsgTimeout = checkCount(options.sendMsgTimeout ?? 3000, "sendMsgTimeout", 1);
    this.retryTimesWhenSendFailed = checkCount(options.retryTimesWhenSendFailed ?? 2, "retryTimesWhenSendFailed", 0);
    const instanceName = resolveInstanceName(options.instanceName ?? DEFAULT_INSTANCE_NAME, { role: "producer" });
    this.clientId = buildMQClientId({ clientIP: localIPv4(), instanceName, unitName: options.unitName });
    this.api = new NimbusApi({
      endpoints: options.endpoints,
      timeoutMs: this.sendMsgTimeout,
      headers: options.headers,
      ...(options.iam ? { iam: options.iam } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
    });
    this.#onError = options.onError;
    this.#instance = new ClientInstance({
      api: this.api,
      clientId: this.clientId,
      heartbeatData: () => ({ producerDataSet: [this.producerData()] }),
      pollNameServerInterval: options.pollNameServerInterval,
      heartbeatBrokerInterval: options.heartbeatBrokerInterval,
      onRouteChange: (topic, route) => this.#publishInfo.set(topic, topicRouteData2TopicPublishInfo(topic, route)),
      onHeartbeatAnswer: (answer) => this.handleHeartbeatAnswer(answer),
      onError: (err, during) => this.#onError?.(err, during),
    });
    this.#batcher = options.batching
      ? new SendBatcher(options.batching, (topic, wire, timeoutMs) =>
          this.#sendDefault({ topic, wire }, { kind: "any" }, timeoutMs, 1 + this.retryTimesWhenSendFailed),
        )
      : undefined;
  }

  /** Sends a heartbeat now (its answer goes to `handleHeartbeatAnswer`): a push channel's `checks` hint. */
  protected heartbeatNow(): Promise<void> {
    return this.#instance.sendHeartbeat();
  }

  /** Heartbeat at once, then route polling and heartbeats every 30 s. One started producer per group per process. */
  async start(): Promise<void> {
    if (this.#state !== "CREATE_JUST") {
      throw new NimbusError(ErrorCode.SERVICE_NOT_AVAILABLE, `The producer service state not OK, ${this.#state}`);
    }
    if (startedGroups.has(this.producerGroup)) {
      throw new NimbusError(
        ErrorCode.PARAMETER_ILLEGAL,
        `The producer group[${this.producerGroup}] has been created before, specify another name please.`,
      );
    }
    startedGroups.add(this.producerGroup);
    this.#state = "RUNNING";
    await this.#instance.start();
  }

  /** Flushes waiting batches and one-way sends, stops the timers, and unregisters from the group. */
  async shutdown(): Promise<void> {
    if (this.#state !== "RUNNING") {
      this.#state = "SHUTDOWN_ALREADY";
      return;
    }
    this.#state = "SHUTDOWN_ALREADY";
    startedGroups.delete(this.producerGroup);
    await this.#batcher?.close();
    await Promise.all([...this.#oneways]);
    await this.#instance.shutdown();
    await this.api
      .unregister(this.clientId, { producerGroup: this.producerGroup })
      .catch((err: unknown) => this.#onError?.(err, "unregister"));
  }

  /** The topic's writable queues (RocketMQ's `fetchPublishMessageQueues`). */
  async fetchPublishMessageQueues(topic: string): Promise<MessageQueue[]> {
    this.ensureRunning();
    return [...((await this.#findPublishInfo(topic, this.sendMsgTimeout))?.messageQueueList ?? [])];
  }

  /**
   * Sends and waits for the broker's answer. `send(msg)` picks the next queue round robin (or joins a
   * batch when batching is on); `send(msg, mq)` writes to that queue; `send(msg, selector, arg)` to the
   * queue the selector picks. An array is one batch: one topic, one request, consecutive offsets. The last
   * argument may be a timeout in ms for this call.
   */
  send(msg: Message | Message[], timeout?: number): Promise<SendResult>;
  send(msg: Message | Message[], mq: MessageQueue, timeout?: number): Promise<SendResult>;
  send<A>(msg: Message | Message[], selector: MessageQueueSelector<A>, arg: A, timeout?: number): Promise<SendResult>;
  async send(msg: Message | Message[], ...rest: unknown[]): Promise<SendResult> {
    this.ensureRunning();
    const prepared = prepare(msg);
    const { target, timeout } = this.#parseCall(prepared, msg, rest);
    // A delayed message is sent on its own: a batch is delayed as a whole or not at all.
    const single = !Array.isArray(msg) && !isDelayed(prepared.wire[0]?.properties) && prepared.wire[0];
    // Joins the batch before the first await, so that a shutdown() called right after still flushes it.
    if (this.#batcher && target.kind === "any" && single) return this.#batcher.add(prepared.topic, single, timeout);
    return resultOf(await this.#sendDefault(prepared, target, timeout, 1 + this.retryTimesWhenSendFailed));
  }

  /** Sends once without waiting for a result; never rejects (failures go to `onError`). */
  sendOneway(msg: Message | Message[], timeout?: number): Promise<void>;
  sendOneway(msg: Message | Message[], mq: MessageQueue, timeout?: number): Promise<void>;
  sendOneway<A>(msg: Message | Message[], selector: MessageQueueSelector<A>, arg: A, timeout?: number): Promise<void>;
  sendOneway(msg: Message | Message[], ...rest: unknown[]): Promise<void> {
    const job = (async () => {
      this.ensureRunning();
      const prepared = prepare(msg);
      const { target, timeout } = this.#parseCall(prepared, msg, rest);
      await this.#sendDefault(prepared, target, timeout, 1);
    })().catch((err: unknown) => this.#onError?.(err, "oneway"));
    this.#oneways.add(job);
    void job.finally(() => this.#oneways.delete(job));
    return job;
  }

  /** Reads `(timeout?)`, `(mq, timeout?)` or `(selector, arg, timeout?)`. */
  #parseCall(prepared: Prepared, msg: Message | Message[], rest: unknown[]): { target: Target; timeout: number } {
    const [first, second, third] = rest;
    if (first === undefined || typeof first === "number")
      return { target: { kind: "any" }, timeout: this.#timeout(first) };
    if (first instanceof MessageQueue) {
      if (first.topic !== prepared.topic) {
        throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "message's topic not equal mq's topic");
      }
      return { target: { kind: "queue", mq: first }, timeout: this.#timeout(second) };
    }
    const head = Array.isArray(msg) ? msg[0] : msg;
    if (!isMessageQueueSelector(first) || head === undefined) {
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "send takes a timeout, a MessageQueue or a selector");
    }
    return { target: { kind: "select", selector: first, arg: second, head }, timeout: this.#timeout(third) };
  }

  /**
   * RocketMQ's `sendDefaultImpl`: up to `attempts` tries within `timeoutMs` in all (route lookup
   * included). A round-robin send retries on another broker's queue when there is one. A send to a given
   * or selected queue retries that same queue (RocketMQ's `sendSelectImpl` does not retry at all; a busy
   * serverless API is worth a second try, and switching queues would break the caller's ordering).
   * A topic without a route is sent without a queue: the broker picks one and auto-creates the topic,
   * as RocketMQ's default-topic route does. Only retryable failures are retried; message ids stay the
   * same across attempts, so a timed-out attempt that did land leaves a duplicate with the same UNIQ_KEY.
   */
  async #sendDefault(prepared: Prepared, target: Target, timeoutMs: number, attempts: number): Promise<SendResponse> {
    const begin = Date.now();
    const { topic, wire } = prepared;
    let info = await this.#findPublishInfo(topic, timeoutMs);
    let fixed: MessageQueue | undefined;
    if (target.kind === "select") {
      if (!info?.ok()) throw new NimbusError(ErrorCode.TOPIC_NOT_EXIST, `No route info of this topic: ${topic}`);
      fixed = selectMessageQueue(target.selector, info.messageQueueList, target.head, target.arg);
    } else if (target.kind === "queue") {
      fixed = target.mq;
    }
    if (fixed !== undefined && info?.brokerAddr(fixed.brokerName) === undefined) {
      info = await this.#refreshPublishInfo(topic, timeoutMs - (Date.now() - begin));
      if (info?.brokerAddr(fixed.brokerName) === undefined) {
        throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `The broker[${fixed.brokerName}] not exist`);
      }
    }
    const brokersSent: string[] = [];
    let mq: MessageQueue | undefined;
    let lastError: unknown;
    for (let times = 0; times < attempts; times++) {
      const remaining = timeoutMs - (Date.now() - begin);
      if (remaining <= 0) {
        throw new NimbusError(ErrorCode.SYSTEM_BUSY, `sendDefaultImpl call timeout (${timeoutMs} ms)`, {
          cause: lastError,
        });
      }
      // Without a route (a topic the broker will auto-create), the broker picks the queue.
      mq = fixed ?? (info?.ok() ? info.selectOneMessageQueue(mq?.brokerName) : undefined);
      brokersSent.push(mq?.brokerName ?? "(any)");
      const baseUrl = mq === undefined ? undefined : info?.brokerAddr(mq.brokerName);
      try {
        return await this.api.send(
          {
            producerGroup: this.producerGroup,
            topic,
            ...(mq === undefined ? {} : { brokerName: mq.brokerName, queueId: mq.queueId }),
            messages: wire,
          },
          { timeoutMs: remaining, baseUrl },
        );
      } catch (err) {
        if (!isRetryable(err)) throw err;
        lastError = err;
        // A broker that shed the send (SYSTEM_BUSY answered, not a network failure) gets a moment: a jittered,
        // doubling pause before the next try (on another broker where there is one), as RocketMQ's client
        // backs off a busy broker. Never past the send's own timeout.
        if (times + 1 < attempts && isBusyAnswer(err)) {
          const pause = Math.random() * BUSY_BACKOFF_MS * 2 ** times;
          await new Promise((resolve) => setTimeout(resolve, Math.min(pause, timeoutMs - (Date.now() - begin))));
        }
      }
    }
    const code = isNimbusError(lastError) ? lastError.code : ErrorCode.SYSTEM_ERROR;
    const cost = Date.now() - begin;
    throw new NimbusError(
      code,
      `Send [${attempts}] times, still failed, cost [${cost}]ms, Topic: ${topic}, BrokersSent: [${brokersSent.join(", ")}]`,
      { cause: lastError },
    );
  }

  /** What the heartbeat says of this producer's group. */
  protected producerData(): { groupName: string; transactional?: boolean } {
    return { groupName: this.producerGroup };
  }

  /** A heartbeat's answer; a TransactionProducer answers the check-backs in it. */
  protected handleHeartbeatAnswer(_answer: HeartbeatResponse): void {}

  /** Hands a background failure to `onError`. */
  protected reportError(err: unknown, during: ProducerErrorSource): void {
    this.#onError?.(err, during);
  }

  /**
   * The next writable queue of the topic round robin (avoiding `lastBroker` when another has one) and its
   * broker's address; undefined when the topic has no route yet (the broker then picks and auto-creates).
   */
  protected async nextQueue(
    topic: string,
    timeoutMs: number,
    lastBroker?: string,
  ): Promise<{ mq: MessageQueue; baseUrl: string | undefined } | undefined> {
    const info = await this.#findPublishInfo(topic, timeoutMs);
    if (!info?.ok()) return undefined;
    const mq = info.selectOneMessageQueue(lastBroker);
    return mq === undefined ? undefined : { mq, baseUrl: info.brokerAddr(mq.brokerName) };
  }

  /** RocketMQ's `tryToFindTopicPublishInfo`: the cached publish info, else the route fetched now. */
  async #findPublishInfo(topic: string, timeoutMs: number): Promise<TopicPublishInfo | undefined> {
    const cached = this.#publishInfo.get(topic);
    return cached?.ok() ? cached : this.#refreshPublishInfo(topic, timeoutMs);
  }

  async #refreshPublishInfo(topic: string, timeoutMs: number): Promise<TopicPublishInfo | undefined> {
    if (timeoutMs <= 0) throw new NimbusError(ErrorCode.SYSTEM_BUSY, `route lookup of ${topic} timed out`);
    await this.#instance.updateTopicRouteInfo(topic, timeoutMs);
    return this.#publishInfo.get(topic);
  }

  #timeout(value: unknown): number {
    if (value === undefined) return this.sendMsgTimeout;
    if (typeof value !== "number" || !(value > 0)) {
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `a send timeout is a positive number of ms: ${String(value)}`);
    }
    return value;
  }

  protected ensureRunning(): void {
    if (this.#state !== "RUNNING") {
      throw new NimbusError(ErrorCode.SERVICE_NOT_AVAILABLE, `The producer service state not OK, ${this.#state}`);
    }
  }
}

function resultOf(res: SendResponse): SendResult {
  return { ...resultAt(res, 0), msgIds: res.msgIds };
}

function checkCount(value: number, name: string, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `${name} must be an integer ≥ ${min}: ${value}`);
  }
  return value;
}
