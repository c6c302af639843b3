/**
 * @module A function bundle as `sst deploy` uploads it: SST 3's Node build (pkg/runtime/node/build.go), esbuild
 * with everything inlined, ESM, minified. Shared by `npm run check:infra` (what a bundle may hold) and
 * test/infra/bundles-on-lambda.test.ts (a bundle run as Lambda runs it).
 */
import { readFile } from "node:fs/promises";
import { build, type Metafile } from "esbuild";

/** SST 3's Node build (pkg/runtime/node/build.go): ESM with a `require` shim, `module` before `main`. */
export const SST_BANNER = [
  `import { createRequire as topLevelCreateRequire } from 'module';`,
  `const require = topLevelCreateRequire(import.meta.url);`,
  `import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"`,
  `const __filename = topLevelFileUrlToPath(import.meta.url)`,
  `const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))`,
].join("\n");

/** Bundles `entry` as SST 3 does (pkg/runtime/node/build.go), minified as for a deploy. */
export async function bundleLikeSst(
  entry: string,
  outfile: string,
): Promise<{ metafile: Metafile; text: string; exports: string[] }> {
  const result = await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "esnext",
    mainFields: ["module", "main"],
    banner: { js: SST_BANNER },
    keepNames: true,
    minify: true,
    metafile: true,
    logLevel: "silent",
  });
  const output = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined);
  return { metafile: result.metafile, text: await readFile(outfile, "utf8"), exports: output?.exports ?? [] };
}
