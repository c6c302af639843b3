/**
 * @module The docs' links hold: every relative link in README.md and docs/ names a file that exists, and every
 * `#anchor` names a heading of its page (GitHub's heading ids: lower case, punctuation dropped, spaces as hyphens,
 * a repeated heading numbered).
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const LINK = /\]\(([^)\s]+)\)/g;

/** The lines of a Markdown file outside its code fences. */
function proseLines(file: string): string[] {
  let fenced = false;
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => {
      if (line.startsWith("```")) {
        fenced = !fenced;
        return false;
      }
      return !fenced;
    });
}

function headingId(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replaceAll(" ", "-");
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const ids = new Set<string>();
  for (const line of proseLines(file)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading?.[1] === undefined) continue;
    const id = headingId(heading[1]);
    const n = seen.get(id) ?? 0;
    seen.set(id, n + 1);
    ids.add(n === 0 ? id : `${id}-${n}`);
  }
  return ids;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(path.join(dir, e.name)) : e.name.endsWith(".md") ? [path.join(dir, e.name)] : [],
  );
}

describe("documentation links", () => {
  it("every relative link and anchor in README.md and docs/ resolves", () => {
    const files = [path.join(ROOT, "README.md"), ...markdownFiles(path.join(ROOT, "docs"))];
    const anchors = new Map<string, Set<string>>();
    const broken: string[] = [];
    for (const file of files) {
      for (const [i, line] of proseLines(file).entries()) {
        for (const [, target = ""] of line.matchAll(LINK)) {
          if (/^[a-z]+:/.test(target)) continue;
          const [linkPath = "", anchor] = target.split("#");
          const dest = linkPath === "" ? file : path.resolve(path.dirname(file), linkPath);
          const where = `${path.relative(ROOT, file)} (prose line ${i + 1}): ${target}`;
          if (!existsSync(dest)) broken.push(`${where}: no such file`);
          else if (anchor !== undefined && dest.endsWith(".md")) {
            const ids = anchors.get(dest) ?? anchorsOf(dest);
            anchors.set(dest, ids);
            if (!ids.has(anchor)) broken.push(`${where}: no such heading`);
          }
        }
      }
    }
    assert.ok(files.length > 10, `found only ${files.length} Markdown files`);
    assert.deepEqual(broken, []);
  });
});
