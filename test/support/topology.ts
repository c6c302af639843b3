/**
 * @module RocketMQ's deployment as real processes for tests: `nimbus namesrv` and `nimbus broker` children
 * on one data folder, each on a port found free beforehand (so a restarted broker comes back at the same
 * address), with their stdout read for the listening line. `kill()` is SIGKILL: a crash.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
/** A guard against a hung child, not a speed requirement. */
const START_GUARD_MS = 60_000;

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export class NimbusProcess {
  #child: ChildProcess | undefined;
  output = "";

  constructor(
    readonly args: string[],
    readonly port: number,
    /** Variables set in the child beside this process's (the emulators' keys, say). */
    readonly env: Readonly<Record<string, string>> = {},
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the process (again, after a kill: same arguments, same port) and waits for its "listening on" line. */
  async start(): Promise<this> {
    this.output = "";
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "lib/cli/main.ts", ...this.args, "--port", String(this.port)],
      {
        cwd: REPO,
        env: { ...process.env, ...this.env },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    this.#child = child;
    const collect = (d: Buffer) => {
      this.output += d.toString();
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    await new Promise<void>((resolve, reject) => {
      const guard = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`${this.args.join(" ")} did not start:\n${this.output}`));
      }, START_GUARD_MS);
      const look = () => {
        if (this.output.includes("listening on")) {
          clearTimeout(guard);
          resolve();
        }
      };
      child.stdout?.on("data", look);
      child.once("exit", (code) => {
        clearTimeout(guard);
        reject(new Error(`${this.args.join(" ")} exited with ${code}:\n${this.output}`));
      });
    });
    return this;
  }

  /** SIGKILL, and wait for the exit. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
  }
}

/** `nimbus namesrv` on `dataDir`. */
export async function nameServer(dataDir: string): Promise<NimbusProcess> {
  return new NimbusProcess(["namesrv", "--data-dir", dataDir], await freePort()).start();
}

/** `nimbus broker` (`brokerId` 0 is the master) on `dataDir`. */
export async function brokerProcess(dataDir: string, brokerName: string, brokerId: number): Promise<NimbusProcess> {
  const args = ["broker", "--broker-name", brokerName, "--broker-id", String(brokerId), "--data-dir", dataDir];
  return new NimbusProcess(args, await freePort()).start();
}
