/**
 * @module `npm run check:infra`: checks the SST stack on a machine with no AWS access.
 * 1. `sst install --stage ci` with SST's downloads turned off: fetches the AWS provider from npm into
 *    `.sst/platform` (about 40 s the first time, seconds once `.sst/` exists) and evaluates the app config.
 * 2. `tsc -p tsconfig.infra.json`: type-checks sst.config.ts and infra/ against SST's own component types.
 * 3. Every handler path named in infra/ is bundled as SST bundles it (esbuild, ESM, everything inlined):
 *    the bundle must export the handler and hold no embedded-store code (better-sqlite3, lib/storage/local).
 * Steps 1-2 and step 3 run side by side. The routes-vs-contract and IAM-grant tests are in routes.test.ts.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Metafile } from "esbuild";
import { type HandlerRef, handlersNamedInInfra, ROOT } from "./infra-source.js";
import { bundleLikeSst as bundle } from "./lambda-bundle.js";

const BIN = path.join(ROOT, "node_modules/.bin");

/** SST tries to download Pulumi and Bun and to send telemetry: none of which is possible, or wanted, here. */
const SST_OFFLINE_ENV = { SST_SKIP_DEPENDENCY_CHECK: "1", SST_NO_BUN: "1", SST_TELEMETRY_DISABLED: "1" };

/** What no Lambda bundle may contain: the embedded store, and the native module it sits on. */
const FORBIDDEN_INPUTS = [/(^|\/)node_modules\/better-sqlite3\//, /(^|\/)lib\/storage\/local\//];
const FORBIDDEN_TEXT = ["better-sqlite3", "tables.sqlite"];
const CANARY = "lib/storage/local/index.ts";

interface StepResult {
  step: string;
  ok: boolean;
  ms: number;
  detail: string[];
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

async function timed(step: string, body: () => Promise<string[]>): Promise<StepResult> {
  const start = performance.now();
  try {
    const detail = await body();
    return { step, ok: true, ms: performance.now() - start, detail };
  } catch (err) {
    const detail = err instanceof Error ? err.message.split("\n") : [String(err)];
    return { step, ok: false, ms: performance.now() - start, detail };
  }
}

async function sstInstall(): Promise<string[]> {
  const { code, output } = await run(
    path.join(BIN, "sst"),
    ["install", "--stage", "ci", "--print-logs"],
    SST_OFFLINE_ENV,
  );
  if (code !== 0) throw new Error(`sst install failed (exit ${code}):\n${tail(output, 40)}`);
  const version = (await readFile(path.join(ROOT, ".sst/platform/version"), "utf8")).trim();
  return [`SST platform ${version} in .sst/platform`];
}

async function typecheck(): Promise<string[]> {
  const { code, output } = await run(path.join(BIN, "tsc"), ["-p", "tsconfig.infra.json"]);
  if (code !== 0) throw new Error(`tsc -p tsconfig.infra.json failed:\n${tail(output, 60)}`);
  return ["sst.config.ts and infra/ type-check against SST's components"];
}

/** Why a bundle holds the embedded store, if it does: inputs from its folders, or its names in the text. */
function embeddedStoreIn(metafile: Metafile, text: string): string[] {
  const inputs = Object.keys(metafile.inputs)
    .filter((input) => FORBIDDEN_INPUTS.some((re) => re.test(input.replaceAll("\\", "/"))))
    .map((input) => `bundles embedded-store code: ${input}`);
  return [...inputs, ...FORBIDDEN_TEXT.filter((s) => text.includes(s)).map((s) => `bundle text contains "${s}"`)];
}

async function bundleOne(out: string, handler: HandlerRef): Promise<string> {
  const name = `${handler.file}.${handler.exportName}`;
  const entry = path.join(ROOT, `${handler.file}.ts`);
  await stat(entry).catch(() => {
    throw new Error(`${name}: ${handler.file}.ts does not exist`);
  });
  const outfile = path.join(out, `${handler.file.replaceAll("/", "__")}.mjs`);
  const { metafile, text, exports } = await bundle(entry, outfile);
  const problems = embeddedStoreIn(metafile, text);
  if (!exports.includes(handler.exportName)) problems.push(`does not export "${handler.exportName}"`);
  // Load it as Lambda would: top-level code must run without AWS (the broker is built on the first request).
  const mod = (await import(pathToFileURL(outfile).href)) as Record<string, unknown>;
  if (typeof mod[handler.exportName] !== "function") problems.push(`"${handler.exportName}" is not a function`);
  if (problems.length > 0) throw new Error(`${name}: ${problems.join("; ")}`);
  return `${name}: ${(text.length / 1024).toFixed(0)} KiB, exports ${handler.exportName}, no embedded store`;
}

/** The detector must flag the embedded store itself, or a clean result would prove nothing. */
async function detectorCanary(out: string): Promise<string> {
  const { metafile, text } = await bundle(path.join(ROOT, CANARY), path.join(out, "canary.mjs"));
  if (embeddedStoreIn(metafile, text).length === 0) throw new Error(`the detector does not flag ${CANARY}`);
  return `canary: ${CANARY} is flagged as embedded-store code`;
}

async function bundleHandlers(): Promise<string[]> {
  const handlers = await handlersNamedInInfra();
  if (handlers.length === 0) throw new Error("no `functions/<file>.<export>` handler found in infra/*.ts");
  const out = await mkdtemp(path.join(tmpdir(), "nimbus-check-infra-"));
  try {
    const results = await Promise.allSettled([...handlers.map((h) => bundleOne(out, h)), detectorCanary(out)]);
    const failures = results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
    if (failures.length > 0) throw new Error(failures.join("\n"));
    return results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

function tail(text: string, lines: number): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

async function main(): Promise<void> {
  const start = performance.now();
  const [sst, bundles] = await Promise.all([
    (async () => {
      const install = await timed("sst install --stage ci (offline)", sstInstall);
      if (!install.ok) return [install];
      return [install, await timed("tsc -p tsconfig.infra.json", typecheck)];
    })(),
    timed("bundle every handler named in infra/", bundleHandlers),
  ]);
  const results = [...sst, bundles];
  for (const r of results) {
    console.log(`${r.ok ? "ok  " : "FAIL"} ${r.step} (${(r.ms / 1000).toFixed(1)} s)`);
    for (const line of r.detail) console.log(`     ${line}`);
  }
  console.log(`check:infra took ${((performance.now() - start) / 1000).toFixed(1)} s`);
  if (results.some((r) => !r.ok)) process.exitCode = 1;
}

await main();
