/**
 * @module RocketMQ's Java client (rocketmq-client-java 5.0.8) as a test process: the Maven module in
 * test/interop/java, built by .ci/run (`mvn -q -B package`) or here when its jar is missing (offline first,
 * from the local Maven repository), run as a JVM per scenario. Its log directory is a temp folder (the client
 * would write ~/logs/rocketmq). Without Java or Maven the tests skip, naming why; with CI=true they fail.
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const MODULE = join(dirname(fileURLToPath(import.meta.url)), "..", "interop", "java");
const JAR = join(MODULE, "target", "nimbus-java-interop-1.0.0.jar");
const LOG_ROOT = mkdtempSync(join(os.tmpdir(), "nimbus-java-client-logs-"));
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

/** Runs one scenario of Interop.java (`produce ...`, `consume ...`); rejects with its stderr when it fails. */
export async function runJavaClient(args: string[], timeoutMs = 120_000): Promise<JavaRun> {
  const classpath = `${JAR}:${join(MODULE, "target", "lib", "*")}`;
  try {
    const { stdout, stderr } = await promisify(execFile)(
      "java",
      [...JVM_OPTIONS, "-cp", classpath, "nimbus.interop.Interop", ...args],
      { encoding: "utf8", timeout: timeoutMs, maxBuffer: 16 << 20 },
    );
    return { lines: stdout.split("\n").filter((l) => l !== ""), stderr };
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string };
    const why = (e.stderr ?? "")
      .split("\n")
      .filter((l) => !l.trim().startsWith("at "))
      .join("\n");
    throw new Error(`the Java client failed: ${why.slice(0, 4000)}\nstdout: ${(e.stdout ?? "").slice(0, 1000)}`);
  }
}
