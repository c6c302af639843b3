/**
 * @module What both consumers run besides their queues (RocketMQ's `MQClientInstance` services for one
 * consumer): the client id, the offset store (remote for CLUSTERING, a local file for BROADCASTING), the
 * heartbeat, the rebalance every `rebalanceInterval`, the membership poll that rebalances as soon as the
 * group's consumer list changes (a RocketMQ broker would push that; HTTP cannot), the queue handover
 * (CLUSTERING: `handover.ts`) and the periodic commit.
 *
 * @example
 * const runtime = new ConsumerRuntime(options, resolved, { consumeType: "CONSUME_PASSIVELY", ...hooks });
 * await runtime.start(true);
 * await runtime.stop();
 */
import os from "node:os";
import path from "node:path";
import type { MessageQueue } from "../core/message-queue.js";
import { type ConsumerConnection, type ConsumerRunningInfo, NimbusApi, type OffsetReset } from "./api-client.js";
import { buildMQClientId, DEFAULT_INSTANCE_NAME, localIPv4, resolveInstanceName } from "./client-id.js";
import { computePullFromWhere, type QueueBounds, type StartOffset } from "./consume-from-where.js";
import type { ConsumerBaseOptions, ResolvedBaseOptions } from "./consumer-options.js";
import { Handover, type Turn } from "./handover.js";
import { LocalFileOffsetStore, type OffsetStore, RemoteBrokerOffsetStore } from "./offset-store.js";
import { RebalanceImpl } from "./rebalance.js";
import { Repeaters } from "./schedule.js";

/** RocketMQ's default is `~/.rocketmq_offsets`. */
export const DEFAULT_OFFSET_STORE_DIR = path.join(os.homedir(), ".nimbus_offsets");

export interface RuntimeHooks {
  consumeType: "CONSUME_ACTIVELY" | "CONSUME_PASSIVELY";
  /** The subscriptions to announce and rebalance: topic to tag expression. */
  subscriptions(): ReadonlyMap<string, string>;
  startQueue(mq: MessageQueue, start: StartOffset, turn: Turn): void;
  stopQueue(mq: MessageQueue): Promise<void>;
  /** The periodic commit. */
  persist(): Promise<void>;
  /** Orderly consumers: takes the broker lock of a queue about to start (after its handover turn). */
  lock?(mq: MessageQueue, signal: AbortSignal): Promise<void>;
  /** What the heartbeat reports about the consumer's work (`consumerStatus`). */
  runningInfo?(): Promise<ConsumerRunningInfo>;
  /** An offset reset of a subscribed topic made while this consumer runs: move its queues there. */
  applyOffsetReset?(reset: OffsetReset): Promise<void>;
}

export class ConsumerRuntime {
  readonly api: NimbusApi;
  readonly clientId: string;
  readonly store: OffsetStore;
  readonly rebalance: RebalanceImpl;
  /** The queue handover; undefined for BROADCASTING (every consumer reads every queue). */
  readonly handover: Handover | undefined;
  readonly #repeaters = new Repeaters();
  #groupManaged = false;
  /** The latest offset reset seen per topic (resetAt); undefined until the first membership read. */
  #knownResets: Map<string, number> | undefined;
  /** The subscription warning last given, so it is given once per change. */
  #subscriptionWarning = "";

  constructor(
    options: ConsumerBaseOptions,
    readonly resolved: ResolvedBaseOptions,
    private readonly hooks: RuntimeHooks,
  ) {
    const { endpoints, timeoutMs, headers, iam, credentials } = options;
    this.api = new NimbusApi({
      endpoints,
      timeoutMs,
      ...(headers ? { headers } : {}),
      ...(iam ? { iam } : {}),
      ...(credentials ? { credentials } : {}),
    });
    const instanceName = resolveInstanceName(options.instanceName ?? DEFAULT_INSTANCE_NAME, {
      role: "consumer",
      messageModel: resolved.messageModel,
    });
    this.clientId = buildMQClientId({
      clientIP: options.clientIP ?? localIPv4(),
      instanceName,
      unitName: options.unitName,
    });
    this.store =
      resolved.messageModel === "BROADCASTING"
        ? new LocalFileOffsetStore(
            options.offsetStoreDir ?? DEFAULT_OFFSET_STORE_DIR,
            this.clientId,
            resolved.consumerGroup,
          )
        : new RemoteBrokerOffsetStore(this.api, resolved.consumerGroup, this.clientId);
    this.handover =
      resolved.messageModel === "BROADCASTING"
        ? undefined
        : new Handover({
            api: this.api,
            group: resolved.consumerGroup,
            clientId: this.clientId,
            graceMillis: resolved.handoverGraceMillis,
            // Waiting is cheap (one read per topic), and the sooner we see the release the less we idle.
            pollMillis: Math.min(resolved.membershipPollInterval, 1000),
            liveIds: () => this.rebalance.liveIds,
          });
    this.rebalance = new RebalanceImpl({
      api: this.api,
      consumerGroup: resolved.consumerGroup,
      clientId: this.clientId,
      messageModel: resolved.messageModel,
      strategy: resolved.strategy,
      topics: () => [...hooks.subscriptions().keys()],
      hooks: {
        awaitTurn: async (mq, signal) => {
          const turn: Turn = this.handover ? await this.handover.awaitTurn(mq, signal) : { kind: "clean" };
          await hooks.lock?.(mq, signal);
          return turn;
        },
        computePullFromWhere: (mq, bounds) => this.computePullFromWhere(mq, bounds),
        claim: async (mq, offset) => {
          if (this.handover === undefined) return true;
          const row = { brokerName: mq.brokerName, queueId: mq.queueId, offset };
          return (await this.api.claimQueues(resolved.consumerGroup, mq.topic, this.clientId, [row])).length > 0;
        },
        startQueue: (mq, start, turn) => hooks.startQueue(mq, start, turn),
        stopQueue: (mq) => hooks.stopQueue(mq),
      },
      onMembershipLost: () => {
        void this.heartbeat().catch((err: unknown) => resolved.onError(err, "heartbeat after losing membership"));
      },
      onError: resolved.onError,
    });
  }

