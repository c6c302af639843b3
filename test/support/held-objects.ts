/**
 * @module An object store whose puts wait until the test releases them, one by one, then go to the real store
 * (or fail with the error given): tests of the shared-object writer's flush cycle take its path step by step.
 */
import type { ObjectStore } from "../../lib/storage/object-store.js";
import type { Storage } from "../../lib/storage/storage.js";

export interface HeldPut {
  key: string;
  body: Uint8Array;
  release: (err?: Error) => void;
}

/** `hedgePuts` says what the held store claims (the hedged-PUT tests hold S3-like PUTs on the file store). */
export function heldObjects(
  objects: ObjectStore,
  hedgePuts: boolean | undefined = objects.hedgePuts,
): { store: ObjectStore; puts: HeldPut[] } {
  const puts: HeldPut[] = [];
  const store: ObjectStore = {
    counter: objects.counter,
    hedgePuts,
    put: (key, body) =>
      new Promise<void>((resolve, reject) => {
        puts.push({
          key,
          body,
          release: (err) => (err ? reject(err) : objects.put(key, body).then(resolve, reject)),
        });
      }),
    get: (key, range) => objects.get(key, range),
    list: (prefix, options) => objects.list(prefix, options),
    delete: (keys) => objects.delete(keys),
  };
  return { store, puts };
}

/** `storage` with its object puts held (its tables and counter as they are; closing it closes nothing). */
export function withHeldObjects(storage: Storage): { storage: Storage; puts: HeldPut[] } {
  const { store, puts } = heldObjects(storage.objects);
  return {
    storage: { table: (spec) => storage.table(spec), objects: store, counter: storage.counter, close: async () => {} },
    puts,
  };
}

/**
 * Lets the event loop run until `done` holds. A step may wait on a storage request (DynamoDB Local answers in its
 * own time, slower on a loaded machine), so after the first turns it also lets timers and I/O run; only a step that
 * has not come in 30 s fails (a bound on a hang, not an assertion on the time).
 */
export async function until(done: () => boolean): Promise<void> {
  const giveUpAt = Date.now() + 30_000;
  for (let i = 0; !done() && Date.now() < giveUpAt; i++) {
    if (i < 1000) await new Promise<void>((resolve) => setImmediate(resolve));
    else await new Promise<void>((resolve) => setTimeout(resolve, 5));
  }
  if (!done()) throw new Error("the expected step never came");
}

/** `n` turns of the event loop. */
export async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
