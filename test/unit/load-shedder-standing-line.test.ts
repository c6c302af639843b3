/**
 * The load shedder's standing line (lib/http/load-shedder.ts, `standingLineMs`): the refusal on the expected wait
 * applies once the line has stood without emptying; a burst joins a younger line. On a clock the test moves.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { LoadShedder, RATE_MIN_RELEASES } from "../../lib/http/load-shedder.js";

/** An expiry timer that never fires: the test's clock decides. */
const never = () => () => undefined;

describe("load shedding: a burst joins the line, a standing line refuses on arrival", () => {
  it("a line younger than standingLineMs takes a burst past the expected wait; once it has stood, the excess is refused", async () => {
    const clock = { now: 0 };
    const shedder = new LoadShedder({
      maxInFlight: 1,
      maxWaitMs: 200,
      maxWaiting: 100,
      maxExpectedWaitMs: 50,
      now: () => clock.now,
      schedule: never,
    });
    assert.equal(shedder.standingLineMs, 100, "default: half the bound");
    for (let i = 0; i < RATE_MIN_RELEASES; i++) {
      const release = await shedder.enter();
      clock.now += 1;
      release();
    }
    assert.equal(shedder.expectedWaitMs(), 1, "1 ms a turn");
    const held = await shedder.enter();
    // A burst of 80 at one instant: 80 ms of work, past the 50 ms expected wait, but the line has only just formed.
    const burst = Array.from({ length: 80 }, () => shedder.enter());
    assert.equal(shedder.waiting, 80, "the whole burst waits (maxWaiting 100 and maxWaitMs 200 still bound it)");
    assert.equal(shedder.refused, 0);
    clock.now += 99; // the line has stood 99 ms: still a burst (the held request counts as a stall: ~100 ms a turn)
    const late = shedder.enter();
    assert.equal(shedder.waiting, 81, "joined");
    clock.now += 1; // 100 ms: the line stands, and it would take far longer than 50 ms
    await assert.rejects(shedder.enter(), (err: unknown) => {
      assert.ok(isNimbusError(err, ErrorCode.SYSTEM_BUSY));
      assert.match(err.message, /81 requests are waiting, about \d+ ms of work/);
      return true;
    });
    assert.equal(shedder.refused, 1, "refused on arrival, before it joined");
    held();
    for (const waiter of [...burst, late]) (await waiter)();
    assert.equal(shedder.waiting, 0);
    // The line emptied: the next one that forms is a burst again, whatever the expected wait.
    const again = await shedder.enter();
    const next = shedder.enter();
    assert.equal(shedder.waiting, 1, "a new line: it waits");
    again();
    (await next)();
    assert.equal(shedder.refused, 1);
  });
});
