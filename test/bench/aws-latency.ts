/**
 * @module The benchmark's AWS latencies: a `Storage` that delays every call of the AWS adapters (on the
 * emulators, which answer in about a millisecond) by a latency drawn from a log-normal distribution with the
 * given p50 and p99 — S3 PUT 30/100 ms, S3 GET 15/60 ms, DynamoDB 5/15 ms by default, roughly what AWS shows
 * from a Lambda in the same region. The delay comes before the call, so what a caller sees is the injected
 * latency plus the emulator's own.
 */
import type { ObjectStore } from "../../lib/storage/object-store.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { Table, TableSpec } from "../../lib/storage/table.js";

export interface LatencyProfile {
  p50Ms: number;
  p99Ms: number;
}

export interface AwsLatencies {
  s3Put: LatencyProfile;
  s3Get: LatencyProfile;
  dynamo: LatencyProfile;
}

export const DEFAULT_AWS_LATENCIES: AwsLatencies = {
  s3Put: { p50Ms: 30, p99Ms: 100 },
  s3Get: { p50Ms: 15, p99Ms: 60 },
  dynamo: { p50Ms: 5, p99Ms: 15 },
};

/** `"30/100"` → { p50Ms: 30, p99Ms: 100 }. */
export function parseProfile(text: string, name: string): LatencyProfile {
  const m = /^(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)$/.exec(text);
  if (!m) throw new Error(`--${name} must be p50/p99 in ms (e.g. 30/100), got ${text}`);
  const p50Ms = Number(m[1]);
  const p99Ms = Number(m[2]);
  if (p99Ms < p50Ms) throw new Error(`--${name}: p99 below p50`);
  return { p50Ms, p99Ms };
}

/** Z of the 99th percentile of the standard normal. */
const Z99 = 2.3263;

/** A draw with median p50 and 99th percentile p99 (log-normal); a standard normal by Box-Muller. */
export function drawLatency(p: LatencyProfile): number {
  if (p.p50Ms <= 0) return 0;
  const sigma = p.p99Ms > p.p50Ms ? Math.log(p.p99Ms / p.p50Ms) / Z99 : 0;
  const u = 1 - Math.random();
  const v = Math.random();
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  return p.p50Ms * Math.exp(sigma * z);
}

const delay = (p: LatencyProfile) => new Promise<void>((resolve) => setTimeout(resolve, drawLatency(p)));

/** `call` after a delay drawn from `p`. */
function slow<A extends unknown[], R>(p: LatencyProfile, call: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    await delay(p);
    return call(...args);
  };
}

/** `storage` with every table and object call delayed as `latencies` say. */
export function withAwsLatencies(storage: Storage, latencies: AwsLatencies): Storage {
  const tables = new Map<string, Table>();
  const table = (spec: TableSpec): Table => {
    const inner = storage.table(spec);
    const cached = tables.get(spec.name);
    if (cached) return cached;
    const slowed: Table = {
      spec: inner.spec,
      counter: inner.counter,
      get: slow(latencies.dynamo, (...args) => inner.get(...args)),
      put: slow(latencies.dynamo, (...args) => inner.put(...args)),
      add: slow(latencies.dynamo, (...args) => inner.add(...args)),
      delete: slow(latencies.dynamo, (...args) => inner.delete(...args)),
      query: slow(latencies.dynamo, (...args) => inner.query(...args)),
    };
    tables.set(spec.name, slowed);
    return slowed;
  };
  const o = storage.objects;
  const objects: ObjectStore = {
    counter: o.counter,
    hedgePuts: o.hedgePuts,
    put: slow(latencies.s3Put, (...args) => o.put(...args)),
    get: slow(latencies.s3Get, (...args) => o.get(...args)),
    list: slow(latencies.s3Get, (...args) => o.list(...args)),
    delete: slow(latencies.s3Put, (...args) => o.delete(...args)),
  };
  return {
    table,
    objects,
    counter: storage.counter,
    // The AWS adapters have no garbage sweep (the bucket's lifecycle rule does it).
    close: () => storage.close(),
  };
}
