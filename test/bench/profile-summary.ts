/**
 * @module Summarises a V8 `.cpuprofile` (what `node --cpu-prof` writes): the share of samples idle, in
 * garbage collection and in program code, and the top frames by self time, each with its file and line.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
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
