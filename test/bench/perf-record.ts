/**
 * @module Linux `perf` around a span of a benchmark: `perf record -g` of given processes (every thread) at a fixed
 * rate of their CPU clock (`-e cpu-clock`, so that a sample is a fixed slice of CPU time whatever counters the host
 * has), then, once those processes have ended, `perf script` read back as samples (perf-samples.ts). The processes
 * must run under `node --perf-basic-prof` for their JavaScript to have names; the map files that flag writes
 * (/tmp/perf-<pid>.map, held open by V8 while the process runs) are tidied and read only after the processes ended,
 * then removed. Needs `perf` on the PATH and leave to sample the processes (root, or `kernel.perf_event_paranoid` at
 * most 1): `perfAvailable` says why not.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type PerfSample, parsePerfScript } from "./perf-samples.js";

/** Samples per second of each thread's CPU time: about 1 ms apart, light enough not to bend what it measures. */
export const PERF_HZ = 999;

/** The event sampled: the CPU clock of each thread, a sample every 1/`PERF_HZ` s of it. */
const EVENT = ["-e", "cpu-clock", "-F", String(PERF_HZ)];

/** Why `perf` cannot sample here, or undefined when it can. */
export function perfAvailable(): string | undefined {
  const probe = spawnSync("perf", ["record", "-q", ...EVENT, "-o", "/dev/null", "--", "true"], { encoding: "utf8" });
  if (probe.error) return `perf is not installed (${probe.error.message})`;
  if (probe.status !== 0) return `perf cannot record here: ${probe.stderr.trim().slice(0, 300)}`;
  return undefined;
}

export interface PerfRecording {
  /** Stops recording (SIGINT, as perf expects) once its file is written. */
  stop(): Promise<void>;
  /** The samples recorded, named from the processes' map files: call after `stop` and after those processes ended. */
  samples(): PerfSample[];
}

/** Starts `perf record -g` of every thread of `pids` into `file`. */
export function startPerfRecord(pids: readonly number[], file: string): PerfRecording {
  // `-k mono`: each sample's time on the monotonic clock, the one `process.hrtime` reads, to count a window of it.
  const args = ["record", "-q", "-g", "-k", "mono", ...EVENT, "-o", file, "-p", pids.join(",")];
  const child: ChildProcess = spawn("perf", args, {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (text: string) => {
    stderr = (stderr + text).slice(-2000);
  });
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => resolve(signal ?? `code ${code}`));
    // Not started at all (no `perf` on the PATH): no exit event follows.
    child.once("error", (err) => resolve(`not started: ${err.message}`));
  });
  return {
    async stop() {
      child.kill("SIGINT");
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      const how = await exited;
      clearTimeout(timer);
      // perf ends itself with the signal it was stopped by, once its file is written.
      if (how !== "code 0" && how !== "SIGINT") throw new Error(`perf record exited (${how}): ${stderr.trim()}`);
    },
    samples() {
      try {
        for (const pid of pids) {
          const map = `/tmp/perf-${pid}.map`;
          if (existsSync(map)) writeFileSync(map, latestMapEntries(readFileSync(map, "utf8")));
        }
        const script = spawnSync("perf", ["script", "-i", file, "-F", "comm,pid,tid,time,ip,sym,dso"], {
          encoding: "utf8",
          maxBuffer: 1024 * 1024 * 1024,
        });
        if (script.status !== 0) throw new Error(`perf script failed: ${script.stderr.slice(0, 2000)}`);
        return parsePerfScript(script.stdout);
      } finally {
        for (const pid of pids) rmSync(`/tmp/perf-${pid}.map`, { force: true });
      }
    },
  };
}

interface MapEntry {
  start: number;
  end: number;
  line: string;
}

/**
 * A `--perf-basic-prof` map file (`<start hex> <size hex> <name>` per line, in the order V8 made the code) without
 * the entries that a later entry overlaps: V8 reuses the space of code it freed, and `perf` would otherwise name a
 * sample after whichever of the overlapping entries it kept (on this machine the older: a send path's samples named
 * after protobufjs functions compiled at start-up, in a server with no gRPC door). An entry is dropped when any entry
 * written after it overlaps it (kept or not: a newer entry over the range means the older code was gone by then).
 * The phase sampled is the run's last, so the newest code is the code it ran.
 */
export function latestMapEntries(text: string): string {
  const entries: MapEntry[] = [];
  for (const line of text.split("\n")) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/i.exec(line);
    if (!m) continue;
    const start = Number.parseInt(m[1] ?? "", 16);
    entries.push({ start, end: start + Number.parseInt(m[2] ?? "", 16), line });
  }
  // The union of the ranges of every entry seen so far (newest first), as disjoint ranges sorted by start.
  const seen: { start: number; end: number }[] = [];
  const kept: MapEntry[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as MapEntry;
    // The first seen range that ends after this entry starts: the only one that can overlap it first.
    let lo = 0;
    let hi = seen.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((seen[mid] as { end: number }).end <= entry.start) lo = mid + 1;
      else hi = mid;
    }
    const next = seen[lo];
    if (next === undefined || next.start >= entry.end) kept.push(entry);
    // Merge the entry into the union: it joins every range from `lo` on that it touches.
    let merged = { start: entry.start, end: entry.end };
    let last = lo;
    while (last < seen.length && (seen[last] as { start: number }).start <= merged.end) {
      const range = seen[last] as { start: number; end: number };
      merged = { start: Math.min(merged.start, range.start), end: Math.max(merged.end, range.end) };
      last++;
    }
    seen.splice(lo, last - lo, merged);
  }
  kept.sort((a, b) => a.start - b.start);
  return `${kept.map((e) => e.line).join("\n")}\n`;
}
