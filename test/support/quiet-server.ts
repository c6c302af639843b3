/**
 * @module A local server whose background jobs (registration, retention, transaction check-backs) never fire
 * during a test, so a request's storage writes can be counted and nothing runs between two requests.
 */
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { type LocalServer, type LocalServerOptions, startLocalServer } from "../../lib/dev/local-server.js";
import { openBacking, type ServerMode } from "./server-fixture.js";

/** Long enough that no background job runs inside a test. */
const NEVER_MS = 3_600_000;

export interface QuietServer {
  server: LocalServer;
  /** Stops the server and deletes its data. */
  close(): Promise<void>;
}

/** On fresh data of `mode` (a temp folder for "local"), with `extra` options over the quiet ones. */
export async function startQuietServer(
  mode: ServerMode = "local",
  extra: Partial<LocalServerOptions> = {},
): Promise<QuietServer> {
  const backing = await openBacking(mode);
  const server = await startLocalServer({
    port: 0,
    storage: backing.choice,
    config: parseNimbusConfig({ transactionCheckIntervalMs: NEVER_MS }),
    registerIntervalMs: NEVER_MS,
    retentionIntervalMs: NEVER_MS,
    ...extra,
  });
  return {
    server,
    close: async () => {
      try {
        await server.close();
      } finally {
        await backing.release();
      }
    },
  };
}
