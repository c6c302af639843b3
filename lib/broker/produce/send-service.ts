/**
 * @module Send: validate a batch, pick the queue, append it with the queue log, answer offsets and
 * message ids. A rejected send writes nothing (every check runs before the append).
 */

import { hasControlCharacter } from "../../core/control-characters.js";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { MessageConst, type MessageRecord } from "../../core/message.js";
import { encodeBatch } from "../../core/message-codec.js";
import { RMQ_SYS_TRACE_TOPIC, validateSendTopic } from "../../core/names.js";
import { PermName } from "../../core/perm-name.js";
import {
  DEFAULT_AUTO_CREATE_QUEUE_NUMS,
  MAX_BATCH_BYTES,
  MAX_BATCH_MESSAGES,
  MAX_BODY_BYTES,
  MAX_PROPERTIES_BYTES,
  MAX_TAG_BYTES,
  type SendMessage,
  type SendRequest,
  type SendResponse,
  type TopicRouteData,
} from "../../protocol/index.js";
import type { RouteCache, TopicService } from "../names/index.js";
import { queueDataOn } from "../names/index.js";
import { indexedMessages, type QueueLog, type QueueRef } from "../queue-log/index.js";
import type { DelayedDelivery } from "../timers/index.js";
import { checkClientProperties, refuseDuplicateIds } from "./message-checks.js";

export interface SendServiceOptions {
  /** RocketMQ's autoCreateTopicEnable: an unknown topic gets `defaultQueueNums` queues on every writable broker. */
  autoCreateTopic: boolean;
  defaultQueueNums?: number;
  newMessageId: () => string;
  now?: () => number;
  /** Delay levels and timer messages: when a message is due, and where it waits (delayed-delivery.ts). */
  delays?: DelayedDelivery;
}

const illegal = (message: string) => new NimbusError(ErrorCode.MESSAGE_ILLEGAL, message);
const tooLarge = (message: string) => new NimbusError(ErrorCode.MESSAGE_BODY_TOO_LARGE, message);
// Buffer.byteLength counts a lone surrogate as the 3 bytes of U+FFFD, as TextEncoder encodes it, without a copy.
const utf8Length = (s: string) => Buffer.byteLength(s, "utf8");

/** Each route's writable queues in order (brokers as listed, queue ids ascending), worked out once per route. */
const writableQueuesOf = new WeakMap<TopicRouteData, readonly { brokerName: string; queueId: number }[]>();

function writableQueues(route: TopicRouteData): readonly { brokerName: string; queueId: number }[] {
  let all = writableQueuesOf.get(route);
  if (all === undefined) {
    all = route.queueDatas
      .filter((q) => PermName.isWriteable(q.perm) && q.writeQueueNums > 0)
      .flatMap((qd) =>
        Array.from({ length: qd.writeQueueNums }, (_, queueId) => ({ brokerName: qd.brokerName, queueId })),
      );
    writableQueuesOf.set(route, all);
  }
  return all;
}

/** A send checked and encoded, before its append: what `prepare` answers. */
interface Prepared {
  records: MessageRecord[];
  batch: Uint8Array;
  queue: QueueRef;
  dueAts?: number[];
  topicCreated?: true;
}

export class SendService {
  #roundRobin = Math.floor(Math.random() * 1024);
  readonly #now: () => number;

  constructor(
    private readonly routes: RouteCache,
    private readonly topics: TopicService,
    private readonly queueLog: QueueLog,
    private readonly options: SendServiceOptions,
  ) {
    this.#now = options.now ?? Date.now;
  }

  async send(req: SendRequest): Promise<SendResponse> {
    const { records, batch, queue, dueAts, topicCreated } = await this.prepare(req, (r) => r);
    if (dueAts !== undefined && this.options.delays) {
      const scheduled = await this.options.delays.schedule(queue, records, dueAts);
      return topicCreated ? { ...scheduled, topicCreated } : scheduled;
    }
    const { queueOffset, storeTimestamp } = await this.queueLog.appendEncoded(
      queue,
      batch,
      records.length,
      indexedMessages(records),
    );
    const msgIds = records.map((r) => r.properties[MessageConst.UNIQ_KEY] as string);
    const sent: SendResponse = { sendStatus: "SEND_OK", messageQueue: queue, queueOffset, msgIds, storeTimestamp };
    if (topicCreated) sent.topicCreated = topicCreated;
    return sent;
  }

