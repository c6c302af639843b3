/** @module The broker's base: its tables and their keys, the sortable due time, paging a partition. */
export { dueKey, MAX_RUN_MS } from "./due-time.js";
export { queryAll } from "./query-all.js";
export {
  ACL_TABLE,
  BATCH_OBJECT_PREFIX,
  BROKER_TABLES,
  CLIENTS_TABLE,
  CONNECTIONS_TABLE,
  keys,
  OFFSETS_TABLE,
  POP_TABLE,
  QUEUE_INDEX_TABLE,
  ROUTES_TABLE,
  TIMERS_TABLE,
  TRANSACTIONS_TABLE,
} from "./tables.js";
