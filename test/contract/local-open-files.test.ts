/**
 * @module The local object store's open files (lib/storage/local/open-files.ts): repeated reads of an object
 * open its file once; an object replaced or deleted by another store on the same folder (another process) is
 * read from its path again, never from the file kept open; at most `MAX_OPEN_FILES` stay open, the least
 * recently read closed first; closing the store closes them. Asserted by the store's open counts.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { ErrorCode } from "../../lib/core/errors.js";
import { FileObjectStore } from "../../lib/storage/local/file-object-store.js";
import { MAX_OPEN_FILES } from "../../lib/storage/local/open-files.js";
import { RequestCounter } from "../../lib/storage/request-counter.js";

const root = mkdtempSync(path.join(os.tmpdir(), "nimbus-open-files-"));
after(() => rmSync(root, { recursive: true, force: true }));
let folders = 0;
/** Two stores on one fresh folder: this process's and another's view. */
function stores(): [FileObjectStore, FileObjectStore] {
  const folder = path.join(root, String(++folders));
  return [new FileObjectStore(folder, new RequestCounter()), new FileObjectStore(folder, new RequestCounter())];
}
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const bytes = (s: string) => new TextEncoder().encode(s);

describe("local object store: open files", () => {
  it("ranged reads of one object open its file once", async () => {
    const [store] = stores();
    await store.put("batches/a", bytes("0123456789"));
    const parts = [];
    for (let i = 0; i < 5; i++) parts.push(text(await store.get("batches/a", { offset: i * 2, length: 2 })));
    assert.deepEqual(parts, ["01", "23", "45", "67", "89"]);
    assert.deepEqual(store.openFiles, { open: 1, opened: 1 });
    store.close();
    assert.equal(store.openFiles.open, 0);
  });

  it("an object another store replaces or deletes is read from its path again", async () => {
    const [mine, other] = stores();
    await mine.put("batches/b", bytes("old bytes"));
    assert.equal(text(await mine.get("batches/b")), "old bytes");
    await other.put("batches/b", bytes("new bytes!"));
    assert.equal(text(await mine.get("batches/b")), "new bytes!", "the replaced file is not read");
    assert.deepEqual(mine.openFiles, { open: 1, opened: 2 });
    await other.delete(["batches/b"]);
    await assert.rejects(mine.get("batches/b"), { code: ErrorCode.OBJECT_NOT_FOUND });
    assert.equal(mine.openFiles.open, 0, "the deleted file is closed");
    mine.close();
  });

  it("this store's own put and delete close the file it kept open", async () => {
    const [store] = stores();
    await store.put("batches/c", bytes("one"));
    await store.get("batches/c");
    await store.put("batches/c", bytes("two"));
    assert.equal(store.openFiles.open, 0);
    assert.equal(text(await store.get("batches/c")), "two");
    await store.delete(["batches/c"]);
    assert.equal(store.openFiles.open, 0);
    await assert.rejects(store.get("batches/c"), { code: ErrorCode.OBJECT_NOT_FOUND });
  });

  it(`at most ${MAX_OPEN_FILES} files stay open; the least recently read is opened again`, async () => {
    const [store] = stores();
    const keys = Array.from({ length: MAX_OPEN_FILES + 8 }, (_, i) => `batches/k${i}`);
    for (const key of keys) await store.put(key, bytes(key));
    for (const key of keys) assert.equal(text(await store.get(key)), key);
    assert.deepEqual(store.openFiles, { open: MAX_OPEN_FILES, opened: keys.length });
    assert.equal(text(await store.get(keys[keys.length - 1] as string)), keys[keys.length - 1], "kept open");
    assert.equal(store.openFiles.opened, keys.length);
    assert.equal(text(await store.get(keys[0] as string)), keys[0], "evicted, read from disk again");
    assert.deepEqual(store.openFiles, { open: MAX_OPEN_FILES, opened: keys.length + 1 });
    store.close();
  });

  it("a range past the end is refused and the file stays usable", async () => {
    const [store] = stores();
    await store.put("batches/d", bytes("abc"));
    await assert.rejects(store.get("batches/d", { offset: 3, length: 1 }), { code: ErrorCode.INVALID_RANGE });
    assert.equal(text(await store.get("batches/d", { offset: 1, length: 2 })), "bc");
    store.close();
  });
});
