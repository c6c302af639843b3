/**
 * @module RocketMQ's consumer rebalance (`RebalanceImpl.rebalanceByTopic` and
 * `updateProcessQueueTableInRebalance`). CLUSTERING: every consumer of a group sorts the topic's readable
 * queues (`MessageQueue.compare`) and the group's live consumer ids (string order), runs the same
 * allocation strategy and so takes a disjoint share without talking to the others. BROADCASTING: every
 * consumer takes every readable queue. Queues no longer assigned are stopped (their offset committed
 * first); new ones start at the committed offset or per `consumeFromWhere`.
 *
 * @example
 * const mine = allocateQueues(new AllocateMessageQueueAveragely(), "g", "c2", readableQueues("T", route), ids);
 */
import { ErrorCode, isNimbusError } from "../core/errors.js";
import { MessageQueue } from "../core/message-queue.js";
import { PermName } from "../core/perm-name.js";
import type { TopicRouteData } from "../protocol/index.js";
import type { AllocateMessageQueueStrategy } from "./allocate/strategy.js";
import type { NimbusApi } from "./api-client.js";
import { QueueBounds, type StartOffset } from "./consume-from-where.js";
import type { MessageModel } from "./consumer-options.js";

/**
 * The queues a consumer may pull (RocketMQ's `topicRouteData2TopicSubscribeInfo`): ids 0..readQueueNums-1
 * on every broker whose QueueData is readable, sorted.
 *
 * @example
 * readableQueues("T", await api.topicRoute("T")); // [T#broker-a#0, ..., T#broker-b#3]
 */
export function readableQueues(topic: string, route: TopicRouteData): MessageQueue[] {
  const queues: MessageQueue[] = [];
  for (const qd of route.queueDatas) {
    if (!PermName.isReadable(qd.perm)) continue;
    for (let id = 0; id < qd.readQueueNums; id++) queues.push(new MessageQueue(topic, qd.brokerName, id));
  }
  return queues.sort(MessageQueue.compare);
}

