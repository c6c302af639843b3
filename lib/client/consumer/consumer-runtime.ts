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
import type { FilterExpression } from "../../core/filter/index.js";
import type { MessageQueue } from "../../core/message-queue.js";
import type { HeartbeatData, QueueHintFrame } from "../../protocol/index.js";
import { buildMQClientId, DEFAULT_INSTANCE_NAME, localIPv4, resolveInstanceName } from "../client-id.js";
import { Repeaters } from "../schedule.js";
import {
  type ConsumerConnection,
  type ConsumerRunningInfo,
  NimbusApi,
  type OffsetReset,
  PushChannelClient,
} from "../transport/index.js";
import { computePullFromWhere, type QueueBounds, type StartOffset, StartSnapshot } from "./consume-from-where.js";
import type { ConsumerBaseOptions, ResolvedBaseOptions } from "./consumer-options.js";
import { Handover, type Turn } from "./handover.js";
import { subscriptionData } from "./message-selector.js";
import { LocalFileOffsetStore, type OffsetStore, RemoteBrokerOffsetStore } from "./offset-store.js";
import { RebalanceImpl } from "./rebalance.js";

/** RocketMQ's default is `~/.rocketmq_offsets`. */
export const DEFAULT_OFFSET_STORE_DIR = path.join(os.homedir(), ".nimbus_offsets");

export interface RuntimeHooks {
  consumeType: "CONSUME_ACTIVELY" | "CONSUME_PASSIVELY";
  /** The subscriptions to announce and rebalance: topic to filter. */
  subscriptions(): ReadonlyMap<string, FilterExpression>;
  startQueue(mq: MessageQueue, start: StartOffset, turn: Turn): void;
  stopQueue(mq: MessageQueue): Promise<void>;
  /** The periodic commit. */
  persist(): Promise<void>;
  /** The queues whose hints the push channel should bring (the started ones). */
  heldQueues?(): MessageQueue[];
  /** A push hint for a queue (the consumer may no longer hold it). */
  queueHint?(hint: QueueHintFrame): void;
  /** The channel registered (again): what came before got no hint, read every queue once. */
  wakeAll?(): void;
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
  /** The subscribed queues' offsets at the start (LAST for a new group); undefined until started. */
  #started: StartSnapshot | undefined;
  /** The push channel, once started (group-managed consumers with `pushChannel` not false). */
  channel: PushChannelClient | undefined;
  #lastRound = 0;
  /** Rebalance rounds started by a `members` hint. */
  roundsByChannel = 0;
  /** The latest offset reset seen per topic (resetAt); undefined until the first membership read. */
  #knownResets: Map<string, number> | undefined;
  /** The subscription warning last given, so it is given once per change. */
  #subscriptionWarning = "";
  /** What the last heartbeat reported about the consumer's work (`consumerStatus`). */
  #runningInfo: ConsumerRunningInfo | undefined;

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
      started: this.#started,
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
    // LAST for a new group means "from this start", whenever a queue is handed over (consume-from-where.ts).
    if (r.consumeFromWhere === "CONSUME_FROM_LAST_OFFSET") {
      this.#started = await StartSnapshot.take(this.api, this.hooks.subscriptions().keys());
    }
    // A failed first heartbeat is not fatal (RocketMQ starts without a broker too): the timers retry.
    await this.heartbeat().catch(report("heartbeat"));
    // Resets made before this start are in the committed offsets already; later ones are applied.
    if (r.messageModel === "CLUSTERING" && this.hooks.applyOffsetReset !== undefined) {
      await this.api
        .consumerConnection(r.consumerGroup)
        .then((c) => this.#learnResets(c))
        .catch(report("reading the group's offset resets"));
    }
    // With the channel up its registration keeps the client live, and hints replace the polls; what the
    // consumer reports (consumerStatus) is registered again only when it changed, so an idle one sends nothing.
    this.#repeaters.every(
      r.heartbeatInterval,
      () => (this.channelUp ? this.#refreshRegistration() : this.heartbeat()),
      report("heartbeat"),
    );
    this.#repeaters.every(
      r.rebalanceInterval,
      () => (this.channelUp && Date.now() - this.#lastRound < r.channelPollInterval ? undefined : this.#rebalanceNow()),
      report("rebalance"),
    );
    this.#repeaters.every(r.membershipPollInterval, () => this.#pollMembership(), report("reading the consumer list"));
    if (r.pushChannel !== false) this.#openChannel(typeof r.pushChannel === "string" ? r.pushChannel : undefined);
    await this.#rebalanceNow();
  }

  /** True while the push channel holds this consumer's registration. */
  get channelUp(): boolean {
    return this.channel?.up === true;
  }

