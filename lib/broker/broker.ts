/**
 * @module The broker: every service wired on one `Storage`. Handlers (Lambda or the local server) build
 * one per process and call its services; this is the only place that knows how they fit together.
 */
import { DEFAULT_MESSAGE_DELAY_LEVEL, parseDelayLevels } from "../core/delay-levels.js";
import { RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC } from "../core/names.js";
import type { TargetNetworks } from "../core/target-address.js";
import { MASTER_ID } from "../core/topology.js";
import type { HeartbeatData, TransactionCheck } from "../protocol/index.js";
import type { Storage } from "../storage/storage.js";
import { ClientService } from "./clients/index.js";
import {
  type CarriedOffsetsOptions,
  DEFAULT_QUEUE_LOCK_OPTIONS,
  OffsetService,
  PullService,
  type QueueLockOptions,
  QueueLockService,
} from "./consume/index.js";
import {
  GroupViews,
  type LagSampleOptions,
  LagSamples,
  type SampleReport,
  SubscriptionGroups,
} from "./groups/index.js";
import { type BrokerRegistration, NameServer, RouteCache, TopicService, TopicSuggestions } from "./names/index.js";
import { DEFAULT_POP_OPTIONS, type PopOptions, PopService } from "./pop/index.js";
import { SendService } from "./produce/index.js";
import { PushChannel } from "./push/index.js";
import { KeyIndexSettings, QueryService } from "./query/index.js";
import type { QueueRef } from "./queue-log/index.js";
import { QueueLog } from "./queue-log/index.js";
import { SendBackService } from "./retry/index.js";
import type { SecretSealer } from "./security/index.js";
import {
  CLIENTS_TABLE,
  CONNECTIONS_TABLE,
  OFFSETS_TABLE,
  POP_TABLE,
  ROUTES_TABLE,
  TIMERS_TABLE,
  TRANSACTIONS_TABLE,
} from "./store/index.js";
import { checkFilterExpression, type FilterCheck, SubscriptionStore } from "./subscriptions/index.js";
import { DelayedDelivery, TimerStore, type TimerSweepReport } from "./timers/index.js";
import {
  DEFAULT_TRANSACTION_OPTIONS,
  halfQueuesOf,
  TransactionChecker,
  type TransactionCheckReport,
  type TransactionOptions,
  TransactionService,
} from "./transactions/index.js";

export interface BrokerOptions {
  /** The brokers this deployment serves (registered by `registerBrokers`). */
  brokers: BrokerRegistration[];
  /** RocketMQ's autoCreateTopicEnable. Default true. */
  autoCreateTopic?: boolean;
  /** Queues per broker of an auto-created topic. Default 4. */
  defaultTopicQueueNums?: number;
  /** Batches up to this size stay inline in DynamoDB. Default 8 KiB (see docs/queue-log.md). */
  inlineThresholdBytes?: number;
  /** Hot topics: partition keys a new queue's index is spread over, per topic (QueueLogOptions.indexKeys). */
  hotTopics?: Readonly<Record<string, number>>;
  /** Merged appends (a group commit) up to this size stay inline; larger go to a shared object (QueueLogOptions). */
  mergedInlineThresholdBytes?: number | undefined;
  /** How long messages are kept (RocketMQ's fileReservedTime). Default 72 h. */
  retentionMs?: number;
  /** How long an API instance trusts a cached topic route. Default 3 s. */
  routeCacheMs?: number;
  /** Makes a message id (UNIQ_KEY) for messages that come without one. */
  newMessageId: () => string;
  /** On a replica (a slave cell): how long a batch's object may lag its index item. Default 0. */
  objectReplicationGraceMs?: number | undefined;
  /**
   * How long a writer of a hot queue hands out the offsets of a range it leased (QueueLogOptions.rangeUseMs;
   * default 200 ms). Tests make it long, so that a range is still held when they look.
   */
  rangeUseMs?: number | undefined;
  /** Orderly consumers' queue locks: lease length and the clock skew they tolerate (60 s, 5 s). */
  queueLocks?: Partial<QueueLockOptions>;
  /** Check-back timing of transactional messages (RocketMQ's defaults: 6 s, 60 s, 15 checks). */
  transactions?: Partial<Omit<TransactionOptions, "retentionMs">>;
  /** The push channel's per-queue coalescing window. Default 25 ms. */
  channelCoalesceMs?: number;
  /** RocketMQ's messageDelayLevel ("1s 5s ... 2h"). */
  messageDelayLevel?: string;
  /** The furthest ahead a timer message may be due. Default 7 days. */
  timerMaxDelayMs?: number;
  /** Sweeps of due delayed messages alongside requests: at most one per process per this. Default 500 ms. */
  timerSweepIntervalMs?: number;
  /** Checks a subscription's filter beyond its shape (tags here; SQL92 with the filter compiler). */
  checkFilter?: FilterCheck;
  /** POP consumption: max delivery attempts, FIFO groups, long polling bounds (docs/pop.md). */
  pop?: Partial<Omit<PopOptions, "retentionMs">>;
  /** Lag samples per group (lib/broker/groups/lag-samples.ts): period and ring size (60 s, 1440). */
  lagSamples?: Partial<LagSampleOptions>;
  /** The offsets pulls carry, held before they are written (lib/broker/consume/carried-offsets.ts): 1 s, 4,096. */
  carriedOffsets?: CarriedOffsetsOptions;
  /** Seals subscriptions' webhook secrets (the stage's seal key); without it an http target cannot be saved. */
  secretSealer?: SecretSealer | undefined;
  /** What addresses subscriptions' HTTPS targets may reach (lib/core/target-address.ts). Default `public`. */
  targetNetworks?: TargetNetworks | undefined;
  now?: () => number;
}

