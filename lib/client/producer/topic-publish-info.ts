/**
 * @module RocketMQ's `TopicPublishInfo`: the queues a producer may write to for one topic, built from a
 * route as `MQClientInstance.topicRouteData2TopicPublishInfo` builds it, and the round-robin pick that
 * steers a retry away from the broker that just failed (`selectOneMessageQueue(lastBrokerName)`).
 */
import { MessageQueue } from "../../core/message-queue.js";
import { PermName } from "../../core/perm-name.js";
import { MASTER_ID } from "../../core/topology.js";
import type { TopicRouteData } from "../../protocol/index.js";

const INDEX_MASK = 0x7fffffff;

export interface PublishInfoOptions {
  /**
   * The round-robin counter's first value (the first pick takes the queue at `(startIndex + 1) % n`).
   * RocketMQ starts it at random so that producers started together do not all hit queue 0 first; tests
   * pass -1 to start at the first queue.
   */
  startIndex?: number;
}

/**
 * The writable queues of a topic in route order, their brokers' master addresses, and the
 * `sendWhichQueue` counter. Build one with `topicRouteData2TopicPublishInfo`.
 *
 * @example
 * const info = topicRouteData2TopicPublishInfo("TopicTest", await api.topicRoute("TopicTest"));
 * const mq = info.selectOneMessageQueue(); // the next queue, round robin
 * const retry = info.selectOneMessageQueue(mq?.brokerName); // another broker's queue when there is one
 */
export class TopicPublishInfo {
  readonly topic: string;
  /** The writable queues: brokers in route order (by name), queue ids 0 .. writeQueueNums-1 each. */
  readonly messageQueueList: readonly MessageQueue[];
  readonly topicRouteData: TopicRouteData;
  readonly #masters: ReadonlyMap<string, string>;
  #sendWhichQueue: number;

  constructor(topic: string, route: TopicRouteData, queues: MessageQueue[], options: PublishInfoOptions = {}) {
    this.topic = topic;
    this.topicRouteData = route;
    this.messageQueueList = queues;
    const masters = new Map<string, string>();
    for (const bd of route.brokerDatas) {
      const addr = bd.brokerAddrs[String(MASTER_ID)];
      if (addr !== undefined) masters.set(bd.brokerName, addr);
    }
    this.#masters = masters;
    this.#sendWhichQueue = options.startIndex ?? Math.floor(Math.random() * 1024);
  }

  /** True when there is a queue to send to (RocketMQ's `ok()`). */
  ok(): boolean {
    return this.messageQueueList.length > 0;
  }

  /** The master address of a broker of the route (RocketMQ's `findBrokerAddressInPublish`). */
  brokerAddr(brokerName: string): string | undefined {
    return this.#masters.get(brokerName);
  }

  /**
   * The next queue, round robin; with `lastBrokerName`, the next queue on another broker when one exists
   * (a retry leaves the broker that just failed), else the next queue whatever its broker.
   */
  selectOneMessageQueue(lastBrokerName?: string): MessageQueue | undefined {
    const n = this.messageQueueList.length;
    if (n === 0) return undefined;
    if (lastBrokerName !== undefined) {
      for (let i = 0; i < n; i++) {
        const mq = this.messageQueueList[this.#nextIndex() % n];
        if (mq !== undefined && mq.brokerName !== lastBrokerName) return mq;
      }
    }
    return this.messageQueueList[this.#nextIndex() % n];
  }

  /** RocketMQ's `ThreadLocalIndex.incrementAndGet`, kept non-negative. */
  #nextIndex(): number {
    this.#sendWhichQueue = (this.#sendWhichQueue + 1) & INDEX_MASK;
    return this.#sendWhichQueue;
  }
}

/**
 * The publish info of a route: for each QueueData, by broker name, that is writable and whose broker has
 * a master address (`brokerAddrs["0"]`), the queues 0 .. writeQueueNums-1. Read-only brokers, brokers
 * with slaves only and brokers missing from `brokerDatas` are skipped.
 *
 * @example
 * const info = topicRouteData2TopicPublishInfo("T", route);
 * info.messageQueueList.map(String); // broker-a's queues, then broker-b's
 */
export function topicRouteData2TopicPublishInfo(
  topic: string,
  route: TopicRouteData,
  options: PublishInfoOptions = {},
): TopicPublishInfo {
  const queues: MessageQueue[] = [];
  const queueDatas = [...route.queueDatas].sort((a, b) =>
    a.brokerName < b.brokerName ? -1 : a.brokerName > b.brokerName ? 1 : 0,
  );
  for (const qd of queueDatas) {
    if (!PermName.isWriteable(qd.perm)) continue;
    const broker = route.brokerDatas.find((bd) => bd.brokerName === qd.brokerName);
    if (broker?.brokerAddrs[String(MASTER_ID)] === undefined) continue;
    for (let queueId = 0; queueId < qd.writeQueueNums; queueId++) {
      queues.push(new MessageQueue(topic, qd.brokerName, queueId));
    }
  }
  return new TopicPublishInfo(topic, route, queues, options);
}
