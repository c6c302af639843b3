/**
 * @module The embedded storage adapter: tables in one SQLite database (`<dataDir>/tables.sqlite`, WAL),
 * objects as files (`<dataDir>/objects/`). Several processes may open the same `dataDir` at once.
 *
 * @example
 * const storage = createLocalStorage({ dataDir: ".nimbus" });
 * const offsets = storage.table({ name: "offsets", sortKeyType: "string" });
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { RequestCounter } from "../request-counter.js";
import type { GarbageReport, Storage } from "../storage.js";
import type { Table, TableSpec } from "../table.js";
import { checkTableSpec } from "../validate.js";
import { Checkpointer, fallbackAutocheckpointPages } from "./checkpointer.js";
import { FileObjectStore, type FlushMode, type ObjectOwner } from "./file-object-store.js";
import { retryWhileBusy, sqlite } from "./sqlite-errors.js";
import { SqliteTable } from "./sqlite-table.js";

export { FileObjectStore, type FlushMode } from "./file-object-store.js";
export { OUT_OF_ROW_BYTES, SqliteTable } from "./sqlite-table.js";

export interface LocalStorageOptions {
  /** Folder of the data (created if missing). */
  dataDir: string;
  /** How long a write waits for another process's write lock before SYSTEM_BUSY (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * An object that no item owns is garbage only once it is this old (default 1 h): far longer than any
   * append takes between writing its object and its index item, so a live writer never loses its object.
   */
  orphanGraceMs?: number;
  /**
   * When a write is acknowledged (RocketMQ's flushDiskType). `async` (default, RocketMQ's ASYNC_FLUSH):
   * SQLite `synchronous=NORMAL` and object files left in the OS's page cache; a process crash loses
   * nothing acknowledged, an OS crash or power loss may lose the last writes. `sync` (SYNC_FLUSH): SQLite
   * `synchronous=FULL` (the WAL is fsync'ed at every commit) and every object file and its folder
   * fsync'ed before its put returns; an acknowledged message survives an OS crash.
   */
  flush?: FlushMode;
  /**
   * WAL checkpoints in a thread of their own (checkpointer.ts; default true): the serving connection's commits
   * then never stop to copy the WAL back and sync. False: SQLite's automatic checkpoint, inside a commit.
   */
  checkpointThread?: boolean;
}

/** One hour: an append writes its index item within seconds of its object (`maxAppendMs` is 2.5 s). */
export const DEFAULT_ORPHAN_GRACE_MS = 3_600_000;

/**
 * How much of the database file SQLite reads through a memory map (`mmap_size`): address space, not heap. A
 * read then copies a page out of the OS's page cache without a system call; past this size it reads as before.
 */
export const MMAP_BYTES = 1024 * 1024 * 1024;

/**
 * The page size of a new database (SQLite's default is 4 KiB; an existing file keeps its own). The tables are WITHOUT
 * ROWID, whose rows stay whole in their leaf page only up to an index B-tree's limit, (usable − 12) · 64 / 255 − 23
 * bytes of the whole row (key, JSON and bytes): 1,002 with 4 KiB pages, 2,030 with 8 KiB. Past it the rest goes to
 * an overflow page of its own: with 4 KiB pages a batch item of one 1 KiB message took a leaf page and an overflow
 * page, each a WAL frame at every commit (docs/queue-log.md "On the embedded store").
 */
export const NEW_DATABASE_PAGE_BYTES = 8192;

/**
 * The store's SQLite database in `dataDir` (created if missing, with pages of `NEW_DATABASE_PAGE_BYTES`), in WAL
 * mode, synced as `options.flush` says, read through a memory map of at most `MMAP_BYTES`.
 */
