/** The plain-http bench's CPU budget: each side's CPU per request and the cores an offered rate needs. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cpuBudget, describeCpuBudget } from "./cpu-budget.js";

describe("the plain-http bench's CPU budget", () => {
  it("turns each side's CPU seconds into µs per request and the cores the offered rate needs", () => {
    // 40,000 requests: the client spent 24 s (600 µs each), the broker 16 s (400 µs each); at 2,000/s that is 2 cores.
    const b = cpuBudget(2000, 40_000, 24, 16, 2);
    assert.equal(b.clientUsPerRequest, 600);
    assert.equal(b.brokerUsPerRequest, 400);
    assert.equal(b.coresNeeded, 2);
    assert.equal(
      describeCpuBudget("fetch", 2000, b),
      "fetch: CPU per request: client 600 µs, broker 400 µs; 2,000/s needs 2.00 of the machine's 2 cores",
    );
  });

  it("says when the rate needs more cores than the machine has", () => {
    const b = cpuBudget(2000, 40_000, 32, 24, 2);
    assert.equal(b.coresNeeded, 2.8);
    assert.match(describeCpuBudget("fetch", 2000, b), /needs 2\.80 of the machine's 2 cores: more than it has/);
  });

  it("gives no cost when nothing was sent", () => {
    const b = cpuBudget(2000, 0, 1, 1, 2);
    assert.ok(Number.isNaN(b.clientUsPerRequest) && Number.isNaN(b.coresNeeded));
    assert.equal(describeCpuBudget("go", 2000, b), "go: CPU per request: client –, broker –; nothing sent");
  });
});
