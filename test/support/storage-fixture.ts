/** @module What a contract suite needs from an adapter: a fresh storage, and a way to throw it away. */
import type { Storage } from "../../lib/storage/storage.js";

export interface StorageFixture {
  /** A storage with no items and no objects (fresh tables, fresh bucket or folder). */
  storage: Storage;
  /**
   * Another storage on the same data as `storage` (a second process's view: its own clients/connections,
   * no shared caches), for tests of concurrent writers.
   */
  reopen(): Promise<Storage>;
  /** Closes what the fixture opened and deletes its data. */
  cleanup(): Promise<void>;
}

/** Makes one fixture per call; a suite calls it once per `describe`. */
export type OpenFixture = () => Promise<StorageFixture>;
