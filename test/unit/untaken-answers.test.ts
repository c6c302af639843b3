/**
 * @module The process's ledger of untaken answers (lib/core/untaken-answers.ts): connections' shares add up, a share
 * set again replaces what it counted, a closed connection's is given back, an answer fits the bound, or an eighth
 * more when it is small, and the ledger is full once past the bound, when the largest holder is closed.
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

describe("the ledger past its bound", () => {
  it("closes the connection holding the largest share of an eighth or more, one at a time", () => {
    const ledger = new UntakenAnswers(400);
    const closed: string[] = [];
    const share = (name: string, bytes: number) => {
      const s = ledger.share(() => closed.push(name));
      s.set(bytes);
      return s;
    };
    const small = share("small", 40); // under minShedBytes (an eighth: 50): not closed for the ledger
    const large = share("large", 300);
    const mid = share("mid", 70);
    assert.equal(small.full(), true, "470 held: past 400");
    assert.deepEqual(closed, ["large"]);
    assert.equal(mid.full(), true, "still past it while the large one closes");
    assert.deepEqual(closed, ["large"], "one at a time");
    large.release();
    assert.equal(mid.full(), false, "110 held");
    mid.set(370);
    assert.equal(small.full(), true);
    assert.deepEqual(closed, ["large", "mid"]);
    mid.release();
    small.set(420);
    assert.equal(small.full(), true);
    assert.deepEqual(closed, ["large", "mid", "small"], "alone past the bound, it is the largest");
  });

  it("leaves a share that cannot close its connection, and forgets released ones", () => {
    const ledger = new UntakenAnswers(400);
    const others = ledger.share(); // no way to close it
    others.set(500);
    const closed: string[] = [];
    const own = ledger.share(() => closed.push("own"));
    own.set(60);
    assert.equal(own.full(), true);
    assert.deepEqual(closed, ["own"], "the largest that can be closed");
    own.release(); // forgotten: no longer a connection being closed, which would hold off the next
    const third = ledger.share(() => closed.push("third"));
    third.set(60);
    assert.equal(third.full(), true);
    assert.deepEqual(closed, ["own", "third"]);
    third.release();
    others.release();
    assert.equal(ledger.held, 0);
  });
});