/** The furthest ahead a timer message may be due by default: 7 days (RocketMQ's default is 3). */
export const DEFAULT_TIMER_MAX_DELAY_MS = 7 * 86_400_000;

/** RocketMQ's fileReservedTime: 72 h. */
export const DEFAULT_RETENTION_MS = 72 * 3600_000;

export interface RetentionReport {
  queues: number;
  deletedBatches: number;
  deletedMessages: number;
  /** Objects no index item owns and temp files of writers that died, removed (embedded store only). */
  garbageFiles: number;
}

export class Broker {
  readonly queueLog: QueueLog;
  readonly nameServer: NameServer;
  readonly routeCache: RouteCache;
  readonly topics: TopicService;
  readonly sender: SendService;
  readonly puller: PullService;
  readonly offsets: OffsetService;
  readonly clients: ClientService;
  readonly locks: QueueLockService;
  readonly transactions: TransactionService;
  readonly transactionChecker: TransactionChecker;
  /** The push channel: hints to connected clients, once a gateway is attached (the local server, a Lambda). */
  readonly channel: PushChannel;
  /** Delayed messages waiting until due (delay levels, timer messages, retries). */
  readonly timers: TimerStore;
  readonly delays: DelayedDelivery;
  /** Retries and dead letters (RocketMQ's consumerSendMsgBack). */
  readonly sendBack: SendBackService;
  /** Subscriptions: a group's messages pushed to a Lambda function or an HTTPS endpoint (docs/subscriptions.md). */
  readonly subscriptions: SubscriptionStore;
  /** POP consumption (RocketMQ 5's SimpleConsumer): receive, ack, invisible time. */
  readonly pop: PopService;
  /** RocketMQ's subscription groups: each consumer group's config, honoured by pulls, receives, send-backs. */
  readonly subscriptionGroups: SubscriptionGroups;
  /** Each group's lag samples (a bounded ring) and the operator's views of every group. */
  readonly lagSamples: LagSamples;
  readonly groups: GroupViews;
  /** The topics' key-index settings (the queue log writes the message index into every batch's item) and the queries by id and key. */
  readonly keyIndexSettings: KeyIndexSettings;
  readonly query: QueryService;
  readonly #options: BrokerOptions;
  readonly #now: () => number;
  readonly #storage: Storage;

