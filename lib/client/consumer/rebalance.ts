/**
 * @module RocketMQ's consumer rebalance (`RebalanceImpl.rebalanceByTopic` and
 * `updateProcessQueueTableInRebalance`). CLUSTERING: every consumer of a group sorts the topic's readable
 * queues (`MessageQueue.compare`) and the group's live consumer ids (string order), runs the same
 * allocation strategy and so takes a disjoint share without talking to the others. BROADCASTING: every
 * consumer takes every readable queue. Queues no longer assigned are stopped (their offset committed and
 * released first); new ones wait for their turn (the previous owner's release, see handover.ts) without
 * holding up the round, then start at the committed offset or per `consumeFromWhere`. A consumer missing
 * from its group's list (its heartbeat lapsed) releases everything until it is back.
 *
 * @example
 * const mine = allocateQueues(new AllocateMessageQueueAveragely(), "g", "c2", readableQueues("T", route), ids);
 */
import { ErrorCode, isNimbusError } from "../../core/errors.js";
import { MessageQueue } from "../../core/message-queue.js";
import { PermName } from "../../core/perm-name.js";
import type { TopicRouteData } from "../../protocol/index.js";
import type { AllocateMessageQueueStrategy } from "../allocate/index.js";
import type { NimbusApi } from "../transport/index.js";
import { QueueBounds, type StartOffset } from "./consume-from-where.js";
import type { MessageModel } from "./consumer-options.js";
import type { Turn } from "./handover.js";

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
  /** Resolves when a newly assigned queue may be read (its previous owner released it, or cannot); rejects on abort. */
  awaitTurn(mq: MessageQueue, signal: AbortSignal): Promise<Turn>;
  /** Where a newly assigned queue starts; throwing leaves it for the next round. */
  computePullFromWhere(mq: MessageQueue, bounds: QueueBounds): Promise<StartOffset>;
  /** A queue without a committed offset: claims it at `offset`; false when another consumer's claim won. */
  claim(mq: MessageQueue, offset: number): Promise<boolean>;
  /** Starts pulling a queue. */
  startQueue(mq: MessageQueue, start: StartOffset, turn: Turn): void;
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
  /** This consumer is not in its group's list: heartbeat again. */
  onMembershipLost(): void;
  onError(err: unknown, what: string): void;
}

/** A queue assigned and waiting for its turn. */
interface Pending {
  abort: AbortController;
  task: Promise<void>;
}

/** The rebalance of one consumer: the assigned queues, and rounds that never overlap. */
export class RebalanceImpl {
  readonly #assigned = new Map<string, MessageQueue>();
  readonly #pending = new Map<string, Pending>();
  /** The readable queues of each topic, as of the last round. */
  readonly #mqAll = new Map<string, MessageQueue[]>();
  #liveIds: string[] = [];
  #current: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #lastIds = "";
  #roundBalanced = true;
  /** Queues of the last round that failed to start (after it ended: starts run apart from the round). */
  #failedStarts = 0;
  /** Completed rounds, for tests and metrics. */
  rounds = 0;

  constructor(private readonly config: RebalanceConfig) {}

