/**
 * @module One set of emulators per DynamoDB backend per process, shared by every fixture and test server
 * open at the same time: the first user starts it, the last one stops it (so a test file exits on its own;
 * a later user starts a new set). DynamoDB Local is a JVM that takes seconds to start, so a test file on it
 * holds it for all its tests (`holdEmulators`) instead of starting one per `describe`.
 */
import { after, before } from "node:test";
import type { AwsStorageOptions } from "../../lib/storage/aws/index.js";
import { type DynamoBackend, type Emulators, emulatorStorageOptions, startEmulators } from "./emulators.js";

interface Shared {
  emulators: Promise<Emulators>;
  users: number;
}

const shared = new Map<DynamoBackend, Shared>();

export interface EmulatorsLease {
  emulators: Emulators;
  /** Gives the emulators back; the last lease stops them. Idempotent. */
  release(): Promise<void>;
}

export async function acquireEmulators(backend: DynamoBackend = "dynalite"): Promise<EmulatorsLease> {
  let current = shared.get(backend);
  if (current === undefined) {
    const emulators = startEmulators(backend);
    const started: Shared = { emulators, users: 0 };
    current = started;
    shared.set(backend, started);
    emulators.catch(() => {
      if (shared.get(backend) === started) shared.delete(backend);
    });
  }
  const lease = current;
  lease.users++;
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    lease.users--;
    if (lease.users > 0) return;
    if (shared.get(backend) === lease) shared.delete(backend);
    await (await lease.emulators).stop();
  };
  try {
    return { emulators: await lease.emulators, release };
  } catch (err) {
    await release().catch(() => undefined);
    throw err;
  }
}

/**
 * Holds `backend`'s emulators from before the first test of the enclosing `describe` (or file) to after its
 * last, so the fixtures and servers inside reuse one set. `after` runs when a test fails too.
 */
export function holdEmulators(backend: DynamoBackend): void {
  let lease: EmulatorsLease | undefined;
  before(async () => {
    lease = await acquireEmulators(backend);
  });
  after(async () => {
    await lease?.release();
  });
}

let optionsSeq = 0;

/**
 * Storage options on `backend`'s shared emulators with a fresh bucket and table prefix per `describe`, for
 * tests that provision by themselves; one attempt per request (no SDK retries).
 */
export function useEmulatorOptions(backend: DynamoBackend, prefix: string): () => AwsStorageOptions {
  let options: AwsStorageOptions | undefined;
  let lease: EmulatorsLease | undefined;
  before(async () => {
    lease = await acquireEmulators(backend);
    optionsSeq++;
    const names = { bucket: `nimbus-${prefix}-${process.pid}-${optionsSeq}`, tablePrefix: `${prefix}${optionsSeq}-` };
    options = { ...emulatorStorageOptions(lease.emulators, names), maxAttempts: 1 };
  });
  after(async () => {
    await lease?.release();
  });
  return () => {
    if (options === undefined) throw new Error("the emulators are not started (use it inside tests)");
    return options;
  };
}
