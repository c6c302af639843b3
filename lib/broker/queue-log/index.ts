export { QUEUE_INDEX_TABLE, type QueueRef } from "./queue-index.js";
export { type AppendListener, QueueLog } from "./queue-log.js";
export { OBJECT_REPLICATION_GRACE_MS, type StoredMessage } from "./read.js";