  constructor(storage: Storage, options: BrokerOptions) {
    this.#options = options;
    this.#storage = storage;
    this.#now = options.now ?? Date.now;
    const now = this.#now;
    const routes = storage.table(ROUTES_TABLE);
    const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.keyIndexSettings = new KeyIndexSettings(routes, now);
    this.queueLog = new QueueLog(storage, {
      indexPolicy: this.keyIndexSettings.policyOf,
      inlineThresholdBytes: options.inlineThresholdBytes,
      indexKeys: (topic) =>
        options.hotTopics !== undefined && Object.hasOwn(options.hotTopics, topic)
          ? (options.hotTopics[topic] ?? 1)
          : 1,
      mergedInlineThresholdBytes: options.mergedInlineThresholdBytes,
      objectReplicationGraceMs: options.objectReplicationGraceMs,
      ...(options.rangeUseMs === undefined ? {} : { rangeUseMs: options.rangeUseMs }),
      retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
      now,
    });
    this.nameServer = new NameServer(routes, now);
    this.routeCache = new RouteCache(this.nameServer, options.routeCacheMs ?? 3000, now);
    const subscriptionGroups = new SubscriptionGroups(routes, options.routeCacheMs ?? 3000, now);
    this.subscriptionGroups = subscriptionGroups;
    this.topics = new TopicService(routes, this.nameServer, this.queueLog, (t) => this.routeCache.invalidate(t), now);
    // A read of a topic that does not exist names the closest one that does ("did you mean").
    const suggestions = new TopicSuggestions(() => this.topics.list());
    this.routeCache.suggest = (topic) => suggestions.closestTo(topic);
    this.timers = new TimerStore(storage.table(TIMERS_TABLE), this.queueLog, {
      retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
      sweepIntervalMs: options.timerSweepIntervalMs ?? 500,
      now,
    });
    this.delays = new DelayedDelivery(
      parseDelayLevels(options.messageDelayLevel ?? DEFAULT_MESSAGE_DELAY_LEVEL),
      options.timerMaxDelayMs ?? DEFAULT_TIMER_MAX_DELAY_MS,
      this.timers,
      now,
    );
    this.sender = new SendService(this.routeCache, this.topics, this.queueLog, {
      autoCreateTopic: options.autoCreateTopic ?? true,
      defaultQueueNums: options.defaultTopicQueueNums ?? 4,
      newMessageId: options.newMessageId,
      now,
      delays: this.delays,
    });
    this.sendBack = new SendBackService(
      this.queueLog,
      this.topics,
      this.nameServer,
      this.delays,
      (topic) => this.routeCache.get(topic),
      async (group) => (await subscriptionGroups.configOf(group)).retryMaxTimes,
    );
    this.puller = new PullService(this.routeCache, this.queueLog, (group) =>
      subscriptionGroups.checkConsumeEnabled(group),
    );
    // A subscription delivers what is sent after it is saved: its group's POP start is fixed first.
    this.subscriptions = new SubscriptionStore(
      routes,
      options.checkFilter ?? checkFilterExpression,
      now,
      async (g, t) => {
        await this.pop.start(g, t);
      },
      options.secretSealer,
      options.targetNetworks ?? "public",
    );
    this.query = new QueryService(this.keyIndexSettings, this.routeCache, this.queueLog, retentionMs, now);
    const offsetsTable = storage.table(OFFSETS_TABLE);
    this.offsets = new OffsetService(offsetsTable, this.routeCache, this.queueLog, now, options.carriedOffsets);
    this.offsets.onGroupTopic = (group) => subscriptionGroups.meet(group);
    this.clients = new ClientService(storage.table(CLIENTS_TABLE), now);
    this.clients.beforeConsumerHeartbeat = async (group, messageModel) => {
      await subscriptionGroups.checkMessageModel(group, messageModel);
      await subscriptionGroups.meet(group);
    };
    this.lagSamples = new LagSamples(offsetsTable, options.lagSamples ?? {}, now);
    this.groups = new GroupViews({
      subscriptionGroups,
      offsets: this.offsets,
      clients: this.clients,
      lagSamples: this.lagSamples,
    });
    this.locks = new QueueLockService(
      storage.table(CLIENTS_TABLE),
      { ...DEFAULT_QUEUE_LOCK_OPTIONS, ...options.queueLocks },
      now,
    );
    this.channel = new PushChannel(storage.table(CONNECTIONS_TABLE), this.clients, {
      ...(options.channelCoalesceMs === undefined ? {} : { coalesceMs: options.channelCoalesceMs }),
      now,
      locks: this.locks,
    });
    this.pop = new PopService(
      storage.table(POP_TABLE),
      this.routeCache,
      this.queueLog,
      this.sendBack,
      { ...DEFAULT_POP_OPTIONS, ...options.pop, retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS },
      now,
      {
        // RocketMQ's POP: consume disabled refuses, retryMaxTimes + 1 deliveries, consumeMessageOrderly is FIFO.
        groupConfig: async (group, receiving) => {
          if (receiving) {
            await subscriptionGroups.checkConsumeEnabled(group);
            await subscriptionGroups.meet(group);
          }
          const config = await subscriptionGroups.configOf(group);
          const fifo = config.consumeMessageOrderly;
          return config.configured ? { fifo, maxDeliveryAttempts: config.retryMaxTimes + 1 } : { fifo };
        },
        // Receives that may wait hold their topic where the other worker processes hear of it.
        interest: this.queueLog.interest,
      },
    );
    // The write path's hint: the push channel's notifications and the POP receives waiting in this process. The
    // push channel's hints come from the process that appended (it posts to every holder, relayed when elsewhere).
    this.queueLog.onAppended((q, maxOffset, elsewhere) => {
      if (!elsewhere) this.channel.queueAppended(q, maxOffset);
    });
    this.queueLog.onAppended((q) => this.pop.queueAppended(q));
    this.clients.onCheckAdded = (group, clientId) => this.channel.checksWaiting(group, clientId);
    const transactionTable = storage.table(TRANSACTIONS_TABLE);
    this.transactions = new TransactionService(
      transactionTable,
      this.sender,
      this.queueLog,
      {
        ...DEFAULT_TRANSACTION_OPTIONS,
        ...options.transactions,
        retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
      },
      now,
    );
    this.transactionChecker = new TransactionChecker(
      transactionTable,
      this.transactions,
      this.clients,
      this.queueLog,
      (brokerName) => this.topics.ensureSystemQueue(RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, brokerName),
      now,
    );
  }