  assignedQueues(): MessageQueue[] {
    return [...this.#assigned.values()].sort(MessageQueue.compare);
  }

  /** True when `ids` differ from the consumer list the last round allocated with. */
  membershipChanged(ids: readonly string[]): boolean {
    this.#liveIds = sortConsumerIds(ids);
    return this.#liveIds.join("\n") !== this.#lastIds;
  }

  /** The group's live consumers as last read (by a round or a membership poll). */
  get liveIds(): readonly string[] {
    return this.#liveIds;
  }

  /** False after a round in which some step failed; the consumer then rebalances again soon. */
  get balanced(): boolean {
    return this.#roundBalanced && this.#failedStarts === 0;
  }

  /** Resolves when every assigned queue has started or failed to (tests; a shutdown aborts the waits instead). */
  async whenStarted(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending.values()].map((p) => p.task));
  }

  /**
   * Who gets `mq` next in this consumer's view of the group (without itself when `leaving`): the
   * successor a release names. Undefined when unknown (broadcasting, no queues, nobody left).
   */
  successorOf(mq: MessageQueue, leaving = false): string | undefined {
    const { strategy, consumerGroup, clientId, messageModel } = this.config;
    const mqAll = this.#mqAll.get(mq.topic);
    if (messageModel !== "CLUSTERING" || mqAll === undefined) return undefined;
    const cids = this.#liveIds.filter((id) => !(leaving && id === clientId));
    return cids.find((cid) => allocateQueues(strategy, consumerGroup, cid, mqAll, cids).some((q) => q.equals(mq)));
  }

  /** Assigned queues still waiting for their previous owner. */
  get waiting(): number {
    return this.#pending.size;
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

  /** No more rounds; waits for the running one and ends the waits. The queues stay assigned until `releaseAll`. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#current;
    const pending = [...this.#pending.values()];
    for (const p of pending) p.abort.abort();
    await Promise.all(pending.map((p) => p.task));
  }

  /**
   * Forgets a started queue its consumer dropped without a release (an orderly consumer that lost its
   * lock): the next round, which the membership poll runs soon, assigns and starts it anew.
   */
  forget(mq: MessageQueue): void {
    this.#assigned.delete(mq.key());
    this.#roundBalanced = false;
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
        this.#liveIds = cidAll;
        if (cidAll.length > 0 && !cidAll.includes(this.config.clientId)) this.config.onMembershipLost();
      } catch (err) {
        onError(err, `rebalance of ${consumerGroup}: reading the consumer list failed`);
        this.#roundBalanced = false;
        return;
      }
    }
    this.#failedStarts = 0;
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
    this.#roundBalanced = balanced;
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
    this.#mqAll.set(topic, mqAll);
    if (messageModel === "BROADCASTING") return this.#updateTopicQueues(topic, mqAll, bounds);
    // The list is empty (our own heartbeat not visible yet): keep what we have until the next round.
    if (cidAll.length === 0) return false;
    // We are not in it (our heartbeat lapsed): the others may hold our queues now, so hand them over.
    if (!cidAll.includes(clientId)) {
      await this.#updateTopicQueues(topic, [], bounds);
      return false;
    }
    return this.#updateTopicQueues(topic, allocateQueues(strategy, consumerGroup, clientId, mqAll, cidAll), bounds);
  }

  /** RocketMQ's updateProcessQueueTableInRebalance: stop what left, start what came. */
  async #updateTopicQueues(topic: string, mqSet: MessageQueue[], bounds: QueueBounds): Promise<boolean> {
    const wanted = new Set(mqSet.map((mq) => mq.key()));
    const leaving = [...this.#assigned.values()].filter((mq) => mq.topic === topic && !wanted.has(mq.key()));
    await this.#stopQueues(leaving);
    for (const mq of mqSet) {
      if (this.#stopped) break;
      if (!this.#assigned.has(mq.key())) this.#begin(mq, bounds);
    }
    return true;
  }

  /** Assigns `mq` and starts it once it is its turn, apart from the round (a wait must not delay other moves). */
  #begin(mq: MessageQueue, bounds: QueueBounds): void {
    const { hooks, onError } = this.config;
    const key = mq.key();
    const abort = new AbortController();
    this.#assigned.set(key, mq);
    const task = (async () => {
      try {
        for (;;) {
          const turn = await hooks.awaitTurn(mq, abort.signal);
          const start = await hooks.computePullFromWhere(mq, bounds);
          if (abort.signal.aborted) return;
          // A new queue goes to the first claim; a consumer whose claim lost waits for the winner's release.
          if (!start.fromStore && !(await hooks.claim(mq, start.offset))) continue;
          if (abort.signal.aborted) return;
          this.#pending.delete(key);
          hooks.startQueue(mq, start, turn);
          return;
        }
      } catch (err) {
        if (abort.signal.aborted) return;
        this.#pending.delete(key);
        this.#assigned.delete(key);
        // Left for the next round (the membership poll retries an unbalanced one soon).
        this.#failedStarts++;
        onError(err, `cannot start ${key}`);
      }
    })();
    this.#pending.set(key, { abort, task });
  }

  async #stopQueues(mqs: MessageQueue[]): Promise<void> {
    for (const mq of mqs) this.#assigned.delete(mq.key());
    await Promise.all(
      mqs.map(async (mq) => {
        const pending = this.#pending.get(mq.key());
        if (pending !== undefined) {
          // Never started here: nothing to commit or release.
          this.#pending.delete(mq.key());
          pending.abort.abort();
          return pending.task;
        }
        return this.config.hooks
          .stopQueue(mq)
          .catch((err: unknown) => this.config.onError(err, `stopping ${mq.key()}`));
      }),
    );
  }
}
