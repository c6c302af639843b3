/**
 * @module Reads what `perf script -F comm,pid,tid,time,ip,sym,dso` prints for a `perf record -g` of `nimbus dev` run
 * under `node --perf-basic-prof` (JIT-compiled functions named in /tmp/perf-<pid>.map) and counts it as
 * `npm run bench:profile -- --sampler perf` reports it. Unlike V8's own sampler (`--cpu-prof`), which takes a sample
 * on a timer whether or not the thread is running, `perf`'s CPU clock samples a thread only while it runs on a core,
 * so a thread preempted by the client on a shared machine is not charged for the client's turn.
 * - Each process's main thread (its tid is its pid) by part of the path, as `profileByPart` counts V8's
 *   samples: a sample is charged to its innermost JavaScript frame (native code, system calls and V8's builtins to
 *   the JavaScript that called them), except that garbage collection is its own part wherever it was triggered and
 *   SQLite's own code is the store's. A function still interpreted has no frame of its own in the map (its time is
 *   charged to the nearest compiled caller): after a warm-up, little is.
 * - The processes' other threads by what they ran: V8's garbage-collection helpers, its optimizing compiler,
 *   SQLite (the WAL checkpoint thread), the rest.
 * - The innermost frames by self time, main threads only.
 */
import { PROFILE_PARTS, type ProfilePart, partOf, type SampleWindow } from "./profile-summary.js";

export interface PerfFrame {
  symbol: string;
  /** The file the frame's code is in: a binary, a shared library, `[kernel.kallsyms]`, or a `perf-<pid>.map`. */
  dso: string;
}

export interface PerfSample {
  pid: number;
  tid: number;
  /** When it was taken, µs on the monotonic clock (`perf record -k mono`: `process.hrtime`'s), if printed. */
  atUs: number | undefined;
  /** Innermost first. */
  frames: PerfFrame[];
}

/** A sample's header: `comm pid/tid`, then `seconds.micros:` when the time is printed (the command may hold spaces). */
const HEADER = /^\S.*?\s(\d+)\/(\d+)(?:\s+(\d+)\.(\d{6}):)?\s*$/;
/** A stack line: the address, the symbol (may hold spaces and parentheses), the DSO in parentheses at the end. */
const FRAME = /^\s+[0-9a-f]+\s+(.*?)\s+\(([^()]*)\)\s*$/;

/** The samples of a `perf script -F comm,pid,tid[,time],ip,sym,dso` text (others' lines are skipped). */
export function parsePerfScript(text: string): PerfSample[] {
  const samples: PerfSample[] = [];
  let current: PerfSample | undefined;
  for (const line of text.split("\n")) {
    if (line.trim() === "") {
      current = undefined;
      continue;
    }
    const header = HEADER.exec(line);
    if (header) {
      const atUs = header[3] === undefined ? undefined : Number(header[3]) * 1e6 + Number(header[4]);
      current = { pid: Number(header[1]), tid: Number(header[2]), atUs, frames: [] };
      samples.push(current);
      continue;
    }
    const frame = FRAME.exec(line);
    if (frame && current) current.frames.push({ symbol: frame[1] ?? "", dso: frame[2] ?? "" });
  }
  return samples;
}

/**
 * A JIT-compiled function as `--perf-basic-prof` names it: `JS:*name url:line:column` (`*` optimized, `^`, `~`). The
 * name may hold spaces (`get size`), the URL not, and is empty for a script with none (`JS:^ :3:17`).
 */
const JS_FRAME = /^(?:JS|LazyCompile|Function):[*^~+-]?(.*) (\S*?)(?::\d+:\d+)?$/;

/** The function and script of a JavaScript frame, or undefined for native code. */
export function jsFrame(frame: PerfFrame): { functionName: string; url: string } | undefined {
  if (!frame.dso.includes("perf-") || !frame.dso.endsWith(".map")) return undefined;
  const m = JS_FRAME.exec(frame.symbol);
  return m ? { functionName: m[1] ?? "", url: m[2] ?? "" } : undefined;
}

/** V8's garbage collector's frames, on the main thread or a helper. */
const GC_FRAME =
  /v8::internal::(Heap::(CollectGarbage|PerformGarbageCollection)|Scavenger|MarkCompactCollector|MinorMarkCompact|ConcurrentMarking|IncrementalMarking|Sweeper|MarkingBarrier)/;
const COMPILER_FRAME = /v8::internal::(compiler::|OptimizingCompileDispatcher|maglev::|baseline::)/;

const isSqlite = (f: PerfFrame) => f.dso.endsWith("better_sqlite3.node");

