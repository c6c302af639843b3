/**
 * @module RocketMQ's classic remoting client (rocketmq-client 4.9.8) as a test process: the Maven module in
 * test/interop/remoting-java, built by .ci/run (`mvn -q -B package`) or here when its jar is missing (offline
 * first), run as a JVM per scenario. Its log directory is a temp folder, removed when the test process exits.
 * Without Java or Maven the tests skip, naming why; with CI=true they fail.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JavaRun } from "./java-interop.js";

const MODULE = join(dirname(fileURLToPath(import.meta.url)), "..", "interop", "remoting-java");
const JAR = join(MODULE, "target", "nimbus-remoting-interop-1.0.0.jar");
const LOG_ROOT = mkdtempSync(join(os.tmpdir(), "nimbus-remoting-client-logs-"));
process.on("exit", () => rmSync(LOG_ROOT, { recursive: true, force: true }));
const JVM_OPTIONS = [
  "-Xmx256m",
  "-XX:+UseSerialGC",
  "-XX:TieredStopAtLevel=1",
  `-Drocketmq.client.logRoot=${LOG_ROOT}`,
  `-Duser.home=${LOG_ROOT}`,
];

let unavailable: string | undefined | null = null;

/** Why the 4.x Java client cannot run here (no Java, no Maven, the module does not build), or undefined. */
export function remotingClientUnavailable(): string | undefined {
  if (unavailable !== null) return unavailable;
  unavailable = undefined;
  if (spawnSync("java", ["-version"]).status !== 0) unavailable = "no java on PATH";
  else if (!existsSync(JAR)) {
    if (spawnSync("mvn", ["-v"]).status !== 0) unavailable = "no mvn on PATH to build test/interop/remoting-java";
    else {
      const offline = spawnSync("mvn", ["-q", "-B", "-o", "package"], { cwd: MODULE, encoding: "utf8" });
      if (offline.status !== 0) {
        const online = spawnSync("mvn", ["-q", "-B", "package"], { cwd: MODULE, encoding: "utf8" });
        if (online.status !== 0)
          unavailable = `test/interop/remoting-java does not build: ${online.stdout.slice(-500)}`;
      }
    }
  }
  if (unavailable !== undefined && process.env.CI === "true")
    throw new Error(`the remoting Java client is required in CI: ${unavailable}`);
  return unavailable;
}

/** A running scenario: its stdout lines so far; `stop()` ends its stdin (the `member` scenario then shuts down). */
export interface RemotingClientProcess {
  readonly lines: string[];
  stop(): void;
  readonly done: Promise<JavaRun>;
}

/** Starts one scenario of Interop.java; killed after `timeoutMs` (a guard). */
export function startRemotingClient(args: string[], timeoutMs = 120_000): RemotingClientProcess {
  const classpath = `${JAR}:${join(MODULE, "target", "lib", "*")}`;
  const child = spawn("java", [...JVM_OPTIONS, "-cp", classpath, "nimbus.remoting.Interop", ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let stdout = "";
  let partial = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts.filter((l) => l !== ""));
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-64_000);
  });
  child.stdin.on("error", () => undefined);
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
          `the remoting client failed (${signal ?? code}): ${why.slice(0, 4000)}\nstdout: ${stdout.slice(0, 2000)}`,
        ),
      );
    });
  });
  return { lines, stop: () => child.stdin.end(), done };
}

/** Runs one scenario of Interop.java (`produce ...`, `push ...`) to its end; killed after `timeoutMs` (a guard). */
export function runRemotingClient(args: string[], timeoutMs = 120_000): Promise<JavaRun> {
  const run = startRemotingClient(args, timeoutMs);
  run.stop();
  return run.done;
}