  /**
   * Every check of a send, without the append: the messages as records (`finish` may add properties, as a
   * half message's), encoded and within the batch limit, and the queue they go to (auto-creating the topic).
   */
  async prepare(req: SendRequest, finish: (record: MessageRecord) => MessageRecord): Promise<Prepared> {
    // A user's send never writes a system topic (%RETRY%, %DLQ%, rmq_sys_...), whatever door it came through;
    // the broker writes those itself (send-back, dead letters), not through this path.
    validateSendTopic(req.topic);
    const records = this.#toRecords(req.messages).map(finish);
    const batch = encodeBatch(records);
    if (batch.byteLength > MAX_BATCH_BYTES) {
      throw tooLarge(`the batch is ${batch.byteLength} bytes encoded, over the limit of ${MAX_BATCH_BYTES}`);
    }
    const dueAts = this.#dueAts(records);
    const { route, created } = await this.#routeOrCreate(req.topic);
    // Optional fields set only when present, not spread in (V8 copies a spread through a generic path).
    const prepared: Prepared = { records, batch, queue: this.#pickQueue(req, route) };
    if (dueAts) prepared.dueAts = dueAts;
    if (created) prepared.topicCreated = true;
    return prepared;
  }

  /** When each message is due, if the batch is delayed; a batch is delayed as a whole or not at all. */
  #dueAts(records: MessageRecord[]): number[] | undefined {
    const delays = this.options.delays;
    const dueAts = records.map((r, i) => {
      if (delays) return delays.dueAt(r, i);
      if (r.properties[MessageConst.DELAY] !== undefined)
        throw illegal(`message ${i}: this broker has no delay levels`);
      return undefined;
    });
    const delayed = dueAts.filter((d) => d !== undefined).length;
    if (delayed === 0) return undefined;
    if (delayed < records.length) throw illegal("a batch's messages are all delayed or none is");
    return dueAts as number[];
  }

