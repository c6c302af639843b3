/**
 * @module Runs the peer table (`npm run bench -- --suite peer`) on each storage mode with an in-process
 * server, or once against `--url`, and prints the tables and a `BENCH_JSON ` line. See docs/benchmarks/peer.md.
 */
import { loadavg } from "node:os";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";
import type { FlushMode } from "../../lib/storage/local/index.js";
import { benchStorage } from "./bench-storage.js";
import { formatPeerTable, type PeerOptions, type PeerResult, runPeerTable } from "./peer-table.js";

export interface PeerSuite {
  modes: ("local" | "aws")[];
  flush: FlushMode;
  url: string | undefined;
  options: PeerOptions;
  runId: string;
  machine: Record<string, unknown>;
}

export async function runPeerSuite(s: PeerSuite): Promise<void> {
  const load = { start: loadavg()[0] };
  console.error(
    `bench peer: ${s.url ?? s.modes.join(" + ")}, ${s.options.bodyBytes} B bodies, batch ${s.options.batch}, ` +
      `${s.options.seconds} s per produce phase, end-to-end ${s.options.rate} msg/s for ${s.options.e2eSeconds} s`,
  );
  const results: PeerResult[] = [];
  if (s.url !== undefined) {
    results.push(await runPeerTable(s.url, undefined, `external server ${s.url}`, s.options, s.runId));
  } else {
    for (const mode of s.modes) {
      const { storage, description, cleanup } = await benchStorage(mode, s.runId, s.flush);
      let server: LocalServer | undefined;
      try {
        server = await startLocalServer({
          port: 0,
          storage,
          registerIntervalMs: 3_600_000,
          retentionIntervalMs: 3_600_000,
        });
        results.push(await runPeerTable(server.url, server, description, s.options, `${mode}${s.runId}`));
      } finally {
        await server?.close();
        await cleanup();
      }
    }
  }
  for (const r of results) console.log(formatPeerTable(r, s.options));
  const end = loadavg()[0];
  console.log(`\n1-minute load average: ${load.start?.toFixed(2)} at the start, ${end?.toFixed(2)} at the end`);
  console.log(
    `BENCH_JSON ${JSON.stringify({ date: new Date().toISOString(), machine: s.machine, load: { ...load, end }, options: s.options, results })}`,
  );
}
