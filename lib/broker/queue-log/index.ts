export {
  AppendInterest,
  type AppendInterestOptions,
  type InterestChange,
  type NoticeCounts,
} from "./append-interest.js";
export { type IndexedBatch, STORE_TIME_SKEW_MS } from "./indexed-batches.js";
export { KEY_WRITE_UNITS_PER_SECOND, NEAR_LIMIT_SHARE, type QueueLoad } from "./load.js";
export { QUEUE_INDEX_TABLE, type QueueRef, queuePk } from "./queue-index.js";
export {
  type AppendListener,
  type IndexedMessage,
  type IndexedPage,
  type IndexPolicy,
  indexedMessages,
  QueueLog,
} from "./queue-log.js";
export {
  OBJECT_REPLICATION_GRACE_MS,
  type ReadResult,
  type StoredMessage,
  type StoredRecord,
  storedMessage,
} from "./read.js";
