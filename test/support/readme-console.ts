/**
 * @module The README's console blocks as steps a test runs: a README section's `$ npx nimbus ...` lines with
 * the output shown under each, background lines (`... &`, servers a section starts, with the line each prints)
 * and `kill -9 PID` lines (SIGKILL of the background server that printed `pid PID`), and the normalization
 * that hides what differs from run to run.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO } from "./cli-runner.js";

export interface Step {
  /** The line as written, without `$ `. */
  command: string;
  kind: "run" | "background" | "kill";
  /** `nimbus` arguments (run, background), or the pid as the README shows it (kill). */
  args: string[];
  expected: string;
}

/** The README section whose heading matches, up to the next `## `. */
export function readmeSection(heading: RegExp): string {
  const readme = readFileSync(path.join(REPO, "README.md"), "utf8");
  const start = readme.search(heading);
  assert.ok(start >= 0, `README.md has no section ${heading}`);
  const end = readme.slice(start + 1).search(/^## /m);
  return end < 0 ? readme.slice(start) : readme.slice(start, start + 1 + end);
}

/** Words of a shell command line: blanks split, "..." and '...' quote. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3] ?? "");
  return words;
}

/** The steps of the console blocks of `text`, each with the output shown under it. */
export function consoleSteps(text: string): Step[] {
  const steps: Step[] = [];
  for (const block of text.matchAll(/^```console\n([\s\S]*?)^```$/gm)) {
    let current: Step | undefined;
    for (const line of (block[1] ?? "").split("\n")) {
      if (line.startsWith("$ ")) {
        const command = line.slice(2);
        const words = shellWords(command.replace(/\s+#.*$/, ""));
        if (words[0] === "kill") {
          // A pid, never a job (`%2`) or `$!`: outside an interactive shell those name npx's wrapper only.
          assert.match(command, /^kill -9 \d+(\s|$)/, `a kill line names a process id: ${line}`);
          current = { command, kind: "kill", args: [words[2] ?? ""], expected: "" };
        } else {
          assert.deepEqual(words.slice(0, 2), ["npx", "nimbus"], `a console line runs nimbus: ${line}`);
          const background = words.at(-1) === "&";
          const args = words.slice(2, background ? -1 : undefined);
          current = { command, kind: background ? "background" : "run", args, expected: "" };
        }
        steps.push(current);
      } else if (current) {
        current.expected += `${line}\n`;
      }
    }
  }
  return steps;
}

/** What differs from run to run (and machine to machine) becomes a placeholder; progress lines go. */
export function normalize(output: string): string {
  return output
    .split("\n")
    .filter((l) => !/^(sent|consumed) \d+(\/\d+ \(\d+%\))?, [\d,.]+ msg\/s$/.test(l))
    .join("\n")
    .replace(/[0-9A-F]{32}/g, "<msgId>")
    .replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}/g, "<time>")
    .replace(/http:\/\/127\.0\.0\.1:\d+/g, "<url>")
    .replace(/ in \d+\.\d s/g, " in <s> s")
    .replace(/[\d,]+(\.\d+)? msg\/s/g, "<rate> msg/s")
    .replace(/[\d.]+ (B|KiB|MiB|GiB)\/s/g, "<bytes>/s")
    .replace(/message \d+ of (\d+) \.*/g, "message <n> of $1 ...")
    .split("\n")
    .map((l) => l.trimEnd())
    .join("\n")
    .trim();
}
