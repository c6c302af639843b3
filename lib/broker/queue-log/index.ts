export { type IndexedBatch, STORE_TIME_SKEW_MS } from "./indexed-batches.js";
export { QUEUE_INDEX_TABLE, type QueueRef, queuePk } from "./queue-index.js";
export {
  type AppendListener,
  type IndexedMessage,
  type IndexedPage,
  type IndexPolicy,
  indexedMessages,
  QueueLog,
} from "./queue-log.js";
export { OBJECT_REPLICATION_GRACE_MS, type StoredMessage } from "./read.js";