  /**
   * The process stops serving (`nimbus dev`, `nimbus proxy`, a test's server): the offsets pulls carried and this
   * process holds are written, and the offset ranges it leased on hot queues are given up, their unused tails
   * sealed by their owner now, so the queues' readers do not wait out the hole lease. Call it after the last
   * append's answer; the storage stays open (its owner closes it).
   */
  async close(): Promise<void> {
    // The offsets pulls carried are written before the store closes (carried-offsets.ts).
    await Promise.all([this.offsets.carried.flush(), this.queueLog.releaseRanges()]);
  }

  /**
   * A client's heartbeat: a clustering consumer's group gets its retry topic before its first failure (RocketMQ does
   * it here too) where the process `writes` (not on a slave), and a failure there does not fail the heartbeat; the
   * client is recorded; the members of a group it joins hear of it on the push channel (docs/push-channel.md).
   * Answers the check-backs waiting for it (producers only).
   */
  async heartbeat(hb: HeartbeatData, where: { writes: boolean }): Promise<TransactionCheck[]> {
    const consumers = where.writes ? (hb.consumerDataSet ?? []) : [];
    const clustering = consumers.filter((c) => (c.messageModel ?? "CLUSTERING") === "CLUSTERING");
    await Promise.all(
      clustering.map((c) =>
        this.sendBack
          .ensureRetryTopic(c.groupName)
          .catch((err: unknown) => console.error(`nimbus: creating the retry topic of ${c.groupName} failed:`, err)),
      ),
    );
    const joining = await this.channel.joiningGroups(hb);
    const checks = await this.clients.heartbeat(hb);
    await Promise.all(joining.map((g) => this.channel.groupChanged(g)));
    return checks;
  }

  /** The current time of this broker (its clock, or the test's). */
  now(): number {
    return this.#now();
  }

  /** Check-backs of transactions due for one: the scheduled job, every transaction check interval. */
  checkTransactions(): Promise<TransactionCheckReport> {
    return this.transactionChecker.run();
  }

  /**
   * Moves due delayed messages to their queues: the scheduled job (staying up `runMs` while buckets fall
   * due within it; 0 for one sweep).
   */
  moveDueMessages(runMs = 0): Promise<TimerSweepReport> {
    return runMs > 0 ? this.timers.runScheduled(runMs) : this.timers.sweep();
  }

  /** One lag sample per consumer group: the scheduled job, every minute (lib/broker/groups/lag-samples.ts). */
  sampleLag(): Promise<SampleReport> {
    return this.groups.sampleLag();
  }

  /** Registers the configured brokers with the name server: the scheduled job, every 30 s. */
  registerBrokers(): Promise<void> {
    return this.nameServer.register(this.#options.brokers);
  }

  /** Retention over every queue of every topic: the scheduled job, hourly. */
  async applyRetention(): Promise<RetentionReport> {
    const olderThan = this.#now() - (this.#options.retentionMs ?? DEFAULT_RETENTION_MS);
    const report: RetentionReport = { queues: 0, deletedBatches: 0, deletedMessages: 0, garbageFiles: 0 };
    const queues: QueueRef[] = [];
    for (const entry of await this.topics.listEntries()) {
      for (const [brokerName, n] of Object.entries(entry.queues)) {
        for (let queueId = 0; queueId < n; queueId++) queues.push({ topic: entry.topic, brokerName, queueId });
      }
    }
    // The half queues have no route (consumers never see them), so they are not in the topic list: those of
    // every master known here, configured or live (a name server process has none configured).
    const masters = new Set(
      [...this.#options.brokers, ...(await this.nameServer.liveBrokers())]
        .filter((b) => b.brokerId === MASTER_ID)
        .map((b) => b.brokerName),
    );
    for (const name of masters) queues.push(...halfQueuesOf(name));
    for (const queue of queues) {
      const trimmed = await this.queueLog.trim(queue, olderThan);
      report.queues++;
      report.deletedBatches += trimmed.deletedBatches;
      report.deletedMessages += trimmed.deletedMessages;
    }
    // After the trims: a trim that died between an index delete and its object delete left an orphan.
    const garbage = await this.#storage.collectGarbage?.();
    if (garbage) report.garbageFiles = garbage.tempFiles + garbage.orphanObjects;
    return report;
  }
}
