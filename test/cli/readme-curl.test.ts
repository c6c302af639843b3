/**
 * @module The README's curl section, as written: each `$ curl -s [-X METHOD] URL [-d BODY]` line of its console
 * block is sent (with fetch, to a fresh local broker in place of localhost:9876) and answers what the README
 * shows under it, up to message ids, millisecond times and the broker's address.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestBroker, type TestBroker } from "../support/cli-runner.js";
import { readmeSection, shellWords } from "../support/readme-console.js";

interface CurlStep {
  line: string;
  method: string;
  path: string;
  body: string | undefined;
  expected: string;
}

function curlSteps(text: string): CurlStep[] {
  const steps: CurlStep[] = [];
  for (const block of text.matchAll(/^```console\n([\s\S]*?)^```$/gm)) {
    for (const line of (block[1] ?? "").split("\n")) {
      if (line.startsWith("$ ")) {
        const words = shellWords(line.slice(2));
        assert.deepEqual(words.slice(0, 2), ["curl", "-s"], `a console line runs curl -s: ${line}`);
        const flag = (name: string) => {
          const i = words.indexOf(name);
          return i < 0 ? undefined : words[i + 1];
        };
        const url = words
          .slice(2)
          .find((w, i, rest) => w.startsWith("localhost:9876/") && !rest[i - 1]?.startsWith("-"));
        assert.ok(url, `the line names a localhost:9876 URL: ${line}`);
        steps.push({
          line,
          method: flag("-X") ?? "GET",
          path: url.slice("localhost:9876".length),
          body: flag("-d"),
          expected: "",
        });
      } else if (line !== "") {
        const last = steps.at(-1);
        if (last) last.expected += line;
      }
    }
  }
  return steps;
}

const normalize = (answer: string) =>
  answer
    .replace(/[0-9A-F]{32}/g, "<msgId>")
    .replace(/\b1\d{12}\b/g, "<ms>")
    .replace(/http:\/\/127\.0\.0\.1:\d+/g, "<url>");

describe("the README's curl section (a fresh local broker)", () => {
  let broker: TestBroker;
  before(async () => {
    broker = await startTestBroker();
  });
  after(() => broker.close());

  it("answers each request with what the README shows, its own topic included", async () => {
    const steps = curlSteps(readmeSection(/^## The HTTP API with curl/m));
    assert.ok(steps.length >= 5, `the section has its requests (found ${steps.length})`);
    assert.ok(
      steps.every((s) => !s.line.includes("TopicTest")),
      "the section keeps off the tour's topic",
    );
    for (const step of steps) {
      assert.notEqual(step.expected, "", `the README shows the answer of ${step.line}`);
      const response = await fetch(`${broker.url}${step.path}`, {
        method: step.method,
        // What curl's -d sends: the body as form data (the broker reads it as JSON, as it does curl's).
        ...(step.body === undefined
          ? {}
          : { body: step.body, headers: { "content-type": "application/x-www-form-urlencoded" } }),
      });
      assert.equal(normalize(await response.text()), normalize(step.expected), step.line);
    }
  });
});
