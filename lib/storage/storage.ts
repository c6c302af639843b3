/**
 * @module What an adapter gives the broker: its tables, one object store, and one request counter that
 * all of them count into.
 */
import type { ObjectStore } from "./object-store.js";
import type { RequestCounter } from "./request-counter.js";
import type { Table, TableSpec } from "./table.js";

export interface Storage {
  /** Opens the table named by `spec` (the same spec always gives the same table). */
  table(spec: TableSpec): Table;
  readonly objects: ObjectStore;
  /** Counts every request of every table and of the object store. */
  readonly counter: RequestCounter;
  /** Releases connections and file handles. */
  close(): Promise<void>;
}
