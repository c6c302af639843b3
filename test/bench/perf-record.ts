/**
 * @module Linux `perf` around a span of a benchmark: `perf record -g` of given processes (every thread) at a fixed
 * rate of their CPU clock, then `perf script` read back as samples (perf-samples.ts). The processes must run under
 * `node --perf-basic-prof` for their JavaScript to have names; the map files that flag writes (/tmp/perf-<pid>.map)
 * are removed after reading. Needs `perf` on the PATH and leave to sample the processes (root, or
 * `kernel.perf_event_paranoid` at most 1): `perfAvailable` says why not.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type PerfSample, parsePerfScript } from "./perf-samples.js";

/** Samples per second of each thread's CPU time: about 1 ms apart, light enough not to bend what it measures. */
export const PERF_HZ = 999;

/** Why `perf` cannot sample here, or undefined when it can. */
export function perfAvailable(): string | undefined {
  const probe = spawnSync("perf", ["record", "-q", "-F", String(PERF_HZ), "-o", "/dev/null", "--", "true"], {
    encoding: "utf8",
  });
  if (probe.error) return `perf is not installed (${probe.error.message})`;
  if (probe.status !== 0) return `perf cannot record here: ${probe.stderr.trim().slice(0, 300)}`;
  return undefined;
}

export interface PerfRecording {
  /** Stops recording (SIGINT, as perf expects) and answers the samples. */
  stop(): Promise<PerfSample[]>;
}

/** Starts `perf record -g` of every thread of `pids` into `file`. */
export function startPerfRecord(pids: readonly number[], file: string): PerfRecording {
  const child: ChildProcess = spawn(
    "perf",
    ["record", "-q", "-g", "-F", String(PERF_HZ), "-o", file, "-p", pids.join(",")],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
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
      for (const pid of pids) {
        const map = `/tmp/perf-${pid}.map`;
        if (existsSync(map)) writeFileSync(map, latestMapEntries(readFileSync(map, "utf8")));
      }
      const script = spawnSync("perf", ["script", "-i", file, "-F", "comm,pid,tid,ip,sym,dso"], {
        encoding: "utf8",
        maxBuffer: 1024 * 1024 * 1024,
      });
      for (const pid of pids) rmSync(`/tmp/perf-${pid}.map`, { force: true });
      if (script.status !== 0) throw new Error(`perf script failed: ${script.stderr.slice(0, 2000)}`);
      return parsePerfScript(script.stdout);
    },
  };
}

/**
 * A `--perf-basic-prof` map file (`<start hex> <size hex> <name>` per line, in the order V8 made the code) with only
 * the newest entry wherever entries overlap: V8 reuses the space of code it freed, and `perf` would otherwise name a
 * sample after whichever of the overlapping entries it kept (on this machine the older: a send path's samples named
 * after protobufjs functions compiled at start-up, in a server with no gRPC door). The phase sampled is the run's last,
 * so the newest code is the code it ran.
 */
export function latestMapEntries(text: string): string {
  const entries = text
    .split("\n")
    .map((line, written) => {
      const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/i.exec(line);
      return m
        ? { start: Number.parseInt(m[1] ?? "", 16), size: Number.parseInt(m[2] ?? "", 16), line, written }
        : undefined;
    })
    .filter((e) => e !== undefined)
    .sort((a, b) => a.start - b.start || a.written - b.written);
  const kept: typeof entries = [];
  for (const entry of entries) {
    let newest = true;
    // Entries ending after this one starts overlap it: of each pair, the one written later stays.
    while (kept.length > 0) {
      const last = kept[kept.length - 1];
      if (last === undefined || last.start + last.size <= entry.start) break;
      if (last.written > entry.written) {
        newest = false;
        break;
      }
      kept.pop();
    }
    if (newest) kept.push(entry);
  }
  return `${kept.map((e) => e.line).join("\n")}\n`;
}
