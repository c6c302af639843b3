/**
 * @module A small `MQClientInstance`: the background work every client shares. It keeps the routes of
 * the topics a client uses (fetched on demand, re-polled every `pollNameServerInterval`), and sends the
 * client's heartbeat at start and every `heartbeatBrokerInterval`. Producers and consumers each own one.
 *
 * API: `start()` (first heartbeat, then the timers), `shutdown()` (stops the timers and waits for a poll
 * or heartbeat in flight), `updateTopicRouteInfo(topic, timeoutMs?)` (fetch now, deduplicated, and poll
 * the topic from then on), `route(topic)` (the last route fetched), `sendHeartbeat()`. Background
 * failures go to `onError` and never stop the timers; the timers are `unref()`ed.
 *
 * @example
 * const instance = new ClientInstance({
 *   api, clientId,
 *   heartbeatData: () => ({ consumerDataSet: [{ groupName: "orders", subscriptionDataSet: [] }] }),
 *   onRouteChange: (topic, route) => rebalance(topic, route),
 * });
 * await instance.start();
 * const route = await instance.updateTopicRouteInfo("TopicTest");
 * await instance.shutdown();
 */
import { ErrorCode, isNimbusError } from "../../core/errors.js";
import type { TopicRouteData } from "../../protocol/index.js";
import { Repeaters } from "../schedule.js";
import type { HeartbeatData, HeartbeatResponse, NimbusApi } from "../transport/index.js";
import { CLIENT_LANGUAGE, CLIENT_VERSION } from "../version.js";

export interface ClientInstanceOptions {
  api: NimbusApi;
  clientId: string;
  /** What this client reports in each heartbeat; the instance adds `clientId`. */
  heartbeatData: () => Omit<HeartbeatData, "clientId">;
  /** RocketMQ's pollNameServerInterval: how often the used topics' routes are fetched again. Default 30000 ms. */
  pollNameServerInterval?: number | undefined;
  /** RocketMQ's heartbeatBrokerInterval. Default 30000 ms. */
  heartbeatBrokerInterval?: number | undefined;
  /** Called when a topic's route arrives for the first time or differs from the last one. */
  onRouteChange?: (topic: string, route: TopicRouteData) => void;
  /** Gets every heartbeat's answer (a producer's check-backs). */
  onHeartbeatAnswer?: (answer: HeartbeatResponse) => void;
  /** Failures of background work (route polls, heartbeats). Ignored by default. */
  onError?: (err: unknown, during: "heartbeat" | "route") => void;
}

export class ClientInstance {
  readonly api: NimbusApi;
  readonly clientId: string;
  readonly #options: ClientInstanceOptions;
  readonly #routes = new Map<string, { route: TopicRouteData; canonical: string }>();
  readonly #watched = new Set<string>();
  readonly #fetching = new Map<string, Promise<TopicRouteData | undefined>>();
  readonly #repeaters = new Repeaters({ unref: true });
  #running = false;

  constructor(options: ClientInstanceOptions) {
    this.api = options.api;
    this.clientId = options.clientId;
    this.#options = options;
  }

  /** Sends the first heartbeat (a failure goes to `onError`, as RocketMQ only logs it) and starts the timers. */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    // Both jobs hand their own failures to `onError`, so the repeaters' error callback has nothing left to do.
    this.#repeaters.every(
      this.#options.pollNameServerInterval ?? 30_000,
      () => this.#pollRoutes(),
      () => {},
    );
    this.#repeaters.every(
      this.#options.heartbeatBrokerInterval ?? 30_000,
      () => this.#heartbeatQuietly(),
      () => {},
    );
    await this.#heartbeatQuietly();
  }

  /** Stops the timers and waits for background work in flight. */
  async shutdown(): Promise<void> {
    this.#running = false;
    await this.#repeaters.stop();
  }

  /** The last route fetched for the topic, if any. */
  route(topic: string): TopicRouteData | undefined {
    return this.#routes.get(topic)?.route;
  }

  /**
   * Fetches the topic's route now (one request for concurrent callers) and polls it from then on.
   * Resolves `undefined` when the name server has no route (TOPIC_NOT_EXIST); a route fetched before is
   * kept then, as RocketMQ keeps it. Other failures reject.
   */
  updateTopicRouteInfo(topic: string, timeoutMs?: number): Promise<TopicRouteData | undefined> {
    this.#watched.add(topic);
    const inFlight = this.#fetching.get(topic);
    if (inFlight) return inFlight;
    const fetching = this.#fetchRoute(topic, timeoutMs).finally(() => this.#fetching.delete(topic));
    this.#fetching.set(topic, fetching);
    return fetching;
  }

  /** Stops polling a topic and forgets its route. */
  forgetTopic(topic: string): void {
    this.#watched.delete(topic);
    this.#routes.delete(topic);
  }

  /** One heartbeat now; its answer (check-backs for a producer) goes to `onHeartbeatAnswer`. Rejects on failure. */
  async sendHeartbeat(): Promise<void> {
    const answer = await this.api.heartbeat({
      clientId: this.clientId,
      language: CLIENT_LANGUAGE,
      version: CLIENT_VERSION,
      ...this.#options.heartbeatData(),
    });
    this.#options.onHeartbeatAnswer?.(answer);
  }

  async #fetchRoute(topic: string, timeoutMs: number | undefined): Promise<TopicRouteData | undefined> {
    let route: TopicRouteData;
    try {
      route = await this.api.topicRoute(topic, { timeoutMs });
    } catch (err) {
      if (isNimbusError(err, ErrorCode.TOPIC_NOT_EXIST)) return undefined;
      throw err;
    }
    const canonical = canonicalRoute(route);
    if (this.#routes.get(topic)?.canonical !== canonical) {
      this.#routes.set(topic, { route, canonical });
      this.#options.onRouteChange?.(topic, route);
    }
    return route;
  }

  async #pollRoutes(): Promise<void> {
    for (const topic of this.#watched) {
      if (!this.#running) return;
      await this.updateTopicRouteInfo(topic).catch((err: unknown) => this.#options.onError?.(err, "route"));
    }
  }

  async #heartbeatQuietly(): Promise<void> {
    await this.sendHeartbeat().catch((err: unknown) => this.#options.onError?.(err, "heartbeat"));
  }
}

/** A route as a string that does not depend on the order of brokers or addresses. */
function canonicalRoute(route: TopicRouteData): string {
  const byName = (a: { brokerName: string }, b: { brokerName: string }) =>
    a.brokerName < b.brokerName ? -1 : a.brokerName > b.brokerName ? 1 : 0;
  return JSON.stringify({
    queueDatas: [...route.queueDatas].sort(byName),
    brokerDatas: [...route.brokerDatas]
      .sort(byName)
      .map((bd) => ({ ...bd, brokerAddrs: Object.entries(bd.brokerAddrs).sort(([a], [b]) => (a < b ? -1 : 1)) })),
  });
}
