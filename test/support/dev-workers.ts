/**
 * @module The built `nimbus dev --workers 2` on either storage mode for a test: on `aws` the shared emulators
 * (dynalite + s3rver), held until the workers have stopped (they write until then). Answers the running CLI, its
 * HTTP URL and port (where the remoting door answers too), and its stop.
 */
import { ensureBuilt, type RunningCli, spawnNimbus } from "./cli-runner.js";
import { EMULATOR_CREDENTIALS, emulatorStorageOptions } from "./emulators.js";
import { acquireEmulators } from "./shared-emulators.js";

export interface DevWorkers {
  dev: RunningCli;
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** `prefix` names the emulators' bucket and tables (one per test file). */
export async function startDevWorkers(mode: "local" | "aws", dataDir: string, prefix: string): Promise<DevWorkers> {
  await ensureBuilt();
  const lease = mode === "aws" ? await acquireEmulators("dynalite") : undefined;
  const o =
    lease &&
    emulatorStorageOptions(lease.emulators, { bucket: `nimbus-${prefix}-${process.pid}`, tablePrefix: `${prefix}-` });
  const storage = o
    ? [
        ...["--storage", "aws", "--provision", "--region", o.region ?? "us-east-1"],
        ...["--bucket", o.bucket, "--table-prefix", o.tablePrefix ?? "nimbus-"],
        ...["--dynamo-endpoint", o.dynamoEndpoint ?? "", "--s3-endpoint", o.s3Endpoint ?? ""],
      ]
    : ["--data-dir", dataDir];
  const dev = spawnNimbus(["dev", "--port", "0", "--workers", "2", ...storage], {
    env: {
      AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey,
    },
  });
  const stop = async () => {
    if (dev.child.exitCode === null) dev.child.kill("SIGINT");
    await dev.exited;
    await lease?.release();
  };
  try {
    await dev.waitForStdout(/2 worker processes/);
  } catch (err) {
    await stop();
    throw err;
  }
  const url = /listening on (http:\/\/\S+)/.exec(dev.stdout())?.[1] ?? "";
  return { dev, url, port: Number(new URL(url).port), stop };
}
