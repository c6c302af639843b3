/**
 * @module The process's ledger of untaken answers (lib/core/untaken-answers.ts): connections' shares add up, a share
 * set again replaces what it counted, a closed connection's is given back, an answer fits the bound, or an eighth
 * more when it is small, and the ledger is full once past the bound.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { roomFor, SMALL_ANSWER_BYTES, StallWatch, UntakenAnswers } from "../../lib/core/untaken-answers.js";

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

describe("the stall watch of a connection's untaken answers", () => {
  it("calls its stall when they stay at or above their level, never while they keep falling or are 0", (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    let stalls = 0;
    const watch = new StallWatch(1000, () => stalls++);
    watch.update(0);
    t.mock.timers.tick(5000);
    assert.equal(stalls, 0, "nothing waits: no timer");
    watch.update(500);
    t.mock.timers.tick(900);
    watch.update(400); // taken: 100 bytes less
    t.mock.timers.tick(900);
    watch.update(450); // a new answer, none taken since: still due 1000 ms after the 400
    t.mock.timers.tick(50);
    watch.update(0); // all taken
    t.mock.timers.tick(5000);
    assert.equal(stalls, 0, "falling or drained, never stalled");
    watch.update(300);
    t.mock.timers.tick(600);
    watch.update(300); // nothing taken
    t.mock.timers.tick(400);
    assert.equal(stalls, 1, "nothing taken for the whole time: stalled");
  });

  it("stalls a share's connection on its settled counts, and a released share no more", (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    let stalls = 0;
    const share = new UntakenAnswers(1_000_000).share(() => stalls++, 1000);
    share.set(100); // gathered, not yet written: no timer
    t.mock.timers.tick(5000);
    assert.equal(stalls, 0);
    share.settled(100);
    share.release();
    t.mock.timers.tick(5000);
    assert.equal(stalls, 0, "a released share stalls no more");
    share.settled(100);
    t.mock.timers.tick(1000);
    assert.equal(stalls, 1);
  });
});
