/**
 * @module The README's 5-minute tour, word for word: every `$ npx nimbus ...` line of its console blocks runs
 * (as the built command) in order against a fresh local broker, and prints what the tour shows, up to message
 * ids, times, rates, the address, and the generated messages' numbers. The tour is read from README.md's
 * "5-minute tour" section.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureBuilt, nimbus, REPO, startTestBroker, type TestBroker } from "../support/cli-runner.js";

interface Step {
  command: string;
  args: string[];
  expected: string;
}

function tourText(): string {
  const readme = readFileSync(path.join(REPO, "README.md"), "utf8");
  const start = readme.search(/^## .*5-minute tour/im);
  assert.ok(start >= 0, "README.md has no 5-minute tour section");
  const end = readme.slice(start + 1).search(/^## /m);
  return end < 0 ? readme.slice(start) : readme.slice(start, start + 1 + end);
}

/** Words of a shell command line: blanks split, "..." and '...' quote. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3] ?? "");
  return words;
}

/** The `$ npx nimbus ...` lines of the console blocks, each with the output shown under it. */
function tourSteps(text: string): Step[] {
  const steps: Step[] = [];
  for (const block of text.matchAll(/^```console\n([\s\S]*?)^```$/gm)) {
    let current: Step | undefined;
    for (const line of (block[1] ?? "").split("\n")) {
      if (line.startsWith("$ ")) {
        const words = shellWords(line.slice(2));
        assert.deepEqual(words.slice(0, 2), ["npx", "nimbus"], `a tour command runs nimbus: ${line}`);
        current = { command: line.slice(2), args: words.slice(2), expected: "" };
        steps.push(current);
      } else if (current) {
        current.expected += `${line}\n`;
      }
    }
  }
  return steps;
}

/** What differs from run to run (and machine to machine) becomes a placeholder; progress lines go. */
function normalize(output: string): string {
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

describe("the README's 5-minute tour (the built CLI on a fresh broker)", () => {
  let broker: TestBroker;

  before(async () => {
    await ensureBuilt();
    broker = await startTestBroker();
  });
  after(() => broker.close());

  it("runs every command of the tour and prints what the tour shows", async () => {
    const steps = tourSteps(tourText());
    assert.ok(steps.length >= 10, `the tour has its commands (found ${steps.length})`);
    const commands = new Set(steps.map((s) => s.args[0]));
    for (const name of ["updateTopic", "send", "consume", "consumerProgress"]) assert.ok(commands.has(name), name);
    for (const step of steps) {
      const r = await nimbus(step.args, { url: broker.url });
      assert.equal(r.code, 0, `${step.command}\n${r.stderr}`);
      assert.equal(normalize(r.stdout + r.stderr), normalize(step.expected), step.command);
    }
  });
});
