/**
 * @module Measuring one benchmark phase: its wall time, this process's CPU time and (for an in-process server)
 * the storage requests made between `startMeter` and `stop`, and the rates every phase reports from them.
 */
import type { LocalServer } from "../../lib/dev/local-server.js";
import { diffCounts, type RequestCounts } from "../../lib/storage/request-counter.js";
import { type LatencySummary, round, summarize } from "./stats.js";

/** What a phase took: wall time in ms, CPU time used, and the storage requests (none against an external server). */
export interface Measured<C> {
  ms: number;
  cpu: NodeJS.CpuUsage;
  counts: C;
}

export interface Meter<C> {
  /** `performance.now()` when the meter started (a phase's budget counts from it). */
  started: number;
  stop(): Measured<C>;
}

export function startMeter(server: LocalServer): Meter<RequestCounts>;
export function startMeter(server: LocalServer | undefined): Meter<RequestCounts | undefined>;
export function startMeter(server: LocalServer | undefined): Meter<RequestCounts | undefined> {
  const before = server?.storage.counter.snapshot();
  const cpu = process.cpuUsage();
  const started = performance.now();
  return {
    started,
    stop() {
      const ms = performance.now() - started;
      const counts = server && before ? diffCounts(server.storage.counter.snapshot(), before) : undefined;
      return { ms, cpu: process.cpuUsage(cpu), counts };
    },
  };
}

export interface PhaseRates {
  seconds: number;
  msgsPerSec: number;
  /** CPU time of this whole process (client, server and emulators) per message, user + system, in µs. */
  cpuUsPerMsg: number;
  latency: LatencySummary;
}

/** The rates of a phase that moved `messages` in `ms` using `cpu`, with one latency sample a call. */
export function phaseRates(messages: number, ms: number, cpu: NodeJS.CpuUsage, latencies: number[]): PhaseRates {
  return {
    seconds: round(ms / 1000, 3),
    msgsPerSec: round(messages / (ms / 1000), 1),
    cpuUsPerMsg: round((cpu.user + cpu.system) / Math.max(1, messages), 1),
    latency: summarize(latencies),
  };
}
