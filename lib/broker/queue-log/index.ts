export { QUEUE_INDEX_TABLE, type QueueRef, queuePk } from "./queue-index.js";
export {
  type AppendIndexer,
  type AppendListener,
  type IndexedMessage,
  indexedMessages,
  QueueLog,
} from "./queue-log.js";
export { OBJECT_REPLICATION_GRACE_MS, type StoredMessage } from "./read.js";
