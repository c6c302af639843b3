/** @module Finding messages by id and by key: the message index the write path keeps, and its queries. */
export { MessageIndex } from "./message-index.js";
export { MAX_SCAN_ITEMS, QueryService } from "./query-service.js";
