/**
 * The local server's budget for request bytes in flight (lib/dev/server-guard.ts): bytes of requests still arriving
 * hold at most half of it (never less than the largest request, when the cap holds one), bytes of whole requests the
 * rest; marking and settling arriving bytes moves them between
 * the two without taking or giving back any.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InFlightBytes } from "../../lib/dev/server-guard.js";

describe("InFlightBytes", () => {
  it("lets bytes still arriving hold half the cap, and whole requests the rest", () => {
    const budget = new InFlightBytes(1000);
    assert.equal(budget.arrivingCap, 500);
    assert.ok(budget.take(400) && budget.markArriving(400));
    assert.ok(budget.take(200), "the cap has room");
    assert.equal(budget.markArriving(200), false, "past the arriving share, though the cap has room");
    assert.equal(budget.arriving, 400, "a refused mark counts nothing");
    budget.release(200);
    assert.ok(budget.take(600), "whole requests take the rest of the cap");
    assert.equal(budget.take(1), false, "the cap is reached");
    assert.equal(budget.used, 1000);
  });

  it("moves bytes out of the arriving share once their request is whole, taking or giving back none", () => {
    const budget = new InFlightBytes(1000);
    assert.ok(budget.take(500) && budget.markArriving(500));
    budget.settleArriving(500);
    assert.equal(budget.arriving, 0);
    assert.equal(budget.used, 500, "still held, now whole");
    assert.ok(budget.take(300) && budget.markArriving(300), "the share has room again");
    budget.settleArriving(300);
    budget.release(800);
    assert.equal(budget.used, 0);
  });

  it("keeps the arriving share at least the largest request when the cap holds one", () => {
    assert.equal(new InFlightBytes(1000, 600).arrivingCap, 600, "a 600-byte request may still come in pieces");
    assert.equal(new InFlightBytes(1000, 400).arrivingCap, 500, "half the cap holds it already");
    assert.equal(new InFlightBytes(500, 600).arrivingCap, 250, "a cap that cannot hold it keeps its half");
    assert.equal(new InFlightBytes(24 * 1024 * 1024).arrivingCap, 12 * 1024 * 1024, "the default cap's half");
    assert.equal(new InFlightBytes(10 * 1024 * 1024).arrivingCap, 8 * 1024 * 1024, "a remoting frame's 8 MiB");
  });
});
