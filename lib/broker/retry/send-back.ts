/**
 * @module Retries and dead letters, as RocketMQ's consumerSendMsgBack: a message a clustering consumer
 * failed is read from where it is stored (the client sends only its coordinates) and re-stored for the
 * group, keeping its msgId (UNIQ_KEY), body, tags, keys and properties and recording its origin
 * (`RETRY_TOPIC`: the original topic; `ORIGIN_MESSAGE_ID`). Below `maxReconsumeTimes` it goes to the
 * group's retry topic `%RETRY%<group>` (one queue per broker) through the timer store, due after delay
 * level 3 + reconsumeTimes, with reconsumeTimes + 1; after that, or asked with delay level -1, to the
 * group's dead-letter topic `%DLQ%<group>` (one queue, read and write as RocketMQ's), where nothing
 * consumes it by itself. Both topics are created on first use; the retry topic also when a clustering
 * consumer first heartbeats, so it can subscribe before the first failure.
 */
import { RETRY_BASE_DELAY_LEVEL, TIMER_PROPERTIES } from "../../core/delay-levels.js";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { MessageConst, type MessageRecord } from "../../core/message.js";
import { dlqTopic, isRetryTopic, retryTopic } from "../../core/names.js";
import { PermName } from "../../core/perm-name.js";
import { MASTER_ID } from "../../core/topology.js";
import { DEFAULT_MAX_RECONSUME_TIMES, type SendBackRequest, type SendBackResponse } from "../../protocol/index.js";
import type { NameServer, TopicService } from "../names/index.js";
import type { QueueLog, StoredMessage } from "../queue-log/index.js";
import type { DelayedDelivery } from "../timers/index.js";

export class SendBackService {
  /** Groups whose retry topic this process has made sure of. */
  readonly #retryTopicsReady = new Set<string>();

  constructor(
    private readonly queueLog: QueueLog,
    private readonly topics: TopicService,
    private readonly nameServer: NameServer,
    private readonly delays: DelayedDelivery,
    /** The topic's route (TOPIC_NOT_EXIST for an unknown topic). */
    private readonly route: (topic: string) => Promise<unknown>,
    /** The group's retryMaxTimes (its subscription group), for a send-back that names no maxReconsumeTimes. */
    private readonly retryMaxTimesOf: (group: string) => Promise<number> = async () => DEFAULT_MAX_RECONSUME_TIMES,
  ) {}

  /** Re-stores a failed message for its group: retry topic, or dead-letter queue. */
  async sendBack(req: SendBackRequest): Promise<SendBackResponse> {
    const delayLevel = req.delayLevel ?? 0;
    const levels = this.delays.levels.length;
    if (delayLevel > levels) {
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `delay level ${delayLevel} is out of range: 1 to ${levels}`);
    }
    const stored = await this.#read(req);
    const { queueOffset: _o, storeTimestamp: _s, ...record } = stored;
    const msgId = record.properties[MessageConst.UNIQ_KEY] ?? `${req.brokerName}-${req.queueId}-${req.queueOffset}`;
    // The consumer's own maxReconsumeTimes wins, as in RocketMQ's broker; else the group's retryMaxTimes.
    const maxReconsumeTimes = req.maxReconsumeTimes ?? (await this.retryMaxTimesOf(req.consumerGroup));
    const properties: Record<string, string> = { ...record.properties };
    // The first send-back records where the message came from; later ones (from the retry topic) keep it.
    if (properties[MessageConst.RETRY_TOPIC] === undefined && !isRetryTopic(req.topic)) {
      properties[MessageConst.RETRY_TOPIC] = req.topic;
    }
    properties[MessageConst.ORIGIN_MESSAGE_ID] ??= msgId;
    properties[MessageConst.UNIQ_KEY] = msgId;
    // Its own delay is spent: the retry's level is the broker's.
    for (const timer of TIMER_PROPERTIES) delete properties[timer];
    if (record.reconsumeTimes >= maxReconsumeTimes || delayLevel < 0) {
      return this.toDeadLetterQueue(req.consumerGroup, req.brokerName, { ...record, properties }, msgId);
    }
    // RocketMQ's 3 + reconsumeTimes, on the last level once past it (a deployment may have fewer levels).
    const level = delayLevel > 0 ? delayLevel : Math.min(RETRY_BASE_DELAY_LEVEL + record.reconsumeTimes, levels);
    const dueAt = this.delays.dueAfter(this.delays.levelDelay(level));
    const reconsumeTimes = record.reconsumeTimes + 1;
    const retried: MessageRecord = {
      ...record,
      reconsumeTimes,
      properties: {
        ...properties,
        [MessageConst.DELAY]: String(level),
        [MessageConst.RECONSUME_TIME]: String(reconsumeTimes),
        [MessageConst.MAX_RECONSUME_TIMES]: String(maxReconsumeTimes),
      },
    };
    this.delays.timers.checkSize(retried, 0);
    const queue = await this.#retryQueue(req.consumerGroup, req.brokerName);
    await this.delays.schedule(queue, [retried], [dueAt]);
    return { result: "RETRY", msgId, ...queue, deliverTimeMs: dueAt, reconsumeTimes };
  }

  /** Stores a message in the group's dead-letter queue on `brokerName` (created on first use). */
  async toDeadLetterQueue(
    group: string,
    brokerName: string,
    record: MessageRecord,
    msgId: string,
  ): Promise<SendBackResponse> {
    const queue = await this.topics.ensureSystemQueue(dlqTopic(group), brokerName);
    const { queueOffset } = await this.queueLog.append(queue, [record]);
    return { result: "DLQ", msgId, ...queue, queueOffset, reconsumeTimes: record.reconsumeTimes };
  }

  /**
   * Makes sure `%RETRY%<group>` has its queue on every live writable master (once per process and group):
   * what a clustering consumer subscribes to.
   */
  async ensureRetryTopic(group: string): Promise<void> {
    if (this.#retryTopicsReady.has(group)) return;
    const masters = (await this.nameServer.liveBrokers()).filter(
      (b) => b.brokerId === MASTER_ID && PermName.isWriteable(b.perm),
    );
    await Promise.all(masters.map((b) => this.topics.ensureSystemQueue(retryTopic(group), b.brokerName)));
    if (masters.length > 0) this.#retryTopicsReady.add(group);
  }

  async #retryQueue(group: string, brokerName: string) {
    return this.topics.ensureSystemQueue(retryTopic(group), brokerName);
  }

  async #read(req: SendBackRequest): Promise<StoredMessage> {
    await this.route(req.topic);
    const queue = { topic: req.topic, brokerName: req.brokerName, queueId: req.queueId };
    const page = await this.queueLog.read(queue, req.queueOffset, { maxMessages: 1 });
    const message = page.messages[0];
    if (message?.queueOffset !== req.queueOffset) {
      throw new NimbusError(
        ErrorCode.QUERY_NOT_FOUND,
        `no message at offset ${req.queueOffset} of ${req.topic} ${req.brokerName} queue ${req.queueId}`,
      );
    }
    return message;
  }
}
