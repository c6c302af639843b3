/**
 * @module A Maven module of test/interop as test processes (one JVM per scenario): built by .ci/run (`mvn -q -B
 * package`) or here when its jar is missing (offline first, from the local Maven repository). Its client's logs go
 * to a temp folder, removed when the test process exits. Without Java or Maven the tests skip, naming why; with
 * CI=true they fail. test/support/java-interop.ts (rocketmq-client-java 5.x) and remoting-java.ts (rocketmq-client
 * 4.9.8) are two of them.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface JavaRun {
  lines: string[];
  stderr: string;
}

/** A running scenario: its stdout lines so far; `stop()` closes its stdin (the signal some modes wait for). */
export interface JavaProcess {
  readonly lines: string[];
  stop(): void;
  /** Sends the JVM a signal (SIGKILL: it dies without closing its connections itself). */
  kill(signal: NodeJS.Signals): void;
  /** Settles when the JVM exits: its lines and stderr, or an error with its stderr when it failed. */
  readonly done: Promise<JavaRun>;
}

export interface JavaModule {
  /** Why the module cannot run here (no Java, no Maven, it does not build), or undefined. */
  unavailable(): string | undefined;
  /** Starts one scenario; killed after `timeoutMs` (a guard, not a speed rule). */
  start(args: string[], timeoutMs?: number): JavaProcess;
  /** Runs one scenario to its end (stdin closed at once); rejects when it fails. */
  run(args: string[], timeoutMs?: number): Promise<JavaRun>;
}

export interface JavaModuleSpec {
  /** The folder under test/interop. */
  folder: string;
  /** The jar `mvn package` makes, under target/. */
  jar: string;
  mainClass: string;
  /** What the client is called in messages ("the Java client"). */
  label: string;
  /** The JVM properties that send the client's logs to a folder. */
  logProperties: (logRoot: string) => string[];
  /** Runs the JVM in the log folder (for a program that writes files where it runs, as mqadmin does). */
  runInLogRoot?: boolean;
}

/** The same quick-start JVM settings as DynamoDB Local's (a small heap, C1 only). */
const JVM_OPTIONS = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"];

export function javaModule(spec: JavaModuleSpec): JavaModule {
  const moduleDir = join(dirname(fileURLToPath(import.meta.url)), "..", "interop", spec.folder);
  const jar = join(moduleDir, "target", spec.jar);
  const logRoot = mkdtempSync(join(os.tmpdir(), `nimbus-${spec.folder}-logs-`));
  // The clients' logs go when the test process ends (its JVMs are gone by then: each run is awaited or killed).
  process.on("exit", () => rmSync(logRoot, { recursive: true, force: true }));
  let unavailable: string | undefined | null = null;

  const check = (): string | undefined => {
    if (unavailable !== null) return unavailable;
    unavailable = undefined;
    if (spawnSync("java", ["-version"]).status !== 0) unavailable = "no java on PATH";
    else if (!existsSync(jar)) {
      if (spawnSync("mvn", ["-v"]).status !== 0) unavailable = `no mvn on PATH to build test/interop/${spec.folder}`;
      else {
        const offline = spawnSync("mvn", ["-q", "-B", "-o", "package"], { cwd: moduleDir, encoding: "utf8" });
        if (offline.status !== 0) {
          const online = spawnSync("mvn", ["-q", "-B", "package"], { cwd: moduleDir, encoding: "utf8" });
          if (online.status !== 0)
            unavailable = `test/interop/${spec.folder} does not build: ${online.stdout.slice(-500)}`;
        }
      }
    }
    if (unavailable !== undefined && process.env.CI === "true")
      throw new Error(`${spec.label} is required in CI: ${unavailable}`);
    return unavailable;
  };

  const start = (args: string[], timeoutMs = 120_000): JavaProcess => {
    const classpath = `${jar}:${join(moduleDir, "target", "lib", "*")}`;
    const jvm = [...JVM_OPTIONS, ...spec.logProperties(logRoot)];
    const child = spawn("java", [...jvm, "-cp", classpath, spec.mainClass, ...args], {
      stdio: ["pipe", "pipe", "pipe"],
      ...(spec.runInLogRoot === true && { cwd: logRoot }),
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
    // A JVM that ends before its stdin is closed must not fail the test process (EPIPE on the close).
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
            `${spec.label} failed (${signal ?? code}): ${why.slice(0, 4000)}\nstdout: ${lines.join("\n").slice(0, 2000)}`,
          ),
        );
      });
    });
    return { lines, stop: () => child.stdin.end(), kill: (signal) => child.kill(signal), done };
  };

  return {
    unavailable: check,
    start,
    run(args, timeoutMs) {
      const process = start(args, timeoutMs);
      process.stop();
      return process.done;
    },
  };
}
