/**
 * @module Source files stay small enough to read whole: every tracked TypeScript and Java file of the product,
 * its tests and its infrastructure has at most MAX_LINES lines (generated bundles and vendored files excepted).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const MAX_LINES = 400;
const SOURCE = /\.(ts|tsx|mts|java)$/;
/** Built or third-party files: the console's bundle and the vendored RocketMQ protocol. */
const EXCEPT = [/^lib\/console\/build\//, /\/vendor\//];

function trackedSources(): string[] {
  const out = execFileSync("git", ["ls-files", "-z", "--", "lib", "functions", "infra", "test", "sst.config.ts"], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  return out.split("\0").filter((f) => SOURCE.test(f) && !EXCEPT.some((re) => re.test(f)));
}

describe("file sizes", () => {
  it(`every source file has at most ${MAX_LINES} lines`, () => {
    const files = trackedSources();
    assert.ok(files.length > 100, `found only ${files.length} source files: is this a git checkout?`);
    const over = files
      .map((f) => ({ f, lines: readFileSync(path.join(ROOT, f), "utf8").split("\n").length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ f, lines }) => `${f}: ${lines} lines`);
    assert.deepEqual(over, [], "split these files");
  });
});