  /** How long an idle queue may wait for its next read now. */
  idleCapMillis(): number {
    return this.channelUp ? this.resolved.channelPollInterval : this.resolved.pullIdleBackoffMaxMillis;
  }

  /** The started queues changed: the channel registers them. */
  queuesChanged(): void {
    this.channel?.registrationChanged();
  }

  #rebalanceNow(): Promise<void> {
    this.#lastRound = Date.now();
    return this.rebalance.doRebalance();
  }

  #openChannel(url: string | undefined): void {
    const r = this.resolved;
    this.channel = new PushChannelClient({
      api: this.api,
      url,
      reconnectMillis: r.channelReconnectMillis,
      pingIntervalMillis: r.channelPingInterval,
      registration: () => ({
        type: "register",
        heartbeat: this.#heartbeatData(),
        queues: (this.hooks.heldQueues?.() ?? []).map((mq) => ({
          topic: mq.topic,
          brokerName: mq.brokerName,
          queueId: mq.queueId,
        })),
      }),
      handlers: {
        queue: (hint) => this.hooks.queueHint?.(hint),
        members: (group) => {
          if (group !== r.consumerGroup) return;
          this.roundsByChannel++;
          // The group changed, or its offsets were reset (resetOffsetByTime): read its connection as the
          // membership poll does, then rebalance.
          void this.#readConnection()
            .then(() => this.#rebalanceNow())
            .catch((err: unknown) => r.onError(err, "rebalance on a members hint"));
        },
        checks: () => {},
        up: () => this.hooks.wakeAll?.(),
        // Polling again: heartbeat at once (the broker dropped the channel's registration) and rebalance.
        down: () => {
          void this.heartbeat()
            .then(() => this.#rebalanceNow())
            .catch((err: unknown) => r.onError(err, "heartbeat after the push channel dropped"));
        },
      },
      onError: r.onError,
    });
    this.channel.start();
  }

  /** After `subscribe` on a running consumer: announce the new subscription and rebalance at once. */
  subscriptionChanged(topic: string): void {
    void this.heartbeat()
      .then(() => this.rebalance.doRebalance())
      .catch((err: unknown) => this.resolved.onError(err, `subscribing to ${topic}`));
  }

  /** Sends this consumer's heartbeat (its group, model and subscriptions): over the channel when it is up. */
  async heartbeat(): Promise<void> {
    // What the heartbeat reports about the consumer's work, kept for the channel's registrations too.
    this.#runningInfo = await this.hooks.runningInfo?.();
    if (this.channel?.up) {
      this.channel.registrationChanged(true);
      return;
    }
    await this.api.heartbeat(this.#heartbeatData());
  }

  /** Channel up: the registration again if the running info changed (locks, offsets, cache, last pull/consume). */
  async #refreshRegistration(): Promise<void> {
    this.#runningInfo = await this.hooks.runningInfo?.();
    this.channel?.registrationChanged();
  }

  #heartbeatData(): HeartbeatData {
    const r = this.resolved;
    return {
      clientId: this.clientId,
      consumerDataSet: [
        {
          groupName: r.consumerGroup,
          consumeType: this.hooks.consumeType,
          messageModel: r.messageModel,
          consumeFromWhere: r.consumeFromWhere,
          subscriptionDataSet: [...this.hooks.subscriptions()].map(([topic, filter]) =>
            subscriptionData(topic, filter),
          ),
          ...(this.#runningInfo === undefined ? {} : { runningInfo: this.#runningInfo }),
        },
      ],
    };
  }

  /** CLUSTERING: rebalance when the live consumer list changed; both models: retry an unbalanced round. */
  async #pollMembership(): Promise<void> {
    if (this.resolved.messageModel === "CLUSTERING" && !this.channelUp) {
      const connection = await this.api.consumerConnection(this.resolved.consumerGroup);
      this.#checkSubscription(connection);
      await this.#learnResets(connection);
      if (this.rebalance.membershipChanged(connection.consumerIdList)) return this.rebalance.doRebalance();
    }
    if (!this.rebalance.balanced) await this.#rebalanceNow();
  }

  /** CLUSTERING: the group's offset resets and subscription check, from one read of its connection. */
  async #readConnection(): Promise<void> {
    if (this.resolved.messageModel !== "CLUSTERING") return;
    const connection = await this.api.consumerConnection(this.resolved.consumerGroup);
    this.#checkSubscription(connection);
    await this.#learnResets(connection);
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
    // The channel goes first: its close also takes the client out of the group on the broker.
    await this.channel?.close();
    await this.api.unregister(this.clientId, { consumerGroup: this.resolved.consumerGroup });
  }
}
