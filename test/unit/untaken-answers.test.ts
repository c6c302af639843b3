/**
 * @module The process's ledger of untaken answers (lib/core/untaken-answers.ts): connections' shares add up, a share
 * set again replaces what it counted, a closed connection's is given back, an answer fits the bound, or an eighth
 * more when it is small, and the ledger is full once past the bound.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { roomFor, SMALL_ANSWER_BYTES, UntakenAnswers } from "../../lib/core/untaken-answers.js";

describe("the untaken answers' ledger", () => {
  it("sums its shares, each replacing what it counted before, and takes a released one out", () => {
    const ledger = new UntakenAnswers(1_000_000);
    const [a, b] = [ledger.share(), ledger.share()];
    a.set(300_000);
    b.set(200_000);
    a.set(100_000);
    assert.equal(ledger.held, 300_000);
    a.release();
    assert.equal(ledger.held, 200_000);
    a.release();
    assert.equal(ledger.held, 200_000, "a second release gives back nothing more");
  });

  it("fits an answer under the bound, a small one under an eighth more", () => {
    const ledger = new UntakenAnswers(1_000_000);
    const share = ledger.share();
    share.set(900_000);
    assert.equal(share.fits(100_000), true, "exactly at the bound");
    assert.equal(share.fits(100_001), false);
    share.set(1_000_000);
    assert.equal(share.fits(SMALL_ANSWER_BYTES), true, "a small answer past the bound, within an eighth more");
    assert.equal(share.fits(SMALL_ANSWER_BYTES + 1), false, "a larger one is held to the bound");
    assert.equal(share.full(), false, "at the bound, not past it");
    share.set(1_000_001);
    assert.equal(share.full(), true, "past it: new requests are refused");
    share.set(1_125_000);
    assert.equal(share.fits(1), false, "past the eighth more, nothing fits");
    assert.equal(roomFor(800, 64), 900);
    assert.equal(roomFor(800, SMALL_ANSWER_BYTES + 1), 800);
  });
});
