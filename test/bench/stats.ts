/**
 * @module Numbers for the data-plane benchmark: latency percentiles, request counts per message, and the
 * AWS price model of ARCHITECTURE.md §6 (us-east-1, on demand). Lambda duration, storage (GB-month) and
 * data transfer are not priced: only requests and capacity units are.
 */
import { readdirSync, readFileSync } from "node:fs";
import type { RequestCounts } from "../../lib/storage/request-counter.js";

/** USD per million, ARCHITECTURE.md §6. */
export const PRICES_PER_MILLION = {
  writeUnit: 0.625,
  readUnit: 0.125,
  s3Put: 5,
  s3Get: 0.4,
  lambdaCall: 0.2,
  apiRequest: 1,
} as const;

/** Amazon SQS standard: $0.40 per million requests, each of up to 10 messages (64 KB chunks). */
export const SQS_PER_MILLION_REQUESTS = 0.4;

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

/** Nearest-rank percentile of sorted samples (`p` in 0..100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}

export function summarize(samplesMs: readonly number[]): LatencySummary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const sum = sorted.reduce((s, x) => s + x, 0);
  return {
    count: sorted.length,
    p50Ms: round(percentile(sorted, 50), 2),
    p99Ms: round(percentile(sorted, 99), 2),
    maxMs: round(sorted[sorted.length - 1] ?? Number.NaN, 2),
    meanMs: round(sorted.length === 0 ? Number.NaN : sum / sorted.length, 2),
  };
}

/** AWS requests and capacity units per message (or per call), from a counter diff. */
export interface PerUnit {
  /** HTTP API calls (each one API Gateway request and one Lambda invocation). */
  apiCalls: number;
  tableReads: number;
  tableWrites: number;
  readUnits: number;
  writeUnits: number;
  s3Puts: number;
  s3Gets: number;
}

export function perUnit(counts: RequestCounts, apiCalls: number, units: number): PerUnit {
  const d = Math.max(1, units);
  return {
    apiCalls: apiCalls / d,
    tableReads: counts.tableReads / d,
    tableWrites: counts.tableWrites / d,
    readUnits: counts.readUnits / d,
    writeUnits: counts.writeUnits / d,
    s3Puts: counts.objectPuts / d,
    s3Gets: counts.objectGets / d,
  };
}

export interface CostBreakdown {
  dynamo: number;
  s3: number;
  /** API Gateway + Lambda invocations (duration excluded). */
  api: number;
  total: number;
}

/** USD per million of the unit `p` is expressed in (per million messages, or per million polls). */
export function costPerMillion(p: PerUnit): CostBreakdown {
  const P = PRICES_PER_MILLION;
  const dynamo = p.writeUnits * P.writeUnit + p.readUnits * P.readUnit;
  const s3 = p.s3Puts * P.s3Put + p.s3Gets * P.s3Get;
  const api = p.apiCalls * (P.apiRequest + P.lambdaCall);
  return { dynamo: round(dynamo, 4), s3: round(s3, 4), api: round(api, 4), total: round(dynamo + s3 + api, 4) };
}

export function round(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Rounds every number of a `PerUnit` for printing and the JSON line. */
export function roundPerUnit(p: PerUnit, digits = 4): PerUnit {
  return {
    apiCalls: round(p.apiCalls, digits),
    tableReads: round(p.tableReads, digits),
    tableWrites: round(p.tableWrites, digits),
    readUnits: round(p.readUnits, digits),
    writeUnits: round(p.writeUnits, digits),
    s3Puts: round(p.s3Puts, digits),
    s3Gets: round(p.s3Gets, digits),
  };
}

/** CPU seconds in the text of a /proc `stat` file, a process's or a thread's (utime + stime, at 100 ticks/s). */
export function statCpuSeconds(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds of a process from /proc, 0 where there is no /proc. */
export function procCpuSeconds(pid: number): number {
  try {
    return statCpuSeconds(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return 0;
  }
}

/** The parent pid of each live process, from /proc. */
function parentPids(): Map<number, number> {
  const parents = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fields = readFileSync(`/proc/${name}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      parents.set(Number(name), Number(fields[1]));
    } catch {
      // gone since the listing
    }
  }
  return parents;
}

/** `pid` and every live process below it (a `--workers` server's workers), `pid` first. */
export function procTree(pid: number): number[] {
  const parents = parentPids();
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, parent] of parents)
      if (tree.has(parent) && !tree.has(child)) {
        tree.add(child);
        grew = true;
      }
  }
  return [...tree];
}

/** CPU seconds used so far by `pid` and every live process below it (a `--workers` server's workers). */
export function procTreeCpuSeconds(pid: number): number {
  let sum = 0;
  for (const p of procTree(pid)) sum += procCpuSeconds(p);
  return sum;
}
