/**
 * @module A short-lived cache of topic routes for the data plane, so a send or pull does not cost two
 * route queries. Routes change rarely; an API instance sees another instance's change within `ttlMs`
 * (RocketMQ clients refresh routes every 30 s). Changes made through this instance apply at once.
 */
import { ErrorCode, isNimbusError, NimbusError } from "../../core/errors.js";
import type { NameServer, TopicRouteData } from "./name-server.js";

/** A queue as a lock names it: its broker and its id. */
interface QueueOnBroker {
  brokerName: string;
  queueId: number;
}

/** Whether the route has the queue: RocketMQ keeps max(read, write) queues on a broker. */
function hasQueue(route: TopicRouteData, q: QueueOnBroker): boolean {
  const qd = route.queueDatas.find((d) => d.brokerName === q.brokerName);
  return qd !== undefined && q.queueId < Math.max(qd.readQueueNums, qd.writeQueueNums);
}

export class RouteCache {
  readonly #entries = new Map<string, { route: TopicRouteData; at: number }>();

  constructor(
    private readonly nameServer: NameServer,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async get(topic: string): Promise<TopicRouteData> {
    const hit = this.#entries.get(topic);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.route;
    let route: TopicRouteData;
    try {
      route = await this.nameServer.topicRoute(topic);
    } catch (err) {
      throw await this.#withSuggestion(topic, err);
    }
    this.#entries.set(topic, { route, at: this.now() });
    return route;
  }

  /**
   * Throws unless `topic` has every queue of `queues` (TOPIC_NOT_EXIST for an unknown topic, PARAMETER_ILLEGAL for a
   * queue it lacks): what a queue lock names must exist, or the lock would live on.
   */
  async checkQueues(topic: string, queues: readonly QueueOnBroker[]): Promise<void> {
    const route = await this.get(topic);
    const missing = queues.find((q) => !hasQueue(route, q));
    if (missing !== undefined) {
      throw new NimbusError(
        ErrorCode.PARAMETER_ILLEGAL,
        `topic ${topic} has no queue ${missing.queueId} on broker ${missing.brokerName}`,
      );
    }
  }

  /** The queues of `queues` that `topic` has: none when the topic does not exist. */
  async queuesOf<Q extends QueueOnBroker>(topic: string, queues: readonly Q[]): Promise<Q[]> {
    let route: TopicRouteData;
    try {
      route = await this.get(topic);
    } catch (err) {
      if (isNimbusError(err, ErrorCode.TOPIC_NOT_EXIST)) return [];
      throw err;
    }
    return queues.filter((q) => hasQueue(route, q));
  }

  /** Names the existing topic closest to a missing one (topic-suggestions.ts), when `suggest` is set. */
  suggest: ((topic: string) => Promise<string | undefined>) | undefined;

  async #withSuggestion(topic: string, err: unknown): Promise<unknown> {
    if (this.suggest === undefined || !isNimbusError(err, ErrorCode.TOPIC_NOT_EXIST)) return err;
    const closest = await this.suggest(topic);
    return closest === undefined ? err : new NimbusError(err.code, `${err.message}; did you mean ${closest}?`);
  }

  set(topic: string, route: TopicRouteData): void {
    this.#entries.set(topic, { route, at: this.now() });
  }

  /** Told of every invalidation made here (a change through this process), to tell the deployment's other processes. */
  onInvalidate: ((topic: string | undefined) => void) | undefined;

  invalidate(topic?: string): void {
    this.invalidateFromElsewhere(topic);
    this.onInvalidate?.(topic);
  }

  /** Another process changed the topic's route (or every route): the next use reads it again. */
  invalidateFromElsewhere(topic?: string): void {
    if (topic === undefined) this.#entries.clear();
    else this.#entries.delete(topic);
  }
}
