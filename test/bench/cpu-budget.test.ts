/** The plain-http bench's CPU budget: each side's CPU per request and the cores an offered rate needs. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cpuBudget, describeCpuBudget } from "./cpu-budget.js";
import { formatPlainHttp, type PlainHttpOptions, type PlainHttpRow } from "./plain-http.js";

const sent = { offeredPerSec: 2000, requestsSent: 40_000, cores: 2 };

describe("the plain-http bench's CPU budget", () => {
  it("gives the client's cost per request sent, the broker's per request answered, and the cores at that rate", () => {
    // The client spent 24 s on 40,000 sends (600 µs each); the broker 15.2 s on the 38,000 it answered (400 µs each).
    const budget = cpuBudget({ ...sent, requestsAnswered: 38_000, clientCpuSeconds: 24, brokerCpuSeconds: 15.2 });
    assert.equal(budget.clientUsPerRequest, 600);
    assert.equal(budget.brokerUsPerRequest, 400);
    assert.equal(budget.clientCoresNeeded, 1.2);
    assert.equal(budget.coresNeeded, 2);
    assert.equal(
      describeCpuBudget("fetch", budget),
      "fetch: CPU per request: client 600 µs, broker 400 µs; at these costs 2,000/s needs 1.20 cores for the client " +
        "alone, 2.00 with the broker, of the machine's 2 cores",
    );
  });

  it("says when the two together need more cores than the machine has", () => {
    const budget = cpuBudget({ ...sent, requestsAnswered: 40_000, clientCpuSeconds: 32, brokerCpuSeconds: 24 });
    assert.equal(budget.coresNeeded, 2.8);
    assert.match(
      describeCpuBudget("fetch", budget),
      /1\.60 cores for the client alone, 2\.80 with the broker, of the machine's 2 cores: more than it has/,
    );
  });

  it("gives the costs only, with no cores, when asked (the overload row)", () => {
    const budget = cpuBudget({ ...sent, requestsAnswered: 40_000, clientCpuSeconds: 32, brokerCpuSeconds: 24 });
    assert.equal(
      describeCpuBudget("go at 2× capacity", budget, false),
      "go at 2× capacity: CPU per request: client 800 µs, broker 600 µs",
    );
  });

  it("gives no cost when nothing was sent or answered", () => {
    const budget = cpuBudget({
      ...sent,
      requestsSent: 0,
      requestsAnswered: 0,
      clientCpuSeconds: 1,
      brokerCpuSeconds: 1,
    });
    assert.ok(Number.isNaN(budget.clientUsPerRequest) && Number.isNaN(budget.coresNeeded));
    assert.equal(describeCpuBudget("go", budget), "go: CPU per request: client –, broker –; nothing sent or answered");
  });

  it("is printed per row by the suite: the cores for a row at the fixed rate, the costs only for the overload row", () => {
    const options: PlainHttpOptions = {
      rate: 2000,
      seconds: 20,
      clients: ["fetch"],
      flush: "async",
      auth: false,
      factor: 2,
      overloadClient: "fetch",
      goPool: 0,
    };
    const row = (name: string, offeredPerSec: number, capacityPerSec?: number): PlainHttpRow => ({
      row: name,
      offeredPerSec,
      offered: 40_000,
      ok: 30_000,
      busy: 10_000,
      other: 0,
      errors: 0,
      okPerSec: 1500,
      okP50Ms: 1,
      okP99Ms: 2,
      busyP99Ms: 3,
      busyMaxMs: 4,
      answerP99Ms: 5,
      lagP99Ms: 6,
      callP99Ms: 7,
      busyCallMaxMs: 8,
      okCallP99Ms: 9,
      busyWhy: {},
      capacityPerSec,
      clientCores: 1,
      brokerCores: 1,
      cpu: cpuBudget({ ...sent, offeredPerSec, requestsAnswered: 40_000, clientCpuSeconds: 32, brokerCpuSeconds: 24 }),
      load: [1, 1],
    });
    const lines = formatPlainHttp(options, [row("fetch", 2000), row("fetch at 2× capacity", 4000, 2000)]).split("\n");
    assert.ok(
      lines.includes(
        "fetch: CPU per request: client 800 µs, broker 600 µs; at these costs 2,000/s needs 1.60 cores for the client " +
          "alone, 2.80 with the broker, of the machine's 2 cores: more than it has, so the rate cannot be kept",
      ),
    );
    assert.ok(lines.includes("fetch at 2× capacity: CPU per request: client 800 µs, broker 600 µs"));
  });
});
