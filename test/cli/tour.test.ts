/**
 * @module The README's 5-minute tour, word for word: every `$ npx nimbus ...` line of its console blocks runs
 * (as the built command) in order against a fresh local broker, and prints what the tour shows, up to message
 * ids, times, rates, the address, and the generated messages' numbers. The tour is read from README.md's
 * "5-minute tour" section.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ensureBuilt, nimbus, startTestBroker, type TestBroker } from "../support/cli-runner.js";
import { consoleSteps, normalize, readmeSection } from "../support/readme-console.js";

describe("the README's 5-minute tour (the built CLI on a fresh broker)", () => {
  let broker: TestBroker;

  before(async () => {
    await ensureBuilt();
    broker = await startTestBroker();
  });
  after(() => broker.close());

  it("runs every command of the tour and prints what the tour shows", async () => {
    const steps = consoleSteps(readmeSection(/^## .*5-minute tour/im));
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
