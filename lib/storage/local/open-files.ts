/**
 * @module The object files a local store keeps open for reads, at most `limit`, the least recently read closed
 * first. A pull reads several batches of one shared object: each read is then an `fstat` and a `pread` on a
 * file already open, not an open, a stat, a read and a close. A file whose link count is 0 was deleted or
 * replaced (a put renames a new file over the key's): it is closed and the key's path opened again, so a read
 * never answers from a file the key no longer names, whichever process changed it.
 */
import { closeSync, fstatSync, openSync } from "node:fs";

/** The most files one store keeps open for reads. */
export const MAX_OPEN_FILES = 64;

export class OpenFiles {
  /** Path → descriptor, the least recently read first. */
  readonly #open = new Map<string, number>();
  /** Files opened (a cold read, or one whose file was replaced): for tests and the benchmark. */
  opened = 0;

  constructor(readonly limit = MAX_OPEN_FILES) {}

  /** How many files are open now. */
  get size(): number {
    return this.#open.size;
  }

  /**
   * Runs `read` on `file` opened for reading, with its size. Throws what `openSync` throws (ENOENT for a
   * missing file); a read that throws closes the file.
   */
  read<T>(file: string, read: (fd: number, size: number) => T): T {
    let fd = this.#open.get(file);
    let size = 0;
    if (fd !== undefined) {
      this.#open.delete(file);
      const stat = statOf(fd);
      if (stat === undefined || stat.nlink === 0) {
        closeSync(fd);
        fd = undefined;
      } else size = stat.size;
    }
    if (fd === undefined) {
      fd = openSync(file, "r");
      this.opened++;
      try {
        size = fstatSync(fd).size;
      } catch (err) {
        closeSync(fd);
        throw err;
      }
    }
    try {
      const result = read(fd, size);
      this.#keep(file, fd);
      return result;
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** Closes `file` if it is open (this process deleted or replaced it). */
  forget(file: string): void {
    const fd = this.#open.get(file);
    if (fd === undefined) return;
    this.#open.delete(file);
    closeSync(fd);
  }

  closeAll(): void {
    for (const fd of this.#open.values()) closeSync(fd);
    this.#open.clear();
  }

  #keep(file: string, fd: number): void {
    this.#open.set(file, fd);
    if (this.#open.size <= this.limit) return;
    const [oldest, oldestFd] = this.#open.entries().next().value as [string, number];
    this.#open.delete(oldest);
    closeSync(oldestFd);
  }
}

function statOf(fd: number): { nlink: number; size: number } | undefined {
  try {
    return fstatSync(fd);
  } catch {
    return undefined;
  }
}
