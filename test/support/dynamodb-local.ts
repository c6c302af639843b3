/**
 * @module Amazon's DynamoDB Local 1.25.1 (the jar in the npm package `amplify-dynamodb-simulator`, folder
 * `emulator/`), in memory with telemetry off, as a child JVM on a free loopback port. It is the stricter of
 * the two DynamoDB emulators: it returns the stored item on a failed condition (`ALL_OLD`) and refuses
 * what DynamoDB refuses (see docs/environment.md for which emulator proves what).
 *
 * DynamoDB Local has no option for its listening address and binds every interface; it is started through
 * `DynamoDBLocalLoopback.java` (beside this file, run by Java's single-file source launcher), which binds its
 * server to 127.0.0.1 on a port the OS picks. The JVM stops when its stdin closes: `stop()` closes it, and so
 * does the end of this process, however it ends, so no JVM outlives the tests.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface DynamoDBLocal {
  /** e.g. `http://127.0.0.1:40123`. */
  endpoint: string;
  stop(): Promise<void>;
}

const EMULATOR_DIR = join(
  dirname(createRequire(import.meta.url).resolve("amplify-dynamodb-simulator/package.json")),
  "emulator",
);
const LAUNCHER = join(dirname(fileURLToPath(import.meta.url)), "DynamoDBLocalLoopback.java");
/**
 * A small heap is plenty (the in-memory tables live in SQLite's native memory); the serial collector and
 * the C1 compiler alone halve the JVM's start (about 2 s instead of 4 s here) at no cost the tests notice.
 */
const JVM_OPTIONS = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"];
/** Hang guards only (a loaded 2-core machine can be slow); nothing is asserted on these times. */
const START_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 30_000;

let unavailable: string | undefined | null = null;

/**
 * Why DynamoDB Local cannot run here (no `java`, or the jar is missing), or undefined when it can. In CI
 * (`CI=true`, as CI runs `.ci/run`) and with `NIMBUS_REQUIRE_DYNAMODB_LOCAL=1` (`npm run test:dynamodb-local`)
 * a missing Java is an error instead of a reason to skip.
 */
export function dynamoDBLocalUnavailable(): string | undefined {
  if (unavailable === null) {
    const java = spawnSync("java", ["-version"], { stdio: "ignore" });
    unavailable =
      java.error !== undefined || java.status !== 0
        ? "DynamoDB Local needs Java 17, and `java` is not on PATH"
        : existsSync(join(EMULATOR_DIR, "DynamoDBLocal.jar"))
          ? undefined
          : `DynamoDBLocal.jar is missing from ${EMULATOR_DIR}`;
  }
  const required = process.env.NIMBUS_REQUIRE_DYNAMODB_LOCAL === "1" || process.env.CI === "true";
  if (unavailable !== undefined && required) {
    throw new Error(`DynamoDB Local is required here (CI, or NIMBUS_REQUIRE_DYNAMODB_LOCAL=1) but ${unavailable}`);
  }
  return unavailable;
}

export async function startDynamoDBLocal(): Promise<DynamoDBLocal> {
  const child = spawn(
    "java",
    [
      ...JVM_OPTIONS,
      `-Djava.library.path=${join(EMULATOR_DIR, "DynamoDBLocal_lib")}`,
      "-cp",
      join(EMULATOR_DIR, "DynamoDBLocal.jar"),
      LAUNCHER,
    ],
    { cwd: EMULATOR_DIR, stdio: "pipe" },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let port: number;
  try {
    port = await readPort(child);
  } catch (err) {
    child.kill("SIGKILL");
    await exited;
    throw err;
  }
  // From here on the JVM must not keep this process alive: if a test file ends without `stop()`, the end of
  // this process closes the JVM's stdin and the JVM stops too.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref(): void }).unref();
  child.stdout.resume();
  child.stderr.resume();
  let stopped: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop() {
      stopped ??= (async () => {
        child.ref();
        child.stdin.end();
        const guard = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(guard);
      })();
      return stopped;
    },
  };
}

/** Waits for the launcher's `port=N` line; fails with the JVM's output if it exits or hangs first. */
function readPort(child: ChildProcessWithoutNullStreams): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const fail = (why: string) => {
      cleanup();
      reject(new Error(`DynamoDB Local did not start: ${why}\n${out}${err}`.trim()));
    };
    const onOut = (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^port=(\d+)$/m.exec(out);
      if (match) {
        cleanup();
        resolve(Number(match[1]));
      }
    };
    const onErr = (chunk: Buffer) => {
      err += chunk.toString();
    };
    const onExit = (code: number | null, signal: string | null) => fail(`exited (${signal ?? code})`);
    const onError = (e: Error) => fail(e.message);
    const timer = setTimeout(() => fail(`no port after ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout.off("data", onOut);
      child.stderr.off("data", onErr);
      child.off("exit", onExit);
      child.off("error", onError);
    };
    child.stdout.on("data", onOut);
    child.stderr.on("data", onErr);
    child.once("exit", onExit);
    child.once("error", onError);
  });
}
