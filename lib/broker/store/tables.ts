/**
 * @module The tables the broker uses and the shape of their keys. Key prefixes end in `:`, a character
 * that topic, group and broker names cannot contain (see lib/core/names), so no two kinds of key collide.
 */
import type { TableSpec } from "../../storage/table.js";

/** Where batch objects live: `batches/<2 hex>/<2 hex>/<id>`, each owned by the index item naming it in `ok`. */
export const BATCH_OBJECT_PREFIX = "batches/";

/** The queue log's index items (queue key / start offset): lib/broker/queue-log. */
export const QUEUE_INDEX_TABLE: TableSpec = {
  name: "queue-index",
  sortKeyType: "number",
  ownedObjects: { attribute: "ok", prefix: BATCH_OBJECT_PREFIX },
};

/** Users (`user` / name) and ACLs (`acl` / subject): lib/broker/security. */
/** Users, ACLs and the nonces of replay-proof requests (which expire by TTL). */
export const ACL_TABLE: TableSpec = { name: "acl", sortKeyType: "string", ttlAttribute: "expiresAt" };

/**
 * Topic routes (`topic:<T>` / brokerName), the topic list (`topics` / topic), brokers (`brokers` / cluster:name:id),
 * subscription groups (`subgroups` / group: lib/broker/groups) and the topics' key-index settings (`topicindex` /
 * topic: lib/broker/query).
 */
export const ROUTES_TABLE: TableSpec = { name: "routes", sortKeyType: "string" };
/**
 * Consumer offsets (`offset:<T>:<G>` / brokerName:queueId), each group's topics (`group:<G>` / topic) and its
 * lag samples, a ring of slots (`lag:<G>` / slot number: lib/broker/groups/lag-samples.ts).
 */
export const OFFSETS_TABLE: TableSpec = { name: "offsets", sortKeyType: "string" };
/**
 * Heartbeats (`consumer:<G>` or `producer:<G>` / clientId), a group's offset resets (`consumer:<G>` /
 * `reset <topic>`), producers' waiting check-backs (`txcheck:<clientId>` / transaction id) and orderly queue
 * locks (`qlock:<G>:<T>:<broker>:<queueId>` / epoch); TTL only tidies up, liveness is the heartbeat time.
 */
export const CLIENTS_TABLE: TableSpec = { name: "clients", sortKeyType: "string", ttlAttribute: "expiresAt" };

/** Transactions (`tx:<id>` / record) and the pending ones by due time (`txpending:<shard>` / due#id#round#nonce); TTL tidies up. */
export const TRANSACTIONS_TABLE: TableSpec = { name: "transactions", sortKeyType: "string", ttlAttribute: "expiresAt" };

/**
 * The push channel's connections (lib/broker/push/push-channel.ts): each connection's registration
 * (`conn:<id>` / registration), who signed its connect (`conn:<id>` / user) and who wants which hints (`cq:<T>:<broker>:<queueId>`, `cg:<G>`,
 * `cp:<G>:<clientId>` / connection id). TTL removes what a lost disconnect left.
 */
export const CONNECTIONS_TABLE: TableSpec = { name: "connections", sortKeyType: "string", ttlAttribute: "expiresAt" };

/**
 * Delayed messages by due second (`timer:<second>` / due#msgId#nonce, plus `lease#<n>` records of the bucket's
 * movers) and the index of buckets that hold some (`timerdue` / second): docs/retry-and-delay.md.
 */
export const TIMERS_TABLE: TableSpec = { name: "timers", sortKeyType: "string", ttlAttribute: "expiresAt" };

/**
 * POP consumption's state per (group, queue) (`pop:<G>:<T>:<broker>:<queueId>`): checkpoints by start offset,
 * their rounds and acks (`<start>#r<n>`, `<start>#a<nonce>`) and the `lowwater` mark (lib/broker/pop/checkpoints.ts).
 */
export const POP_TABLE: TableSpec = { name: "pop", sortKeyType: "string", ttlAttribute: "expiresAt" };

/** Every table of the broker, for provisioning (emulators, local dev on DynamoDB) and infrastructure. */
export const BROKER_TABLES: readonly TableSpec[] = [
  QUEUE_INDEX_TABLE,
  ROUTES_TABLE,
  OFFSETS_TABLE,
  CLIENTS_TABLE,
  TRANSACTIONS_TABLE,
  CONNECTIONS_TABLE,
  ACL_TABLE,
  TIMERS_TABLE,
  POP_TABLE,
];

export const keys = {
  topicRoute: (topic: string) => `topic:${topic}`,
  topicList: "topics",
  /** The topics' key-index settings (sk: the topic). */
  topicIndex: "topicindex",
  brokers: "brokers",
  brokerSk: (cluster: string, brokerName: string, brokerId: number) => `${cluster}:${brokerName}:${brokerId}`,
  offsets: (topic: string, group: string) => `offset:${topic}:${group}`,
  offsetSk: (brokerName: string, queueId: number) => `${brokerName}:${queueId}`,
  groupTopics: (group: string) => `group:${group}`,
  /** Every consumer group's subscription group item (sk: the group). */
  subscriptionGroups: "subgroups",
  /** A group's lag samples (sk: the ring slot, zero-padded). */
  lagSamples: (group: string) => `lag:${group}`,
  consumers: (group: string) => `consumer:${group}`,
  /** A group's offset resets of a topic, in its consumers' partition: the blank keeps it apart from client ids. */
  offsetResetSk: (topic: string) => `reset ${topic}`,
  /** The lease records of one queue's orderly lock (sk: zero-padded epoch; queue-locks.ts). */
  queueLock: (group: string, topic: string, brokerName: string, queueId: number) =>
    `qlock:${group}:${topic}:${brokerName}:${queueId}`,
  producers: (group: string) => `producer:${group}`,
  /** Check-backs of a group waiting for one of its producer clients, picked up by its next heartbeat (sk: transaction id). */
  transactionChecks: (group: string, clientId: string) => `txcheck:${group}:${clientId}`,
  /** Every record of one transaction: `half`, `end`, `delivered`, `check:<n>`, `deliver:<n>` (transaction-records.ts). */
  transaction: (transactionId: string) => `tx:${transactionId}`,
} as const;
