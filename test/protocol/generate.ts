/**
 * @module `npm run generate`: writes what derives from lib/protocol into docs/ — `docs/openapi.json` and
 * the generated tables of `docs/api.md`. With `--check` it writes nothing and exits 1 when either is
 * stale (test/protocol/docs.test.ts runs the same comparison in `npm test`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openApiDocument } from "../../lib/protocol/openapi.js";
import { withGeneratedSections } from "../../lib/protocol/reference.js";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const OPENAPI_PATH = path.join(ROOT, "docs/openapi.json");
export const API_DOC_PATH = path.join(ROOT, "docs/api.md");

/** The generated files as they should be: path and text. */
export function expectedFiles(): { path: string; text: string }[] {
  return [
    { path: OPENAPI_PATH, text: `${JSON.stringify(openApiDocument(), null, 2)}\n` },
    { path: API_DOC_PATH, text: withGeneratedSections(readFileSync(API_DOC_PATH, "utf8")) },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes("--check");
  let stale = 0;
  for (const file of expectedFiles()) {
    let current = "";
    try {
      current = readFileSync(file.path, "utf8");
    } catch {
      // A missing file is stale.
    }
    if (current === file.text) continue;
    stale++;
    if (check) console.error(`stale: ${path.relative(ROOT, file.path)} (run npm run generate)`);
    else {
      writeFileSync(file.path, file.text);
      console.log(`wrote ${path.relative(ROOT, file.path)}`);
    }
  }
  process.exitCode = check && stale > 0 ? 1 : 0;
}
