/**
 * @module The storage a benchmark's in-process server runs on: the embedded store in a temporary folder, or
 * the AWS adapters on dynalite + s3rver started in this process. `cleanup` removes or stops it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StorageChoice } from "../../lib/dev/local-server.js";
import type { FlushMode } from "../../lib/storage/local/index.js";
import { EMULATOR_CREDENTIALS, startEmulators } from "../support/emulators.js";

export interface BenchStorage {
  storage: StorageChoice;
  description: string;
  cleanup: () => Promise<void>;
}

export async function benchStorage(mode: "local" | "aws", runId: string, flush: FlushMode): Promise<BenchStorage> {
  if (mode === "local") {
    const dataDir = await mkdtemp(join(tmpdir(), "nimbus-bench-"));
    return {
      storage: { kind: "local", dataDir, flush },
      description: `embedded store (SQLite tables + object files), --flush ${flush}`,
      cleanup: () => rm(dataDir, { recursive: true, force: true }),
    };
  }
  const emulators = await startEmulators();
  return {
    storage: {
      kind: "aws",
      provision: true,
      region: "us-east-1",
      bucket: `nimbus-bench-${runId}`,
      tablePrefix: `bench-${runId}-`,
      dynamoEndpoint: emulators.dynamoEndpoint,
      s3Endpoint: emulators.s3Endpoint,
      credentials: EMULATOR_CREDENTIALS,
    },
    description: "AWS adapters on dynalite + s3rver (in this process)",
    cleanup: () => emulators.stop(),
  };
}