  computePullFromWhere(mq: MessageQueue, bounds: QueueBounds): Promise<StartOffset> {
    const { consumerGroup, consumeFromWhere, consumeTimestamp } = this.resolved;
    return computePullFromWhere(mq, {
      api: this.api,
      consumerGroup,
      store: this.store,
      bounds,
      consumeFromWhere,
      consumeTimestamp,
    });
  }

  /**
   * Loads the offset store and starts the periodic commit. `groupManaged` (a subscription, not a manual
   * assignment) also heartbeats, rebalances at once and then on its timers.
   */
  async start(groupManaged: boolean): Promise<void> {
    const r = this.resolved;
    const report = (what: string) => (err: unknown) => r.onError(err, what);
    await this.store.load();
    this.#repeaters.every(
      r.persistConsumerOffsetInterval,
      async () => {
        await this.handover?.checkWatches();
        await this.hooks.persist();
      },
      report("committing offsets"),
    );
    if (!groupManaged) return;
    this.#groupManaged = true;
    // A failed first heartbeat is not fatal (RocketMQ starts without a broker too): the timers retry.
    await this.heartbeat().catch(report("heartbeat"));
    // Resets made before this start are in the committed offsets already; later ones are applied.
    if (r.messageModel === "CLUSTERING" && this.hooks.applyOffsetReset !== undefined) {
      await this.api
        .consumerConnection(r.consumerGroup)
        .then((c) => this.#learnResets(c))
        .catch(report("reading the group's offset resets"));
    }
    this.#repeaters.every(r.heartbeatInterval, () => this.heartbeat(), report("heartbeat"));
    this.#repeaters.every(r.rebalanceInterval, () => this.rebalance.doRebalance(), report("rebalance"));
    this.#repeaters.every(r.membershipPollInterval, () => this.#pollMembership(), report("reading the consumer list"));
    await this.rebalance.doRebalance();
  }

  /** After `subscribe` on a running consumer: announce the new subscription and rebalance at once. */
  subscriptionChanged(topic: string): void {
    void this.heartbeat()
      .then(() => this.rebalance.doRebalance())
      .catch((err: unknown) => this.resolved.onError(err, `subscribing to ${topic}`));
  }

  /** Sends this consumer's heartbeat (its group, model and subscriptions). */
  async heartbeat(): Promise<void> {
    const r = this.resolved;
    const runningInfo = await this.hooks.runningInfo?.();
    await this.api.heartbeat({
      clientId: this.clientId,
      consumerDataSet: [
        {
          groupName: r.consumerGroup,
          consumeType: this.hooks.consumeType,
          messageModel: r.messageModel,
          consumeFromWhere: r.consumeFromWhere,
          subscriptionDataSet: [...this.hooks.subscriptions()].map(([topic, subString]) => ({ topic, subString })),
          ...(runningInfo === undefined ? {} : { runningInfo }),
        },
      ],
    });
  }

  /** CLUSTERING: rebalance when the live consumer list changed; both models: retry an unbalanced round. */
  async #pollMembership(): Promise<void> {
    if (this.resolved.messageModel === "CLUSTERING") {
      const connection = await this.api.consumerConnection(this.resolved.consumerGroup);
      this.#checkSubscription(connection);
      await this.#learnResets(connection);
      if (this.rebalance.membershipChanged(connection.consumerIdList)) return this.rebalance.doRebalance();
    }
    if (!this.rebalance.balanced) await this.rebalance.doRebalance();
  }

  /** Logs a warning when the broker flags this consumer's subscription as not its group's (once per change). */
  #checkSubscription(connection: ConsumerConnection): void {
    const me = connection.consumers.find((c) => c.clientId === this.clientId);
    const warning =
      me === undefined || me.subscriptionConsistent
        ? ""
        : `warning: the subscription of ${this.clientId} (${JSON.stringify(me.subscriptionDataSet)}) differs from its group ${this.resolved.consumerGroup}'s; RocketMQ requires every member to subscribe the same topics and tags`;
    if (warning !== "" && warning !== this.#subscriptionWarning) {
      this.resolved.onError(new Error("inconsistent subscription"), warning);
    }
    this.#subscriptionWarning = warning;
  }

  /** Applies the offset resets newer than the ones seen (none at the first read: those predate the queues). */
  async #learnResets(connection: ConsumerConnection): Promise<void> {
    const apply = this.hooks.applyOffsetReset;
    if (apply === undefined) return;
    const first = this.#knownResets === undefined;
    const known = this.#knownResets ?? new Map<string, number>();
    this.#knownResets = known;
    for (const reset of connection.offsetResets) {
      if ((known.get(reset.topic) ?? -1) >= reset.resetAt) continue;
      known.set(reset.topic, reset.resetAt);
      if (!first && this.hooks.subscriptions().has(reset.topic)) await apply(reset);
    }
  }

  /** Stops every timer and the rebalance (waiting for running rounds); the queues are the consumer's to stop. */
  async stopBackground(): Promise<void> {
    await this.#repeaters.stop();
    await this.rebalance.stop();
  }

  /** Leaves the group at once, so the others rebalance without waiting for the heartbeat to expire. */
  async unregister(): Promise<void> {
    if (!this.#groupManaged) return;
    await this.api.unregister(this.clientId, { consumerGroup: this.resolved.consumerGroup });
  }
}