/** The part of the path a main-thread sample is charged to. */
export function samplePart(sample: PerfSample): ProfilePart {
  if (sample.frames.some((f) => GC_FRAME.test(f.symbol))) return "garbage collection";
  const inner = sample.frames[0];
  if (inner && isSqlite(inner)) return "store (lib/storage, SQLite, AWS SDK)";
  for (const frame of sample.frames) {
    const js = jsFrame(frame);
    if (js) return partOf(js) ?? "Node runtime (net, streams, timers, crypto)";
  }
  // No JavaScript on the stack: the event loop itself (waking from epoll, libuv's callbacks into C++).
  return "Node runtime (net, streams, timers, crypto)";
}

/** What a thread other than a main thread ran, by its sample's stack. */
export function helperKind(sample: PerfSample): string {
  if (sample.frames.some((f) => GC_FRAME.test(f.symbol))) return "garbage collection helpers";
  if (sample.frames.some((f) => COMPILER_FRAME.test(f.symbol))) return "V8's optimizing compiler";
  if (sample.frames.some(isSqlite)) return "SQLite (the WAL checkpoint thread)";
  return "other";
}

export interface PerfByPart {
  /** CPU µs of the main threads by part of the path. */
  parts: Map<ProfilePart, number>;
  /** CPU µs of the other threads by what they ran. */
  helpers: Map<string, number>;
  /** CPU µs of the main threads by innermost frame (`symbol (file)`), largest first. */
  top: [string, number][];
  /** CPU µs of the main threads in the kernel (system calls, waking other threads, scheduling), whatever the part. */
  kernel: number;
  /** The samples counted (within the window). */
  samples: number;
}

/** Counts `samples` taken at `hz` samples per second of a thread's CPU time, those within `window` if given. */
export function perfByPart(samples: readonly PerfSample[], hz: number, window?: SampleWindow): PerfByPart {
  const us = 1e6 / hz;
  const parts = new Map<ProfilePart, number>();
  const helpers = new Map<string, number>();
  const self = new Map<string, number>();
  let kernel = 0;
  let counted = 0;
  for (const sample of samples) {
    const at = sample.atUs;
    if (window !== undefined && (at === undefined || at < window.fromUs || at > window.toUs)) continue;
    counted++;
    if (sample.tid !== sample.pid) {
      const kind = helperKind(sample);
      helpers.set(kind, (helpers.get(kind) ?? 0) + us);
      continue;
    }
    const part = samplePart(sample);
    parts.set(part, (parts.get(part) ?? 0) + us);
    const inner = sample.frames[0];
    if (inner?.dso === "[kernel.kallsyms]") kernel += us;
    const js = inner && jsFrame(inner);
    const where = js
      ? `${js.functionName || "(anonymous)"} ${js.url.replace(/^.*\/(node_modules\/|lib\/|test\/)/, "$1")}`.trim()
      : `${inner?.symbol ?? "?"} (${inner?.dso.split("/").pop() ?? "?"})`;
    self.set(where, (self.get(where) ?? 0) + us);
  }
  const top = [...self.entries()].sort((a, b) => b[1] - a[1]);
  return { parts, helpers, top, kernel, samples: counted };
}

/** The report: main threads' µs per message by part, other threads' by kind, the top `topN` frames. */
export function formatPerfByPart(result: PerfByPart, messages: number, topN: number): string {
  const perMessage = (us: number) => (us / Math.max(1, messages)).toFixed(1);
  const main = [...result.parts.values()].reduce((a, b) => a + b, 0);
  const helpers = [...result.helpers.values()].reduce((a, b) => a + b, 0);
  const lines = [
    `CPU (perf, on-core samples): main threads ${perMessage(main)} µs per message (in the kernel ${perMessage(result.kernel)}), other threads ${perMessage(helpers)}`,
    "| main threads: part of the path | µs per message | share |",
    "| --- | ---: | ---: |",
  ];
  for (const part of PROFILE_PARTS) {
    const us = result.parts.get(part) ?? 0;
    if (us > 0) lines.push(`| ${part} | ${perMessage(us)} | ${((100 * us) / Math.max(1, main)).toFixed(1)} % |`);
  }
  lines.push("", "| other threads | µs per message |", "| --- | ---: |");
  for (const [kind, us] of [...result.helpers.entries()].sort((a, b) => b[1] - a[1]))
    lines.push(`| ${kind} | ${perMessage(us)} |`);
  lines.push("", "| main threads: innermost frame | µs per message |", "| --- | ---: |");
  for (const [where, us] of result.top.slice(0, topN)) lines.push(`| \`${where}\` | ${perMessage(us)} |`);
  return lines.join("\n");
}
