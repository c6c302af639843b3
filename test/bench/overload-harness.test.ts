/**
 * @module Smoke test of the overload benchmark's harness (test/bench/load-phases.ts), asserting the paths it
 * takes, never its timing: `nimbus dev` in its own process, an open-loop sender and a /health prober as two
 * more, every answer counted, and the read-back finding every acked send at its offset once (and reporting an
 * ack the store does not hold as lost).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTopic } from "./data-plane.js";
import { type BenchBroker, benchBroker, readBack, runLoadProcesses } from "./load-phases.js";

describe("overload benchmark harness", { timeout: 240_000 }, () => {
  let b: BenchBroker;
  before(async () => {
    b = await benchBroker("async");
  });
  after(async () => {
    await b?.close();
  });

  it("counts every raw answer from a separate process and reads back every acked send once", async () => {
    const url = b.broker.url;
    const topic = `Harness${Date.now().toString(36)}`;
    await createTopic({ url }, topic, 2);
    const run = await runLoadProcesses(b, [
      { kind: "open", url, topic, rate: 40, connections: 4, seconds: 1, bodyBytes: 64 },
      { kind: "health", url, seconds: 1, intervalMs: 100 },
    ]);
    const [sends, health] = run.results;
    const tally = sends?.tally;
    assert.equal(tally?.offered, 40, "every scheduled send is started and counted");
    // Each is answered: OK, or SYSTEM_BUSY when the broker sheds (on a loaded machine it may, even at 40/s).
    assert.equal((tally?.ok ?? 0) + (tally?.busy ?? 0), 40, JSON.stringify(tally));
    assert.deepEqual([tally?.otherAnswers, tally?.noAnswer], [0, 0]);
    const ok = tally?.ok ?? 0;
    assert.ok(ok > 0, "sends are served");
    assert.equal(sends?.acks?.length, ok, "one ack per OK answer");
    assert.equal(health?.tally?.ok, 10, "the prober's /health answers");
    assert.ok(b.broker.pid !== process.pid, "the broker is another process");

    const back = await readBack(url, topic, 2, sends?.acks ?? []);
    assert.deepEqual(back, { acked: ok, found: ok, lost: 0, duplicates: 0, stored: ok, storedUnacked: 0, ok: true });
    const missing = await readBack(url, topic, 2, [...(sends?.acks ?? []), [1, 10_000, "not-stored"]]);
    assert.equal(missing.lost, 1, "an ack the store does not hold is lost");
    assert.equal(missing.ok, false);
  });
});
