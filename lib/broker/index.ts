/**
 * @module The broker's public face: the `Broker` that wires every service (broker.ts) and its options.
 * Each capability folder has its own face (`<folder>/index.ts`) for what the edges need of it:
 * - `store/`: the broker's tables and their keys, the base every other folder builds on
 * - `queue-log/`: RocketMQ's CommitLog + ConsumeQueue: per-queue chains of index items pointing at batches
 * - `names/`: the name server (brokers, routes), topics, the route cache
 * - `produce/`: sends (validation, queue choice, auto-create)
 * - `consume/`: pulls, consumer offsets and their resets, orderly consumers' queue locks
 * - `clients/`: producer and consumer heartbeats, group membership, waiting check-backs
 * - `retry/`: consumerSendMsgBack: `%RETRY%` and `%DLQ%` topics
 * - `timers/`: delay levels and timer messages, the time-bucketed timer store
 * - `transactions/`: half messages, commit/rollback, check-backs
 * - `push/`: the push channel's registrations and hints
 * - `security/`: users and ACLs, sealed secrets
 * - `groups/`: subscription groups (RocketMQ's SubscriptionGroupConfig), the list of every group, lag samples
 * - `pop/`: POP consumption (RocketMQ 5's SimpleConsumer): receive, ack, invisible time, checkpoints
 * - `query/`: the message index (ids and keys per group commit) and the queries by id and key
 */
export {
  Broker,
  type BrokerOptions,
  DEFAULT_RETENTION_MS,
  DEFAULT_TIMER_MAX_DELAY_MS,
  type RetentionReport,
} from "./broker.js";
export type { SampleReport } from "./groups/index.js";
export {
  type AckCode,
  DEFAULT_POP_MAX_DELIVERY_ATTEMPTS,
  type FilterExpression,
  type FilterType,
  type PopGroupPolicy,
  type PopOptions,
  type PoppedMessage,
  type PopReceiveRequest,
  PopService,
} from "./pop/index.js";
