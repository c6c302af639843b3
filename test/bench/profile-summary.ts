/**
 * @module Summarises a V8 `.cpuprofile` (what `node --cpu-prof` writes): the share of samples idle, in
 * garbage collection and in program code, and the top frames by self time, each with its file and line; and, for
 * several profiles of one run (a `--workers` server's processes), the busy time by part of the path: the door's
 * framing and codec, the door's adapter, the broker, the store, the runtime.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  /** When sampling began, µs on the monotonic clock (`process.hrtime`'s, on Linux). */
  startTime?: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export function summarizeProfile(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = Math.max(0, profile.timeDeltas[i] ?? 0);
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
    total += dt;
  });
  const frames = new Map<string, number>();
  let idle = 0;
  let gc = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    if (frame.functionName === "(idle)") idle += us;
    if (frame.functionName === "(garbage collector)") gc += us;
    const where = frame.url.replace(/^.*\/(node_modules\/|lib\/|test\/)/, "$1");
    const key = `${frame.functionName || "(anonymous)"} ${where ? `${where}:${frame.lineNumber + 1}` : ""}`.trim();
    frames.set(key, (frames.get(key) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / Math.max(1, total)).toFixed(1)} %`;
  const lines = [
    `profile: ${(total / 1e6).toFixed(1)} s sampled, idle ${pct(idle)}, garbage collection ${pct(gc)}`,
    "| self | frame |",
    "| ---: | --- |",
    ...[...frames.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, us]) => `| ${pct(us)} | \`${key}\` |`),
  ];
  return lines.join("\n");
}

/** The parts of a request's path a frame's self time is counted in (`profileByPart`), in the order printed. */
export const PROFILE_PARTS = [
  "gRPC framing (grpc-js, HTTP/2)",
  "protobuf decode/encode",
  "gRPC door (lib/grpc)",
  "remoting door (lib/remoting)",
  "HTTP door (lib/http, functions, local server)",
  "broker services (lib/broker)",
  "store (lib/storage, SQLite, AWS SDK)",
  "core (codec, ids, checks)",
  "module loading",
  "Node runtime (net, streams, timers, crypto)",
  "garbage collection",
  "other",
] as const;
export type ProfilePart = (typeof PROFILE_PARTS)[number];

/** The part of the path a frame belongs to, from its script's URL (undefined: idle, not busy). */
export function partOf(frame: { functionName: string; url: string }): ProfilePart | undefined {
  const { functionName: name, url } = frame;
  if (name === "(idle)" || name === "(root)") return undefined;
  if (name === "(garbage collector)") return "garbage collection";
  if (url.includes("node_modules/@grpc/") || url.startsWith("node:internal/http2")) {
    return "gRPC framing (grpc-js, HTTP/2)";
  }
  if (url.startsWith("node:internal/modules") || url.includes("node_modules/tsx/")) return "module loading";
  if (url.includes("node_modules/protobufjs") || url.includes("node_modules/@protobufjs"))
    return "protobuf decode/encode";
  if (url.includes("/lib/grpc/")) return "gRPC door (lib/grpc)";
  if (url.includes("/lib/remoting/")) return "remoting door (lib/remoting)";
  if (
    url.includes("/lib/http/") ||
    url.includes("/functions/") ||
    url.includes("/lib/dev/") ||
    url.startsWith("node:_http")
  ) {
    return "HTTP door (lib/http, functions, local server)";
  }
  if (url.includes("/lib/broker/")) return "broker services (lib/broker)";
  if (
    url.includes("/lib/storage/") ||
    url.includes("node_modules/better-sqlite3") ||
    url.includes("node_modules/@aws-sdk") ||
    url.includes("node_modules/@smithy")
  ) {
    return "store (lib/storage, SQLite, AWS SDK)";
  }
  if (url.includes("/lib/core/")) return "core (codec, ids, checks)";
  if (url.startsWith("node:") || url === "" || name === "(program)")
    return "Node runtime (net, streams, timers, crypto)";
  return "other";
}

/** A span of the monotonic clock in µs (`process.hrtime.bigint() / 1000n`): the samples counted. */
export interface SampleWindow {
  fromUs: number;
  toUs: number;
}

/**
 * Busy (non-idle) self time in µs per part of the path, summed over `profiles` (one per process of a run), of the
 * samples taken within `window` (the load's span: start-up and shutdown left out), or all of them.
 */
export function profileByPart(profiles: readonly CpuProfile[], window?: SampleWindow): Map<ProfilePart, number> {
  const parts = new Map<ProfilePart, number>();
  for (const profile of profiles) {
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    let at = profile.startTime ?? 0;
    profile.samples.forEach((id, i) => {
      at += profile.timeDeltas[i] ?? 0;
      if (window !== undefined && (at < window.fromUs || at > window.toUs)) return;
      const frame = byId.get(id)?.callFrame;
      const part = frame && partOf(frame);
      if (part === undefined) return;
      parts.set(part, (parts.get(part) ?? 0) + Math.max(0, profile.timeDeltas[i] ?? 0));
    });
  }
  return parts;
}

/** A table of busy µs per message by part of the path, with each part's share. */
export function formatByPart(parts: ReadonlyMap<ProfilePart, number>, messages: number): string {
  const busy = [...parts.values()].reduce((a, b) => a + b, 0);
  const lines = [
    `busy CPU: ${(busy / 1e6).toFixed(2)} s over ${messages} messages, ${(busy / Math.max(1, messages)).toFixed(0)} µs per message`,
    "| part of the path | µs per message | share |",
    "| --- | ---: | ---: |",
  ];
  for (const part of PROFILE_PARTS) {
    const us = parts.get(part) ?? 0;
    if (us === 0) continue;
    lines.push(
      `| ${part} | ${(us / Math.max(1, messages)).toFixed(1)} | ${((100 * us) / Math.max(1, busy)).toFixed(1)} % |`,
    );
  }
  return lines.join("\n");
}
