/**
 * @module `npm run build:console`: bundles the console (main.tsx with preact, uPlot and the protocol module)
 * with esbuild into lib/console/build/{console.js, console.css}, committed so the local server and a deployed
 * stage serve them without a build step. The page that loads them, lib/console/build/index.html, is written by
 * hand and kept only there (no second copy to keep in step). `--check` builds in memory and fails when the
 * committed files differ (`npm test` runs it through test/console/signing.test.ts).
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const CONSOLE_BUILD_DIR = path.join(HERE, "build");

/**
 * zod re-exports every locale (`z.locales`), about 250 kB the console never uses (it validates nothing:
 * the API does): the locale index becomes English only, the one zod configures itself with.
 */
const englishOnlyZodLocales: Plugin = {
  name: "english-only-zod-locales",
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${path.sep}zod${path.sep}`)
        ? { path: args.importer, namespace: "zod-locales" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(path.join(path.dirname(args.path), "../locales/en.js"))};`,
      loader: "js",
      resolveDir: path.dirname(args.path),
    }));
  },
};

/** The console's built files by name, as the build folder should hold them (index.html is not built). */
export async function bundleConsole(): Promise<Map<string, string>> {
  const result = await build({
    entryPoints: [path.join(HERE, "main.tsx")],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: ["es2022"],
    minify: true,
    legalComments: "none",
    jsx: "automatic",
    jsxImportSource: "preact",
    outdir: CONSOLE_BUILD_DIR,
    entryNames: "console",
    logLevel: "silent",
    plugins: [englishOnlyZodLocales],
  });
  const files = new Map<string, string>();
  for (const file of result.outputFiles) files.set(path.basename(file.path), file.text);
  return files;
}

/** The committed files that differ from a fresh build (or are missing). */
export async function staleFiles(): Promise<string[]> {
  const stale: string[] = [];
  for (const [name, text] of await bundleConsole()) {
    const committed = await readFile(path.join(CONSOLE_BUILD_DIR, name), "utf8").catch(() => undefined);
    if (committed !== text) stale.push(name);
  }
  return stale;
}

async function main(): Promise<void> {
  if (process.argv.includes("--check")) {
    const stale = await staleFiles();
    if (stale.length > 0) {
      console.error(`lib/console/build is stale (${stale.join(", ")}): run npm run build:console`);
      process.exitCode = 1;
    } else console.log("lib/console/build is up to date");
    return;
  }
  await mkdir(CONSOLE_BUILD_DIR, { recursive: true });
  for (const [name, text] of await bundleConsole()) {
    await writeFile(path.join(CONSOLE_BUILD_DIR, name), text);
    console.log(`lib/console/build/${name}: ${Buffer.byteLength(text)} bytes`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main();
