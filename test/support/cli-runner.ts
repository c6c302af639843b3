/**
 * @module Runs the built `nimbus` command (dist/lib/cli/main.js, what package.json's `bin` points at)
 * against a local broker started in this process: `ensureBuilt` compiles once when dist is missing or older
 * than the sources (one test process builds, the others wait), `nimbus` runs a command to its end, and
 * `spawnNimbus` starts a long one (consume) to stop with a signal.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));
export const CLI = path.join(REPO, "dist", "lib", "cli", "main.js");
/**
 * Only guards against a hung child (the test fails instead of hanging), never a speed requirement: a command
 * run to its end is killed after 2 minutes; a started one (a server, a consumer the test stops itself) after
 * 15, since it lives as long as its test file, however slow a loaded machine makes that file.
 */
const COMMAND_GUARD_MS = 120_000;
const STARTED_GUARD_MS = 900_000;
/** One build at a time per checkout (outside dist/, so that a killed run never leaves it in the package). */
const LOCK = path.join(
  os.tmpdir(),
  `nimbus-cli-build-${createHash("sha256").update(REPO).digest("hex").slice(0, 12)}.lock`,
);

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

function isStale(): boolean {
  let built: number;
  try {
    built = statSync(CLI).mtimeMs;
  } catch {
    return true;
  }
  const sources = Math.max(
    newestSource(path.join(REPO, "lib")),
    newestSource(path.join(REPO, "functions")),
    statSync(path.join(REPO, "tsconfig.json")).mtimeMs,
  );
  return sources > built;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Builds dist/ with `tsc -p tsconfig.build.json` unless it is newer than every source. Test files run in
 * parallel processes: a lock folder makes one of them build while the others wait for it.
 */
export async function ensureBuilt(): Promise<void> {
  if (!isStale()) return;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      // A lock left by a killed run: a build takes seconds, not ten minutes.
      const since = statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
      if (Date.now() - since > 600_000) rmSync(LOCK, { force: true, recursive: true });
      await pause(250);
    }
  }
  try {
    if (!isStale()) return;
    const tsc = path.join(REPO, "node_modules", "typescript", "bin", "tsc");
    const result = await promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: REPO }).catch(
      (err: { stdout?: string; stderr?: string }) => err,
    );
    // tsc emits even with type errors elsewhere (npm run typecheck reports those); a missing CLI is fatal.
    if (isStale()) throw new Error(`building the CLI failed:\n${result.stdout ?? ""}${result.stderr ?? ""}`);
  } finally {
    rmSync(LOCK, { force: true, recursive: true });
  }
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** NIMBUS_URL for the child (the inherited one is never passed on). */
  url?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to the child's stdin, which is then closed. */
  input?: string | Buffer;
  cwd?: string;
  /** Kill the child after this long (a guard, not a deadline). Default: see COMMAND_GUARD_MS / STARTED_GUARD_MS. */
  guardMs?: number;
}

export interface RunningCli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when stdout matches. */
  waitForStdout(pattern: RegExp): Promise<void>;
  /** Resolves when stderr matches. */
  waitForStderr(pattern: RegExp): Promise<void>;
  exited: Promise<CliResult>;
}

/** Starts `node dist/lib/cli/main.js ...args`. */
export function spawnNimbus(args: string[], options: CliOptions = {}): RunningCli {
  const { NIMBUS_URL: _inherited, ...env } = process.env;
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd ?? REPO,
    env: { ...env, ...(options.url === undefined ? {} : { NIMBUS_URL: options.url }), ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const watchers = new Set<() => void>();
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
    for (const w of watchers) w();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
    for (const w of watchers) w();
  });
  child.stdin?.end(options.input ?? "");
  const guard = setTimeout(() => child.kill("SIGKILL"), options.guardMs ?? STARTED_GUARD_MS);
  guard.unref();
  const waitFor = (text: () => string, pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pattern.test(text())) {
          watchers.delete(check);
          resolve();
        } else if (child.exitCode !== null || child.signalCode !== null) {
          watchers.delete(check);
          reject(new Error(`the command ended before printing ${pattern}:\n${stdout}\n${stderr}`));
        }
      };
      watchers.add(check);
      check();
    });
  const exited = new Promise<CliResult>((resolve) =>
    child.once("close", (code, signal) => {
      clearTimeout(guard);
      for (const w of watchers) w();
      resolve({ code, signal, stdout, stderr });
    }),
  );
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForStdout: (pattern) => waitFor(() => stdout, pattern),
    waitForStderr: (pattern) => waitFor(() => stderr, pattern),
  };
}

/** Runs `nimbus ...args` to its end. */
export function nimbus(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return spawnNimbus(args, { guardMs: COMMAND_GUARD_MS, ...options }).exited;
}

export interface TestBroker {
  url: string;
  server: LocalServer;
  close(): Promise<void>;
}

/** A local broker (brokers broker-a and broker-b) on a free port and a fresh data folder. */
export async function startTestBroker(): Promise<TestBroker> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-cli-test-"));
  const server = await startLocalServer({ port: 0, storage: { kind: "local", dataDir } });
  return {
    url: server.url,
    server,
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The rows of the first `#Header` table: the lines after the header up to a blank line, split on 2+ spaces. */
export function tableRows(stdout: string): string[][] {
  const lines = stdout.split("\n");
  const start = lines.findIndex((l) => l.startsWith("#"));
  assert.ok(start >= 0, `no table in:\n${stdout}`);
  const end = lines.findIndex((l, i) => i > start && l.trim() === "");
  return lines.slice(start + 1, end < 0 ? undefined : end).map((l) => l.trim().split(/\s{2,}/));
}

/**
 * The built CLI against a fresh local broker for a describe block: built and started before its tests (before
 * the block's own `before` hooks), closed after them. `run` calls `nimbus` on it; `lines` splits an output.
 */
export function useCliBroker(): {
  run: (...args: string[]) => Promise<CliResult>;
  lines: (stdout: string) => string[];
  url: () => string;
} {
  let broker: TestBroker | undefined;
  before(async () => {
    await ensureBuilt();
    broker = await startTestBroker();
  });
  after(() => broker?.close());
  const url = () => broker?.url ?? "";
  return {
    run: (...args) => nimbus(args, { url: url() }),
    lines: (stdout) => stdout.split("\n").filter((l) => l.length > 0),
    url,
  };
}