export function openLocalDatabase(dataDir: string, options: Omit<LocalStorageOptions, "dataDir">): Database.Database {
  return sqlite("open the local database", () => {
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    const opened = new Database(path.join(dataDir, "tables.sqlite"), { timeout: busyTimeoutMs });
    // Before anything writes the file's header: on a new (empty) file it sets the page size, on an existing one it
    // changes nothing (outside WAL mode a VACUUM would apply it; in WAL mode never). Processes creating the file
    // at the same moment all ask for the same size.
    opened.pragma(`page_size = ${NEW_DATABASE_PAGE_BYTES}`);
    // WAL lets readers run beside the one writer. NORMAL syncs at checkpoints (a commit survives a process
    // crash, not always an OS crash); FULL syncs the WAL at every commit. Several processes may create
    // the database at the same moment: switching to WAL then answers BUSY without waiting, so retry (WAL
    // is persistent: once set, later opens find it and switch nothing).
    retryWhileBusy(() => opened.pragma("journal_mode = WAL"), busyTimeoutMs);
    opened.pragma(options.flush === "sync" ? "synchronous = FULL" : "synchronous = NORMAL");
    // Without the map every page a query touches is a read() into SQLite's cache, which a WAL connection
    // drops and refills: a pull's index rows cost about twice the CPU. Writes still go through write().
    opened.pragma(`mmap_size = ${MMAP_BYTES}`);
    // A write of the group commit that shares its transaction runs in a savepoint, whose journal holds the pages the
    // write changes (to undo it alone). Past 64 KiB, as B-tree page splits of 8 KiB pages reach, SQLite would keep
    // that journal in a new file of its temporary folder, made on the send path. In memory it costs no file and the
    // folder need not be writable; it holds the pages one write changes, freed at the savepoint's release.
    opened.pragma("temp_store = MEMORY");
    // With the checkpoint thread, this connection checkpoints only if that thread fell far behind.
    if (options.checkpointThread !== false) {
      const pageBytes = Number(opened.pragma("page_size", { simple: true }));
      opened.pragma(`wal_autocheckpoint = ${fallbackAutocheckpointPages(pageBytes)}`);
    }
    return opened;
  });
}

/** Opens (or creates) the embedded store in `options.dataDir`. */
export function createLocalStorage(options: LocalStorageOptions): Storage {
  const dataDir = path.resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const counter = new RequestCounter();
  const db = openLocalDatabase(dataDir, options);
  const checkpointer =
    options.checkpointThread === false
      ? undefined
      : new Checkpointer({ file: db.name, synchronous: options.flush === "sync" ? "FULL" : "NORMAL" });
  const tables = new Map<string, SqliteTable>();
  const objects = new FileObjectStore(path.join(dataDir, "objects"), counter, options.flush ?? "async");
  const graceMs = options.orphanGraceMs ?? DEFAULT_ORPHAN_GRACE_MS;
  // One collection at a time, in the order asked: two walks of one folder would race each other, and a caller's
  // collection starts only once those already asked for (the store's and tables' opening ones) are over.
  let lastCollection: Promise<unknown> = Promise.resolve();
  const serialized = (collect: () => Promise<GarbageReport>): Promise<GarbageReport> => {
    const next = lastCollection.then(collect, collect);
    lastCollection = next.catch(() => undefined);
    return next;
  };
  const collectGarbage = (): Promise<GarbageReport> =>
    serialized(() => {
      const owners: ObjectOwner[] = [];
      for (const table of tables.values()) {
        const owned = table.spec.ownedObjects;
        if (owned) owners.push({ prefix: owned.prefix, owned: table.ownedObjectKeys() });
      }
      return objects.collectGarbage(owners, Date.now() - graceMs);
    });
  // Collections started when the store or an owning table opens run in the background; close waits for
  // them. A failed one is left to the next (retention runs one every hour).
  const background = new Set<Promise<unknown>>();
  const inBackground = (collect: () => Promise<GarbageReport>) => {
    const running = collect().catch(() => undefined);
    background.add(running);
    void running.finally(() => background.delete(running));
  };
  inBackground(() => serialized(() => objects.collectGarbage([], Date.now() - graceMs)));
  return {
    table(spec: TableSpec): Table {
      const open = tables.get(spec.name);
      checkTableSpec(spec, open?.spec);
      if (open) return open;
      const table = new SqliteTable(db, spec, counter);
      tables.set(spec.name, table);
      if (spec.ownedObjects) inBackground(collectGarbage);
      return table;
    },
    objects,
    counter,
    collectGarbage,
    async close(): Promise<void> {
      await Promise.all(background);
      objects.close();
      await checkpointer?.stop();
      if (db.open) db.close();
    },
  };
}
