/**
 * @module RocketMQ's Java client (rocketmq-client-java 5.0.8) as a test process: the Maven module in
 * test/interop/java, built by .ci/run (`mvn -q -B package`) or here when its jar is missing (offline first,
 * from the local Maven repository), run as a JVM per scenario. Its log directory is a temp folder, removed
 * when the test process exits (the client would write ~/logs/rocketmq). Without Java or Maven the tests skip,
 * naming why; with CI=true they fail.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const MODULE = join(dirname(fileURLToPath(import.meta.url)), "..", "interop", "java");
const JAR = join(MODULE, "target", "nimbus-java-interop-1.0.0.jar");
const LOG_ROOT = mkdtempSync(join(os.tmpdir(), "nimbus-java-client-logs-"));
// The clients' logs go when the test process ends (its JVMs are gone by then: each run is awaited or killed).
process.on("exit", () => rmSync(LOG_ROOT, { recursive: true, force: true }));
/** The same quick-start JVM settings as DynamoDB Local's (a small heap, C1 only). */
const JVM_OPTIONS = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", `-Drocketmq.log.root=${LOG_ROOT}`];

let unavailable: string | undefined | null = null;

/** Why the Java client cannot run here (no Java, no Maven, the module does not build), or undefined. */
export function javaClientUnavailable(): string | undefined {
  if (unavailable !== null) return unavailable;
  unavailable = undefined;
  if (spawnSync("java", ["-version"]).status !== 0) unavailable = "no java on PATH";
  else if (!existsSync(JAR)) {
    if (spawnSync("mvn", ["-v"]).status !== 0) unavailable = "no mvn on PATH to build test/interop/java";
    else {
      const offline = spawnSync("mvn", ["-q", "-B", "-o", "package"], { cwd: MODULE, encoding: "utf8" });
      if (offline.status !== 0) {
        const online = spawnSync("mvn", ["-q", "-B", "package"], { cwd: MODULE, encoding: "utf8" });
        if (online.status !== 0) unavailable = `test/interop/java does not build: ${online.stdout.slice(-500)}`;
      }
    }
  }
  if (unavailable !== undefined && process.env.CI === "true")
    throw new Error(`the Java client is required in CI: ${unavailable}`);
  return unavailable;
}

export interface JavaRun {
  lines: string[];
  stderr: string;
}

/** A running scenario: its stdout lines so far; `stop()` closes its stdin (the signal some modes wait for). */
export interface JavaProcess {
  readonly lines: string[];
  stop(): void;
  /** Settles when the JVM exits: its lines and stderr, or an error with its stderr when it failed. */
  readonly done: Promise<JavaRun>;
}

/** Starts one scenario of Interop.java (`check-back ...`); killed after `timeoutMs` (a guard, not a speed rule). */
export function startJavaClient(args: string[], timeoutMs = 120_000): JavaProcess {
  const classpath = `${JAR}:${join(MODULE, "target", "lib", "*")}`;
  const child = spawn("java", [...JVM_OPTIONS, "-cp", classpath, "nimbus.interop.Interop", ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let partial = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts.filter((l) => l !== ""));
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-64_000);
  });
  const guard = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const done = new Promise<JavaRun>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(guard);
      if (partial !== "") lines.push(partial);
      if (code === 0) return resolve({ lines, stderr });
      const why = stderr
        .split("\n")
        .filter((l) => !l.trim().startsWith("at "))
        .join("\n");
      reject(
        new Error(
          `the Java client failed (${signal ?? code}): ${why.slice(0, 4000)}\nstdout: ${lines.join("\n").slice(0, 1000)}`,
        ),
      );
    });
  });
  return { lines, stop: () => child.stdin.end(), done };
}

/** Runs one scenario of Interop.java (`produce ...`, `consume ...`) to its end; rejects when it fails. */
export function runJavaClient(args: string[], timeoutMs = 120_000): Promise<JavaRun> {
  const run = startJavaClient(args, timeoutMs);
  run.stop();
  return run.done;
}
