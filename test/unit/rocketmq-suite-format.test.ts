import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type BrokerRun, formatRocketMQ, type PhaseFigure, steadyRate } from "../bench/rocketmq-suite.js";

const phase = (name: string, msgPerSec: number, seconds: number, firstMessageMs?: number): PhaseFigure => ({
  phase: name,
  messages: msgPerSec * seconds,
  seconds,
  msgPerSec,
  p50Ms: 1,
  p99Ms: 2,
  errors: 0,
  ...(firstMessageMs !== undefined && { firstMessageMs }),
});

describe("rocketmq suite's report: a consume phase's start-up shown apart", () => {
  it("the rate from the first message leaves the consumer's start-up out", () => {
    assert.equal(steadyRate(phase("remoting consume", 10_000, 2, 1000)), 20_000);
    assert.equal(steadyRate(phase("remoting async", 10_000, 2)), 10_000);
    // Nothing left of the phase after its first message (its figures are rounded): the phase's own rate.
    assert.equal(steadyRate(phase("remoting consume", 1000, 1, 1000.04)), 1000);
  });

  it("prints each broker's first message and the ratio of the rates from it, for the phases that have one", () => {
    const runs: BrokerRun[] = [
      {
        broker: "rocketmq",
        round: 1,
        serverCores: 1,
        phases: [phase("remoting consume", 10_000, 2, 1000), phase("remoting async", 8000, 2)],
      },
      {
        broker: "nimbus",
        round: 1,
        serverCores: 1,
        phases: [phase("remoting consume", 15_000, 2, 100), phase("remoting async", 9000, 2)],
      },
    ];
    const table = formatRocketMQ(runs);
    // RocketMQ: 20,000 messages in 1 s after its first; Nimbus: 30,000 in 1.9 s.
    assert.match(table, /\| remoting consume \| 1,000 \| 100 \| 20,000 \| 15,789 \| 0\.79× \|/);
    assert.match(table, /\| remoting consume \| 10,000 \(1\.0 \/ 2\.0\) \| 15,000 \(1\.0 \/ 2\.0\) \| 1\.50× \|/);
    // The phase without a first message has its row in the first two tables only.
    assert.equal(table.split("\n").filter((l) => l.startsWith("| remoting async |")).length, 2);
    assert.equal(table.split("\n").filter((l) => l.startsWith("| remoting consume |")).length, 3);
  });
});
