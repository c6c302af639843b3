/**
 * The remoting door's long polling (lib/remoting/pull-waits.ts): a waiting pull is told to read again when an append
 * to its queue wakes it, and not when its connection closes (nobody would read the answer); past its bound a pull
 * does not wait. The path is asserted (what the wait answers and why it ended), never a time.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PullWaits } from "../../lib/remoting/pull-waits.js";

const QUEUE = { topic: "Orders", brokerName: "broker-a", queueId: 0 };
const LONG_MS = 600_000;

describe("a remoting pull's wait", () => {
  it("reads again after an append, not after its connection closed", async () => {
    const waits = new PullWaits(8);
    const woken = waits.wait(QUEUE, LONG_MS, new AbortController().signal);
    waits.appended(QUEUE);
    assert.equal(await woken, true, "an append: read again");
    const connection = new AbortController();
    const closed = waits.wait(QUEUE, LONG_MS, connection.signal);
    connection.abort();
    assert.equal(await closed, false, "a closed connection: no read");
    assert.deepEqual(waits.wakeCounts, { append: 1, timeout: 0, closed: 1 });
    assert.equal(waits.waiting, 0);
  });

  it("does not wait past its bound, nor on a connection already closed", async () => {
    const waits = new PullWaits(1);
    const first = new AbortController();
    const held = waits.wait(QUEUE, LONG_MS, first.signal);
    assert.equal(await waits.wait(QUEUE, LONG_MS, new AbortController().signal), false, "over the bound");
    first.abort();
    assert.equal(await held, false);
    assert.equal(await waits.wait(QUEUE, LONG_MS, first.signal), false, "already closed");
    assert.equal(waits.waiting, 0);
  });
});