  #toRecords(messages: SendMessage[]): MessageRecord[] {
    if (messages.length === 0) throw illegal("a send holds at least one message");
    if (messages.length > MAX_BATCH_MESSAGES) throw illegal(`a batch holds at most ${MAX_BATCH_MESSAGES} messages`);
    const bornTimestamp = this.#now();
    const records = messages.map((m, i) => {
      if (m.body.byteLength === 0) throw illegal(`message ${i}: the message body length is zero`);
      if (m.body.byteLength > MAX_BODY_BYTES) {
        throw tooLarge(
          `message ${i}: the message body size ${m.body.byteLength} is over the limit of ${MAX_BODY_BYTES}`,
        );
      }
      const tags = m.tags ?? "";
      if (tags.includes("|") || tags.trim() !== tags || utf8Length(tags) > MAX_TAG_BYTES || hasControlCharacter(tags)) {
        throw illegal(
          `message ${i}: a tag has no '|', no control characters, no leading or trailing blanks and at most ${MAX_TAG_BYTES} bytes`,
        );
      }
      const keys = m.keys ?? [];
      for (const key of keys) {
        if (key.length === 0 || key.includes(MessageConst.KEY_SEPARATOR) || hasControlCharacter(key))
          throw illegal(`message ${i}: a key is non-empty and has no space and no control characters`);
      }
      const properties = { ...(m.properties ?? {}) };
      if (m.delayTimeLevel !== undefined && m.delayTimeLevel !== 0) {
        const given = properties[MessageConst.DELAY];
        if (given !== undefined && given !== String(m.delayTimeLevel)) {
          throw illegal(`message ${i}: delayTimeLevel ${m.delayTimeLevel} and property DELAY ${given} differ`);
        }
        properties[MessageConst.DELAY] = String(m.delayTimeLevel);
      }
      // Set by the broker: tags and keys have fields; the rest mark transactional, retried and stored messages.
      checkClientProperties(i, properties);
      // What the client sent counts (a UNIQ_KEY it chose included), not the id the broker adds.
      const propBytes = Object.entries(properties).reduce((n, [k, v]) => n + utf8Length(k) + utf8Length(v) + 2, 0);
      if (propBytes > MAX_PROPERTIES_BYTES)
        throw tooLarge(`message ${i}: properties are over ${MAX_PROPERTIES_BYTES} bytes`);
      properties[MessageConst.UNIQ_KEY] ??= this.options.newMessageId();
      if (Object.keys(properties).some((k) => k.length === 0)) throw illegal(`message ${i}: a property name is empty`);
      return { bornTimestamp, flag: m.flag ?? 0, tags, keys, properties, body: m.body, reconsumeTimes: 0 };
    });
    refuseDuplicateIds(records);
    return records;
  }

  async #route(topic: string): Promise<TopicRouteData> {
    return (await this.#routeOrCreate(topic)).route;
  }

  /** The topic's route; auto-created (`created`) when the topic did not exist and may be created. */
  async #routeOrCreate(topic: string): Promise<{ route: TopicRouteData; created: boolean }> {
    try {
      return { route: await this.routes.get(topic), created: false };
    } catch (err) {
      // The trace topic is created on its first record even without autoCreateTopic, as a RocketMQ broker
      // with traceTopicEnable creates RMQ_SYS_TRACE_TOPIC at start (docs/trace.md).
      const creatable = this.options.autoCreateTopic || topic === RMQ_SYS_TRACE_TOPIC;
      if (!(err instanceof NimbusError) || err.code !== ErrorCode.TOPIC_NOT_EXIST || !creatable) throw err;
      const route = await this.topics.autoCreate(
        topic,
        this.options.defaultQueueNums ?? DEFAULT_AUTO_CREATE_QUEUE_NUMS,
      );
      this.routes.set(topic, route);
      return { route, created: true };
    }
  }

  /**
   * The queue of a message group (RocketMQ 5's FIFO messages, as its proxy picks it): one writable queue
   * per group, by a hash of the group over the topic's writable queues, so the group's messages keep
   * their order in it while the route stays the same.
   */
  async queueOfGroup(topic: string, group: string): Promise<QueueRef> {
    const route = await this.#route(topic);
    const writable = route.queueDatas
      .filter((q) => PermName.isWriteable(q.perm) && q.writeQueueNums > 0)
      .sort((a, b) => (a.brokerName < b.brokerName ? -1 : a.brokerName > b.brokerName ? 1 : 0))
      .flatMap((qd) =>
        Array.from({ length: qd.writeQueueNums }, (_, queueId) => ({ brokerName: qd.brokerName, queueId })),
      );
    let hash = 0;
    for (let i = 0; i < group.length; i++) hash = (Math.imul(hash, 31) + group.charCodeAt(i)) | 0;
    const picked = writable[(hash >>> 0) % Math.max(1, writable.length)];
    if (!picked) throw new NimbusError(ErrorCode.NO_PERMISSION, `topic ${topic} has no writable queue`);
    return { topic, ...picked };
  }

  #pickQueue(req: SendRequest, route: TopicRouteData): QueueRef {
    if (req.brokerName === undefined) {
      if (req.queueId !== undefined) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "queueId needs brokerName");
      const all = writableQueues(route);
      const picked = all[this.#roundRobin++ % Math.max(1, all.length)];
      if (!picked) throw new NimbusError(ErrorCode.NO_PERMISSION, `topic ${req.topic} has no writable queue`);
      return { topic: req.topic, ...picked };
    }
    const qd = queueDataOn(route, req.topic, req.brokerName);
    if (!PermName.isWriteable(qd.perm)) {
      throw new NimbusError(
        ErrorCode.NO_PERMISSION,
        `the broker[${qd.brokerName}] sending message to topic[${req.topic}] is forbidden (perm ${PermName.perm2String(qd.perm)})`,
      );
    }
    const queueId = req.queueId ?? this.#roundRobin++ % qd.writeQueueNums;
    if (queueId >= qd.writeQueueNums) {
      throw new NimbusError(
        ErrorCode.PARAMETER_ILLEGAL,
        `queueId ${queueId} is not below writeQueueNums ${qd.writeQueueNums} of ${qd.brokerName}`,
      );
    }
    return { topic: req.topic, brokerName: qd.brokerName, queueId };
  }
}
