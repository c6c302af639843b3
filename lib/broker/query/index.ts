/** @module Finding messages by id and by key: the message index the queue log keeps, its settings, and its queries. */
export { KeyIndexSettings } from "./key-index-settings.js";
export { MAX_SCAN_ITEMS, QueryService } from "./query-service.js";
