/**
 * @module A `Storage` wrapper that injects faults around a real adapter, at the port: what a flaky
 * network or an overloaded backend does to a caller, for adapters that have no network (the embedded
 * store) and for tests of the queue log's own handling. Per call, with the plan's probabilities:
 *
 * - `throttle`: SYSTEM_BUSY before the call reaches the adapter (nothing applied);
 * - `dropReply` (writes): the call is applied, then SYSTEM_BUSY instead of its answer;
 * - `lateApply` (writes): SYSTEM_BUSY at once, and the call is applied `lateApplyMs` later (a timeout
 *   whose request still lands);
 * - `latency`: the call waits `latencyMs` first.
 *
 * `beforeIndexPut` runs before every put of an index item (the chaos workers kill themselves there).
 */
import { ErrorCode, NimbusError } from "../../lib/core/errors.js";
import type { ObjectStore } from "../../lib/storage/object-store.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { Item, Table, TableSpec } from "../../lib/storage/table.js";

export interface FaultPlan {
  throttle: number;
  dropReply: number;
  lateApply: number;
  latency: number;
  latencyMs: number;
  lateApplyMs: number;
}

export const NO_FAULTS: FaultPlan = {
  throttle: 0,
  dropReply: 0,
  lateApply: 0,
  latency: 0,
  latencyMs: 0,
  lateApplyMs: 0,
};

export interface FaultCounts {
  throttled: number;
  droppedReplies: number;
  lateApplied: number;
  latencySpikes: number;
}

export const noFaultCounts = (): FaultCounts => ({ throttled: 0, droppedReplies: 0, lateApplied: 0, latencySpikes: 0 });

export interface FaultStorageOptions {
  plan: FaultPlan;
  counts: FaultCounts;
  /** Which calls may fail; default every call. */
  applies?: (what: string) => boolean;
  beforeIndexPut?: (item: Item) => void;
  random?: () => number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs `call` through the plan's faults. `write` calls may be applied without an answer. */
function faulty<T>(options: FaultStorageOptions, what: string, write: boolean, call: () => Promise<T>): Promise<T> {
  const { plan, counts } = options;
  const random = options.random ?? Math.random;
  if (options.applies && !options.applies(what)) return call();
  return (async () => {
    if (random() < plan.latency) {
      counts.latencySpikes++;
      await sleep(plan.latencyMs);
    }
    if (random() < plan.throttle) {
      counts.throttled++;
      throw new NimbusError(ErrorCode.SYSTEM_BUSY, `${what}: throttled (injected)`);
    }
    if (write && random() < plan.lateApply) {
      counts.lateApplied++;
      void sleep(plan.lateApplyMs)
        .then(call)
        .catch(() => undefined);
      throw new NimbusError(ErrorCode.SYSTEM_BUSY, `${what}: timed out (injected; the write lands later)`);
    }
    const result = await call();
    if (write && random() < plan.dropReply) {
      counts.droppedReplies++;
      throw new NimbusError(ErrorCode.SYSTEM_BUSY, `${what}: reply lost (injected; the write was applied)`);
    }
    return result;
  })();
}

function faultyTable(table: Table, options: FaultStorageOptions): Table {
  const name = table.spec.name;
  return {
    spec: table.spec,
    counter: table.counter,
    get: (key, o) => faulty(options, `${name}.get`, false, () => table.get(key, o)),
    put: (item, o) => {
      if (name === "queue-index") options.beforeIndexPut?.(item);
      return faulty(options, `${name}.put`, true, () => table.put(item, o));
    },
    add: (key, attribute, delta, o) => faulty(options, `${name}.add`, true, () => table.add(key, attribute, delta, o)),
    delete: (key) => faulty(options, `${name}.delete`, true, () => table.delete(key)),
    query: (pk, o) => faulty(options, `${name}.query`, false, () => table.query(pk, o)),
  };
}

function faultyObjects(objects: ObjectStore, options: FaultStorageOptions): ObjectStore {
  return {
    counter: objects.counter,
    put: (key, body) => faulty(options, "objects.put", true, () => objects.put(key, body)),
    get: (key, range) => faulty(options, "objects.get", false, () => objects.get(key, range)),
    list: (prefix, o) => faulty(options, "objects.list", false, () => objects.list(prefix, o)),
    delete: (keys) => faulty(options, "objects.delete", true, () => objects.delete(keys)),
  };
}

/** `storage` with faults injected into every table and the object store, per `options.plan`. */
export function withFaults(storage: Storage, options: FaultStorageOptions): Storage {
  const tables = new Map<string, Table>();
  const collectGarbage = storage.collectGarbage?.bind(storage);
  return {
    counter: storage.counter,
    objects: faultyObjects(storage.objects, options),
    close: () => storage.close(),
    ...(collectGarbage ? { collectGarbage } : {}),
    table(spec: TableSpec): Table {
      let table = tables.get(spec.name);
      if (!table) {
        table = faultyTable(storage.table(spec), options);
        tables.set(spec.name, table);
      }
      return table;
    },
  };
}
