/**
 * @module Shedding on the event loop's lag, asserted by the path a request takes, never by elapsed time: the
 * shedder given an injected lag source refuses a request on arrival while the lag is past `maxLagMs` and other
 * requests are in progress (free slot or not), admits a lone one, and admits again once the lag is back under; the
 * probe (loop-lag.ts) on a clock moved by hand counts a turn still running, keeps the lateness it measured until
 * its next fire, counts only the process's own CPU share of it, and stops when no request came; and the local
 * server, on both storage modes, answers a send arriving while its loop lags behind a send in progress SYSTEM_BUSY
 * (a pull then is served: the lag refuses sends only)
 * with `{code, message}`, before it reads or writes anything of it, while `/health` is answered.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, SHED_MARK } from "../../lib/core/errors.js";
import { LoadShedder } from "../../lib/http/load-shedder.js";
import { LoopLag } from "../../lib/http/loop-lag.js";
import { holdNextReservation } from "../support/hold-reservation.js";
import { b64, type ErrorBody, ok, type SendAnswer } from "../support/http.js";
import { MODE_LABEL, useTestServer } from "../support/server-fixture.js";

const until = async (what: string, done: () => boolean) => {
  for (let i = 0; !done(); i++) {
    assert.ok(i < 100_000, `never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
};

describe("lag shedding: the shedder's rule", () => {
  it("refuses on arrival while the lag is past maxLagMs with requests in progress, free slot or not, and admits again once it is under", async () => {
    let lag = 0;
    const shedder = new LoadShedder({ maxInFlight: 4, maxWaitMs: 200, maxLagMs: 50, lagMs: () => lag });
    lag = 80;
    assert.equal(shedder.arrivalRefusal(), undefined, "nothing in progress: a lone request that made the loop late");
    const running = await shedder.enter();
    lag = 0;
    assert.equal(shedder.arrivalRefusal(), undefined, "no lag: admitted");
    lag = 50;
    assert.equal(shedder.arrivalRefusal(), undefined, "at the bound: admitted");
    lag = 51;
    const refused = shedder.arrivalRefusal();
    assert.match(refused ?? "", /the event loop runs 51 ms late/);
    assert.equal(shedder.running, 1, "three slots were free");
    // A request already admitted and read (enter) or a parked one woken is not asked about the lag again.
    const release = await shedder.enter();
    assert.equal(shedder.running, 2);
    release();
    lag = 3;
    assert.equal(shedder.arrivalRefusal(), undefined, "the lag back under the bound: admitted again");
    running();
    assert.deepEqual([shedder.lagged, shedder.refused], [1, 1]);
  });

  it("without a lag source (a Lambda container) the lag is never asked", async () => {
    const shedder = new LoadShedder({ maxLagMs: 0 });
    const running = await shedder.enter();
    assert.equal(shedder.arrivalRefusal(), undefined);
    running();
    assert.equal(shedder.lagged, 0);
  });
});

describe("lag shedding: the probe", () => {
  it("counts a turn still running, keeps what it measured until the next fire, scales it by the process's own CPU share, and stops when no request came", async () => {
    let now = 1_000;
    let cpu = 0;
    const probe = new LoopLag({ intervalMs: 10, now: () => now, cpuMs: () => cpu });
    try {
      assert.equal(probe.probing, false, "idle: no timer");
      assert.equal(probe.lagMs(), 0, "the first request starts the probe (due at 1,010)");
      assert.equal(probe.probing, true);
      now = 1_075;
      cpu = 75; // busy the whole time: its own work made it late
      assert.equal(probe.lagMs(), 65, "a turn still running: the probe due at 1,010 is 65 ms late");
      await until("the probe fires", () => probe.fired === 1);
      assert.equal(probe.lagMs(), 65, "measured 65 ms late; re-armed (due at 1,085), not late yet");
      now = 1_160;
      cpu = 92; // 17 ms of CPU over the 85 ms span: the OS ran others, the process was not busy of its own
      await until("the probe fires again", () => probe.fired === 2);
      assert.equal(probe.lagMs(), 15, "75 ms late, but its own share is a fifth: 15 ms");
      await until("the probe fires with requests since", () => probe.fired === 3);
      await until("the probe fires with none since", () => probe.fired === 4);
      assert.equal(probe.probing, false, "no request since its last fire: stopped");
      now = 5_000;
      assert.equal(probe.lagMs(), 0, "started again by the next request, with no old lateness");
    } finally {
      probe.stop();
    }
  });
});

for (const mode of ["local", "aws"] as const) {
  describe(`lag shedding: the local server (${MODE_LABEL[mode]})`, () => {
    let lag = 0;
    const handle = useTestServer(mode, undefined, {
      loadShedding: { maxLagMs: 50, lagMs: () => lag },
      // No background work or registration beside the requests: the store's request counts are theirs alone.
      background: false,
      registerIntervalMs: 3_600_000,
    });

    it("a send arriving while the loop lags behind one in progress is SYSTEM_BUSY {code, message}, reads and writes nothing; health is answered; then sends are admitted again", async () => {
      const { http } = handle;
      const { server } = handle.server;
      ok(await http.put("/topics/LagShed", { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] }));
      const send = (body: string) =>
        http.post<SendAnswer | ErrorBody>("/send", { topic: "LagShed", messages: [{ body: b64(body) }] });
      ok(await send("before"));
      const store = holdNextReservation(server.storage);
      try {
        const held = send("held");
        await until("a send in progress holds the store", store.holding);
        lag = 80;
        // Table reads are left out: the push channel's hint window (the earlier appends) may read on its timer.
        const { tableReads: _r, readUnits: _u, ...counts } = server.storage.counter.snapshot();
        const refused = await send("refused");
        assert.equal(refused.status, 503);
        const body = refused.body as ErrorBody;
        assert.deepEqual(Object.keys(body).sort(), ["code", "message"]);
        assert.equal(body.code, ErrorCode.SYSTEM_BUSY);
        assert.ok(body.message.startsWith(SHED_MARK), body.message);
        assert.match(body.message, /event loop runs 80 ms late/);
        // Refused even from a foreign page and with a body that is no JSON: nothing of it was looked at.
        const unread = await http.raw({ method: "POST", path: "/send", body: "{not json", headers: { origin: "x" } });
        assert.equal((unread.body as ErrorBody).code, ErrorCode.SYSTEM_BUSY);
        const { tableReads: _r2, readUnits: _u2, ...after } = server.storage.counter.snapshot();
        assert.deepEqual(after, counts, "the refusals wrote nothing and read no object");
        assert.equal((await http.get("/health")).status, 200, "reads never wait on the lag");
        // The lag refuses sends only: a pull (as a receive, an ack, a commit) is served, its work not moved later.
        const pulled = await http.post<{ pullStatus: string }>("/pull", {
          consumerGroup: "gLagShed",
          topic: "LagShed",
          brokerName: "broker-a",
          queueId: 0,
          queueOffset: 0,
          maxMsgNums: 1,
        });
        assert.equal(ok(pulled).pullStatus, "FOUND", "a pull is not refused on the lag");
        assert.equal(server.shedder.lagged, 2);
        lag = 0;
        store.release();
        assert.equal((ok(await held) as SendAnswer).queueOffset, 1);
      } finally {
        store.restore();
      }
      lag = 80;
      const alone = ok(await send("alone"));
      assert.equal(
        (alone as SendAnswer).queueOffset,
        2,
        "nothing in progress: admitted, the refused sends took no offset",
      );
      assert.equal(server.shedder.lagged, 2);
      lag = 0;
    });
  });
}
