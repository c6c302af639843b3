/** @module The contract fixture of the embedded adapter: a fresh data folder under the OS temp folder. */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { OpenFixture } from "./storage-fixture.js";

/** A new temp data folder with a storage on it; `reopen` opens another on the same folder. */
export const openLocalFixture: OpenFixture = async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-local-"));
  const opened: Storage[] = [];
  const open = (): Storage => {
    const storage = createLocalStorage({ dataDir });
    opened.push(storage);
    return storage;
  };
  return {
    storage: open(),
    reopen: async () => open(),
    cleanup: async () => {
      for (const storage of opened) await storage.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
};

/**
 * The embedded store's database file in `dataDir`, made empty with pages of `pageBytes` in WAL mode, as a store made
 * by an earlier version (or SQLite's default) left it: a store opened on it keeps that page size.
 */
export function makeStoreFile(dataDir: string, pageBytes: number): void {
  const made = new Database(path.join(dataDir, "tables.sqlite"));
  try {
    made.pragma(`page_size = ${pageBytes}`);
    made.pragma("journal_mode = WAL");
  } finally {
    made.close();
  }
}