/** Live consumer ids in the order every client sorts them (Java's String order). */
export function sortConsumerIds(ids: readonly string[]): string[] {
  return [...new Set(ids)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * This consumer's share: sorts copies of `mqAll` and `cidAll`, then asks the strategy. Nothing when there
 * are no queues, or when `clientId` is not (yet) among the live consumers.
 *
 * @example
 * allocateQueues(strategy, "g", "c1", eightQueues, ["c3", "c1", "c2"]); // the first 3 queues
 */
export function allocateQueues(
  strategy: AllocateMessageQueueStrategy,
  consumerGroup: string,
  clientId: string,
  mqAll: readonly MessageQueue[],
  cidAll: readonly string[],
): MessageQueue[] {
  if (mqAll.length === 0 || cidAll.length === 0) return [];
  const queues = [...mqAll].sort(MessageQueue.compare);
  return strategy.allocate(consumerGroup, clientId, queues, sortConsumerIds(cidAll));
}

/** What the consumer does when the rebalance hands it a queue or takes one away. */
export interface RebalanceHooks {
  /** Where a newly assigned queue starts; throwing leaves it for the next round. */
  computePullFromWhere(mq: MessageQueue, bounds: QueueBounds): Promise<StartOffset>;
  /** Starts pulling a queue. */
  startQueue(mq: MessageQueue, start: StartOffset): void;
  /** Stops a queue and commits its offset. */
  stopQueue(mq: MessageQueue): Promise<void>;
}

export interface RebalanceConfig {
  api: NimbusApi;
  consumerGroup: string;
  clientId: string;
  messageModel: MessageModel;
  strategy: AllocateMessageQueueStrategy;
  /** The subscribed topics, read at each round. */
  topics(): string[];
  hooks: RebalanceHooks;
  onError(err: unknown, what: string): void;
}

/** The rebalance of one consumer: the assigned queues, and rounds that never overlap. */
export class RebalanceImpl {
  readonly #assigned = new Map<string, MessageQueue>();
  #current: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #lastIds = "";
  /** False after a round in which some step failed; the consumer then rebalances again soon. */
  balanced = true;
  /** Completed rounds, for tests and metrics. */
  rounds = 0;

  constructor(private readonly config: RebalanceConfig) {}

  assignedQueues(): MessageQueue[] {
    return [...this.#assigned.values()].sort(MessageQueue.compare);
  }

  /** True when `ids` differ from the consumer list the last round allocated with. */
  membershipChanged(ids: readonly string[]): boolean {
    return sortConsumerIds(ids).join("\n") !== this.#lastIds;
  }

  /** Runs a round; a call during a round makes that round run once more and resolves after it. */
  doRebalance(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#current !== undefined) {
      this.#again = true;
      return this.#current;
    }
    const run = (async () => {
      try {
        do {
          this.#again = false;
          await this.#round();
        } while (this.#again && !this.#stopped);
      } finally {
        this.#current = undefined;
      }
    })();
    this.#current = run;
    return run;
  }

  /** No more rounds; waits for the running one. The queues stay assigned until `releaseAll`. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#current;
  }

  /** Forgets every assigned queue and answers them (the consumer stops them itself at shutdown). */
  releaseAll(): MessageQueue[] {
    const all = this.assignedQueues();
    this.#assigned.clear();
    return all;
  }

  async #round(): Promise<void> {
    const { api, consumerGroup, messageModel, onError } = this.config;
    let balanced = true;
    const bounds = new QueueBounds(api);
    let cidAll: string[] = [];
    if (messageModel === "CLUSTERING") {
      try {
        cidAll = sortConsumerIds(await api.consumerIds(consumerGroup));
        this.#lastIds = cidAll.join("\n");
      } catch (err) {
        onError(err, `rebalance of ${consumerGroup}: reading the consumer list failed`);
        this.balanced = false;
        return;
      }
    }
    const topics = new Set(this.config.topics());
    // Queues of topics no longer subscribed (RocketMQ's truncateMessageQueueNotMyTopic).
    await this.#stopQueues([...this.#assigned.values()].filter((mq) => !topics.has(mq.topic)));
    for (const topic of topics) {
      if (this.#stopped) return;
      try {
        balanced = (await this.#rebalanceByTopic(topic, cidAll, bounds)) && balanced;
      } catch (err) {
        balanced = false;
        onError(err, `rebalance of ${consumerGroup} on ${topic} failed`);
      }
    }
    this.balanced = balanced;
    this.rounds++;
  }

  async #rebalanceByTopic(topic: string, cidAll: string[], bounds: QueueBounds): Promise<boolean> {
    const { api, consumerGroup, clientId, messageModel, strategy } = this.config;
    let mqAll: MessageQueue[];
    try {
      mqAll = readableQueues(topic, await api.topicRoute(topic));
    } catch (err) {
      // A deleted (or not yet created) topic has no queues to read.
      if (!isNimbusError(err, ErrorCode.TOPIC_NOT_EXIST)) throw err;
      mqAll = [];
    }
    if (messageModel === "BROADCASTING") return this.#updateTopicQueues(topic, mqAll, bounds);
    // Our own heartbeat is not visible yet (or the list is empty): keep what we have until the next round.
    if (cidAll.length === 0) return false;
    return this.#updateTopicQueues(topic, allocateQueues(strategy, consumerGroup, clientId, mqAll, cidAll), bounds);
  }

  /** RocketMQ's updateProcessQueueTableInRebalance: stop what left, start what came. */
  async #updateTopicQueues(topic: string, mqSet: MessageQueue[], bounds: QueueBounds): Promise<boolean> {
    const wanted = new Set(mqSet.map((mq) => mq.key()));
    const leaving = [...this.#assigned.values()].filter((mq) => mq.topic === topic && !wanted.has(mq.key()));
    await this.#stopQueues(leaving);
    const coming = mqSet.filter((mq) => !this.#assigned.has(mq.key()));
    const starts = await Promise.allSettled(coming.map((mq) => this.config.hooks.computePullFromWhere(mq, bounds)));
    let ok = true;
    for (const [i, mq] of coming.entries()) {
      const start = starts[i];
      if (this.#stopped) break;
      if (start?.status !== "fulfilled") {
        ok = false;
        this.config.onError(start?.reason, `cannot compute where to start ${mq.key()}`);
        continue;
      }
      this.#assigned.set(mq.key(), mq);
      this.config.hooks.startQueue(mq, start.value);
    }
    return ok;
  }

  async #stopQueues(mqs: MessageQueue[]): Promise<void> {
    for (const mq of mqs) this.#assigned.delete(mq.key());
    await Promise.all(
      mqs.map((mq) =>
        this.config.hooks.stopQueue(mq).catch((err: unknown) => this.config.onError(err, `stopping ${mq.key()}`)),
      ),
    );
  }
}
