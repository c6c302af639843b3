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
  /**
   * Removes what crashed writers left behind: half-written temp files, and objects under a table's
   * `ownedObjects` prefix that no item names and that are older than the adapter's grace period (so an
   * item still being written can never lose its object). Adapters whose backend does this itself (S3's
   * lifecycle rule) leave it out.
   */
  collectGarbage?(): Promise<GarbageReport>;
}

export interface GarbageReport {
  /** Temp files of writes that never finished (their process is gone, or they are older than the grace). */
  tempFiles: number;
  /** Objects that no item owns, older than the grace. */
  orphanObjects: number;
}
