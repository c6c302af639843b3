/**
 * @module The `ObjectStore` port on a folder. A key's `/`-separated segments are directories, and the
 * object itself is the file `<last segment>~`: `~` never occurs in a key, so "a" (file `a~`) and "a/b"
 * (directory `a`) coexist as in S3, and temp files (`name~<pid>.<n>.tmp`) are never taken for objects.
 * Names are case-folded safely (`Z` is stored as `^z`, `*` as `^+`), so keys differing only in case stay
 * apart on macOS/Windows file systems. Writes go to a temp file in the same folder and are renamed in
 * place, so a reader in any process sees the old object or the new one, never a part.
 */
import { randomBytes } from "node:crypto";
import { type Dirent, mkdirSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import * as fs from "node:fs/promises";
import path from "node:path";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import {
  type ByteRange,
  type ListOptions,
  type ListPage,
  OBJECT_KEY_PATTERN,
  type ObjectInfo,
  type ObjectStore,
} from "../object-store.js";
import type { RequestCounter } from "../request-counter.js";
import type { GarbageReport } from "../storage.js";
import { checkByteRange, checkList, checkObjectKey } from "../validate.js";
import { OpenFiles } from "./open-files.js";

/** S3's DeleteObjects takes at most 1000 keys per request. */
const DELETE_BATCH = 1000;
const DELETE_PARALLEL = 32;
const OBJECT_SUFFIX = "~";
const OBJECT_FILE = /^[^~]+~$/;
/** A temp file of `put`: `<object file><tag>-<pid>.<n>.tmp`. */
const TEMP_FILE = /^[^~]+~[0-9a-f]{8}-(\d+)\.\d+\.tmp$/;

/** Objects under `prefix` are garbage unless `owned` holds their key. */
export interface ObjectOwner {
  prefix: string;
  owned: ReadonlySet<string>;
}

/** True while process `pid` runs (on this machine: the local store is one machine's folder). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errno(err) === "EPERM";
  }
}

/** A key segment as a file name that no case-insensitive file system can confuse with another. */
function encodeSegment(segment: string): string {
  return segment.replace(/[A-Z*]/g, (ch) => (ch === "*" ? "^+" : `^${ch.toLowerCase()}`));
}

/** The key segment of a file name, or undefined for names this store did not write. */
function decodeSegment(name: string): string | undefined {
  const segment = name.replace(/\^(.)/g, (_, ch: string) => (ch === "+" ? "*" : ch.toUpperCase()));
  return encodeSegment(segment) === name && OBJECT_KEY_PATTERN.test(segment) ? segment : undefined;
}

const utf8 = (s: string): Buffer => Buffer.from(s, "utf8");
const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

let tempSequence = 0;
const tempTag = randomBytes(4).toString("hex");

/**
 * When a write is acknowledged, as RocketMQ's flushDiskType: `async` (ASYNC_FLUSH) once the bytes are in
 * the OS's page cache (a process crash loses nothing, an OS crash or power loss may lose the last writes);
 * `sync` (SYNC_FLUSH) once they are on disk, the file and its directory entry both fsync'ed.
 */
export type FlushMode = "async" | "sync";

export class FileObjectStore implements ObjectStore {
  readonly counter: RequestCounter;
  readonly #root: string;
  readonly #flush: FlushMode;
  /** Object files kept open for reads, at most `MAX_OPEN_FILES`. */
  readonly #openFiles = new OpenFiles();

  /** Objects live under `root` (created on first put). */
  constructor(root: string, counter: RequestCounter, flush: FlushMode = "async") {
    this.#root = root;
    this.counter = counter;
    this.#flush = flush;
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    checkObjectKey(key);
    this.counter.objectPut();
    const file = this.#fileOf(key);
    const temp = `${file}${tempTag}-${process.pid}.${++tempSequence}.tmp`;
    if (this.#flush === "async") return this.#putToPageCache(key, file, temp, body);
    // A concurrent delete may remove an empty parent folder between our mkdir and our open: try again.
    for (let attempt = 0; ; attempt++) {
      try {
        const firstCreated = await fs.mkdir(path.dirname(file), { recursive: true });
        const handle = await fs.open(temp, "wx");
        try {
          await handle.writeFile(body);
          if (this.#flush === "sync") await handle.datasync();
        } finally {
          await handle.close();
        }
        await fs.rename(temp, file);
        this.#openFiles.forget(file);
        // The rename is durable once the folder is: fsync it, and every folder this put created (each
        // one's entry lives in its parent), so an acknowledged object survives an OS crash.
        if (this.#flush === "sync") await syncFolders(path.dirname(file), firstCreated);
        return;
      } catch (err) {
        await fs.rm(temp, { force: true });
        if (errno(err) === "ENOENT" && attempt < 5) continue;
        throw this.#failure("put", key, err);
      }
    }
  }

  /**
   * The `async` flush mode's put: nothing to fsync, so the file is written and renamed with synchronous
   * calls (a write to the page cache: tens of microseconds, cheaper than four trips through the thread
   * pool), and its folder is made only when the first try finds it missing.
   */
  #putToPageCache(key: string, file: string, temp: string, body: Uint8Array): void {
    for (let attempt = 0; ; attempt++) {
      try {
        try {
          writeFileSync(temp, body, { flag: "wx" });
        } catch (err) {
          if (errno(err) !== "ENOENT") throw err;
          mkdirSync(path.dirname(file), { recursive: true });
          writeFileSync(temp, body, { flag: "wx" });
        }
        renameSync(temp, file);
        this.#openFiles.forget(file);
        return;
      } catch (err) {
        rmSync(temp, { force: true });
        // A concurrent delete may remove an empty parent folder between our mkdir and our write: try again.
        if (errno(err) === "ENOENT" && attempt < 5) continue;
        throw this.#failure("put", key, err);
      }
    }
  }

  async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    checkObjectKey(key);
    checkByteRange(range);
    this.counter.objectGet();
    // Synchronous calls on a file kept open (open-files.ts): an object just written is in the page cache, and
    // one read there costs less than trips through the thread pool.
    try {
      return this.#openFiles.read(this.#fileOf(key), (fd, size) => {
        const offset = range?.offset ?? 0;
        if (range && offset >= size) {
          throw new NimbusError(ErrorCode.INVALID_RANGE, `range starts at ${offset}, object ${key} has ${size} bytes`);
        }
        const length = Math.min(range?.length ?? size, size - offset);
        // A plain Uint8Array of its own (not a view into Buffer's shared pool).
        const out = new Uint8Array(length);
        let done = 0;
        while (done < length) {
          const bytesRead = readSync(fd, out, done, length - done, offset + done);
          if (bytesRead === 0) break;
          done += bytesRead;
        }
        this.counter.objectBytes(done);
        return done === length ? out : out.slice(0, done);
      });
    } catch (err) {
      throw this.#failure("get", key, err);
    }
  }

  /** Object files open for reads now, and how many times one was opened (for tests and the benchmark). */
  get openFiles(): { open: number; opened: number } {
    return { open: this.#openFiles.size, opened: this.#openFiles.opened };
  }

  /** Closes the object files kept open for reads (the store is closing). */
  close(): void {
    this.#openFiles.closeAll();
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const limit = checkList(prefix, options);
    this.counter.objectList();
    // Start in the deepest folder the prefix names; a prefix whose folders are no valid key matches nothing.
    const cut = prefix.lastIndexOf("/");
    const folder = cut < 0 ? "" : prefix.slice(0, cut);
    if (folder !== "" && !isValidKey(folder)) return { objects: [] };
    const objects: ObjectInfo[] = [];
    const after = options.continuation;
    try {
      const start = folder === "" ? this.#root : this.#dirOf(folder);
      for await (const info of this.#walk(start, folder === "" ? "" : `${folder}/`, prefix, after)) {
        objects.push(info);
        if (objects.length > limit) break;
      }
    } catch (err) {
      throw this.#failure("list", prefix, err);
    }
    if (objects.length <= limit) return { objects };
    objects.length = limit;
    return { objects, next: objects[limit - 1]?.key ?? "" };
  }

  async delete(keys: string[]): Promise<void> {
    for (const key of keys) checkObjectKey(key);
    for (let i = 0; i < keys.length; i += DELETE_BATCH) this.counter.objectDelete();
    const unique = [...new Set(keys)];
    // A few files at a time: S3 deletes a whole batch in one request, so callers expect this to be quick.
    for (let i = 0; i < unique.length; i += DELETE_PARALLEL) {
      await Promise.all(unique.slice(i, i + DELETE_PARALLEL).map((key) => this.#deleteOne(key)));
    }
  }

  /**
   * Removes temp files whose writer is gone (or that are older than `olderThan`, ms since epoch) and,
   * under each owner's prefix, object files older than `olderThan` that the owner does not hold.
   * `owners` must be read before this runs or during it: an object older than `olderThan` gains no owner.
   */
  async collectGarbage(owners: readonly ObjectOwner[], olderThan: number): Promise<GarbageReport> {
    const report: GarbageReport = { tempFiles: 0, orphanObjects: 0 };
    let entries: Dirent[];
    try {
      entries = await fs.readdir(this.#root, { recursive: true, withFileTypes: true });
    } catch (err) {
      if (errno(err) === "ENOENT") return report;
      throw this.#failure("collect garbage in", this.#root, err);
    }
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      const temp = TEMP_FILE.exec(entry.name);
      if (temp) {
        if (processAlive(Number(temp[1])) && (await modifiedAt(file)) >= olderThan) continue;
        if (await removed(file)) report.tempFiles++;
        continue;
      }
      const key = OBJECT_FILE.test(entry.name) ? this.#keyOf(file) : undefined;
      const owner = key === undefined ? undefined : owners.find((o) => key.startsWith(o.prefix));
      if (key === undefined || owner === undefined || owner.owned.has(key)) continue;
      if ((await modifiedAt(file)) >= olderThan) continue;
      if (await removed(file)) {
        report.orphanObjects++;
        await this.#pruneEmptyFolders(path.dirname(file));
      }
    }
    return report;
  }

  /** The key of an object file, or undefined for a file this store did not write. */
  #keyOf(file: string): string | undefined {
    const relative = path.relative(this.#root, file.slice(0, -OBJECT_SUFFIX.length));
    const segments = relative.split(path.sep).map(decodeSegment);
    if (segments.some((segment) => segment === undefined)) return undefined;
    return segments.join("/");
  }

  async #deleteOne(key: string): Promise<void> {
    const file = this.#fileOf(key);
    this.#openFiles.forget(file);
    try {
      await fs.rm(file, { force: true });
    } catch (err) {
      throw this.#failure("delete", key, err);
    }
    await this.#pruneEmptyFolders(path.dirname(file));
  }

  /** Keys under `dir` (whose keys start with `keyPrefix`) that start with `prefix`, after `after`, in order. */
  async *#walk(dir: string, keyPrefix: string, prefix: string, after: string | undefined): AsyncGenerator<ObjectInfo> {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (errno(err) === "ENOENT" || errno(err) === "ENOTDIR") return;
      throw err;
    }
    // A folder sorts as its name plus "/": every key inside starts with that, so a depth-first walk in
    // this order yields keys in UTF-8 byte order.
    const children: { order: Buffer; key: string; dir: boolean; name: string }[] = [];
    for (const entry of entries) {
      const isObject = entry.isFile() && OBJECT_FILE.test(entry.name);
      if (!isObject && !entry.isDirectory()) continue;
      const segment = decodeSegment(isObject ? entry.name.slice(0, -OBJECT_SUFFIX.length) : entry.name);
      if (segment === undefined) continue;
      const key = isObject ? keyPrefix + segment : `${keyPrefix}${segment}/`;
      children.push({ order: utf8(key), key, dir: !isObject, name: entry.name });
    }
    children.sort((a, b) => Buffer.compare(a.order, b.order));
    const afterBytes = after === undefined ? undefined : utf8(after);
    for (const child of children) {
      if (child.dir) {
        if (!child.key.startsWith(prefix) && !prefix.startsWith(child.key)) continue;
        // Skip a folder whose keys all sort before `after`.
        if (afterBytes && Buffer.compare(child.order, afterBytes) < 0 && !after?.startsWith(child.key)) continue;
        yield* this.#walk(path.join(dir, child.name), child.key, prefix, after);
        continue;
      }
      if (!child.key.startsWith(prefix)) continue;
      if (afterBytes && Buffer.compare(child.order, afterBytes) <= 0) continue;
      try {
        yield { key: child.key, size: (await fs.stat(path.join(dir, child.name))).size };
      } catch (err) {
        if (errno(err) !== "ENOENT") throw err; // deleted while we listed
      }
    }
  }

  /** Removes now-empty folders up to the root; a folder another writer just filled stays. */
  async #pruneEmptyFolders(dir: string): Promise<void> {
    for (let current = dir; current.startsWith(this.#root) && current !== this.#root; current = path.dirname(current)) {
      try {
        await fs.rmdir(current);
      } catch {
        return;
      }
    }
  }

  #dirOf(keyPath: string): string {
    return path.join(this.#root, ...keyPath.split("/").map(encodeSegment));
  }

  #fileOf(key: string): string {
    return this.#dirOf(key) + OBJECT_SUFFIX;
  }

  #failure(what: string, key: string, err: unknown): NimbusError {
    if (err instanceof NimbusError) return err;
    const code = errno(err);
    if (what === "get" && (code === "ENOENT" || code === "ENOTDIR")) {
      return new NimbusError(ErrorCode.OBJECT_NOT_FOUND, `no object ${key}`, { cause: err });
    }
    if (code === "ENAMETOOLONG") {
      return new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `${what} ${key}: a key segment is too long for local files`, {
        cause: err,
      });
    }
    return new NimbusError(ErrorCode.SYSTEM_ERROR, `${what} ${key}: ${(err as Error).message}`, { cause: err });
  }
}

/** fsyncs `folder`, and when a put created folders (`firstCreated` the topmost), the parent of each. */
async function syncFolders(folder: string, firstCreated: string | undefined): Promise<void> {
  const folders = [folder];
  if (firstCreated !== undefined) {
    const top = path.dirname(firstCreated);
    for (let f = folder; f !== top && path.dirname(f) !== f; ) {
      f = path.dirname(f);
      folders.push(f);
    }
  }
  for (const f of folders) {
    const handle = await fs.open(f, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

/** The file's modification time (ms since epoch); +Infinity when it is gone (nothing to collect). */
async function modifiedAt(file: string): Promise<number> {
  try {
    return (await fs.stat(file)).mtimeMs;
  } catch (err) {
    if (errno(err) === "ENOENT") return Number.POSITIVE_INFINITY;
    throw err;
  }
}

/** Removes `file`; false when somebody else removed it first. */
async function removed(file: string): Promise<boolean> {
  try {
    await fs.unlink(file);
    return true;
  } catch (err) {
    if (errno(err) === "ENOENT") return false;
    throw err;
  }
}

function isValidKey(key: string): boolean {
  try {
    checkObjectKey(key);
    return true;
  } catch {
    return false;
  }
}
