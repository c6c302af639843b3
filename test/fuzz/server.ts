/** @module The local server the HTTP fuzz runs against: embedded store in a temp folder, no timers firing during a run. */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";

export async function withFuzzServer<T>(run: (server: LocalServer) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-fuzz-"));
  const server = await startLocalServer({
    port: 0,
    storage: { kind: "local", dataDir },
    registerIntervalMs: 24 * 3_600_000,
    retentionIntervalMs: 24 * 3_600_000,
  });
  try {
    return await run(server);
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
