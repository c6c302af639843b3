/**
 * @module Load shedding, asserted by the path a request takes, never by elapsed time: a store held still and
 * a controllable clock make a send wait past the bound; it is answered SYSTEM_BUSY before its route runs
 * (nothing of it is stored), while health and admin reads are answered with the line full; the shedder's own
 * rules (the line's bound, a request that arrived too late, the next waiter admitted in order); and the refusal
 * on arrival when the line ahead would take longer than `maxExpectedWaitMs` to drain at the service rate (requests
 * finished while every slot was taken; a clock moved by hand makes it), through the shedder and through the server
 * (which refuses it before reading its body), while a burst after a quiet spell is admitted as far as that rate
 * drains it.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";
import { LoadShedder, RATE_MIN_RELEASES, RATE_WINDOW_MS } from "../../lib/http/load-shedder.js";
import { holdNextReservation } from "../support/hold-reservation.js";

const never = () => () => undefined;
const utf8 = (s: string) => new TextEncoder().encode(s);
const until = async (what: string, ok: () => boolean) => {
  for (let i = 0; !ok(); i++) {
    assert.ok(i < 100_000, `never: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
};

describe("load shedding: the shedder's rules", () => {
  it("admits in order, refuses a waiter past the bound when its turn comes, and a full line at once; a free slot never refuses", async () => {
    let now = 0;
    const shedder = new LoadShedder({ maxInFlight: 1, maxWaitMs: 200, maxWaiting: 2, now: () => now, schedule: never });
    const first = await shedder.enter();
    const second = shedder.enter();
    const third = shedder.enter();
    await assert.rejects(shedder.enter(), { code: ErrorCode.SYSTEM_BUSY }, "the line holds 2");
    now += 150;
    first();
    const releaseSecond = await second; // waited 150 ms: within the bound
    now += 60;
    releaseSecond();
    await assert.rejects(third, { code: ErrorCode.SYSTEM_BUSY }, "waited 210 ms: refused when its turn came");
    const holder = await shedder.enter(now - 201); // a free slot and nobody ahead: it runs, however late
    await assert.rejects(
      shedder.enter(now - 201),
      { code: ErrorCode.SYSTEM_BUSY },
      "must wait, and arrived too long ago",
    );
    holder();
    assert.equal(shedder.running, 0);
    assert.equal(shedder.refused, 3);
    (await shedder.enter())();
  });

  it("a waiter past the bound is refused when its timer fires, without waiting for a turn", async () => {
    let now = 0;
    let expire: (() => void) | undefined;
    const shedder = new LoadShedder({
      maxInFlight: 1,
      now: () => now,
      schedule: (fn) => {
        expire = fn;
        return () => undefined;
      },
    });
    const held = await shedder.enter();
    const waiting = shedder.enter();
    now += 201;
    expire?.();
    await assert.rejects(waiting, { code: ErrorCode.SYSTEM_BUSY });
    assert.equal(shedder.waiting, 0);
    held();
  });
});

describe("load shedding: the expiry timer and parked requests", () => {
  /** A schedule whose timers the test fires by hand, in the order they were set. */
  const handTimers = () => {
    const timers: (() => void)[] = [];
    return {
      timers,
      schedule: (fn: () => void) => {
        timers.push(fn);
        return () => undefined;
      },
    };
  };

  it("a timer that fires at the bound, not past it, is set again: the waiter is refused when the next one fires", async () => {
    let now = 0;
    const { timers, schedule } = handTimers();
    const shedder = new LoadShedder({ maxInFlight: 1, maxWaitMs: 200, now: () => now, schedule });
    const held = await shedder.enter();
    const waiting = shedder.enter();
    let refused = false;
    waiting.catch(() => {
      refused = true;
    });
    now = 200; // exactly the bound: not past it yet
    timers.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(refused, false, "not refused before the bound has passed");
    assert.equal(timers.length, 1, "the timer was set again for the rest");
    now = 201;
    timers.shift()?.();
    await assert.rejects(waiting, { code: ErrorCode.SYSTEM_BUSY });
    assert.deepEqual([shedder.waiting, shedder.expired], [0, 1], "answered by the timer, not by a release");
    held();
  });

  it("a parked request holds no slot while it waits, and takes a turn again when woken", async () => {
    // A clock that stands still: the woken request's wait never passes the bound, however slow the machine.
    const shedder = new LoadShedder({ maxInFlight: 1, maxWaitMs: 200, now: () => 0, schedule: never });
    const release = await shedder.enter();
    let wake: (v: string) => void = () => undefined;
    const parked = shedder.parkWhile(release, () => new Promise<string>((resolve) => (wake = resolve)));
    await until("parked", () => shedder.parked === 1);
    assert.equal(shedder.running, 0, "the slot is free while the request waits");
    const send = await shedder.enter(); // another request runs at once
    wake("woken");
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual([shedder.parked, shedder.waiting], [0, 1], "woken, it waits its turn as any request");
    send();
    const again = await parked;
    assert.equal(again.value, "woken");
    assert.equal(shedder.running, 1);
    again.release();
    assert.equal(shedder.running, 0);
  });
});

describe("load shedding: refusal on arrival by the service rate", () => {
  /**
   * One slot, a 200 ms bound, a 50 ms expected-wait bound, on a clock the test moves and no expiry timer; the
   * expected wait refuses from the line's start (`standingLineMs` 0) unless `standingLineMs` says otherwise.
   */
  function lineOfOne(standingLineMs = 0) {
    const clock = { now: 0 };
    const shedder = new LoadShedder({
      maxInFlight: 1,
      maxWaitMs: 200,
      maxWaiting: 100,
      maxExpectedWaitMs: 50,
      standingLineMs,
      now: () => clock.now,
      schedule: never,
    });
    return { clock, shedder };
  }

  /**
   * RATE_MIN_RELEASES requests run one after another on the one slot, each holding it `serviceMs`, with `idleMs`
   * between them: the service rate.
   */
  async function serveSteadily(shedder: LoadShedder, clock: { now: number }, serviceMs: number, idleMs = 0) {
    for (let i = 0; i < RATE_MIN_RELEASES; i++) {
      const release = await shedder.enter();
      clock.now += serviceMs;
      release();
      clock.now += idleMs;
    }
  }

  it("a request is refused on arrival once the line ahead drains slower than maxExpectedWaitMs; without a recent rate it waits", async () => {
    const { clock, shedder } = lineOfOne();
    assert.equal(new LoadShedder({ maxWaitMs: 200 }).maxExpectedWaitMs, 20, "default: a tenth of the bound");
    assert.equal(shedder.expectedWaitMs(), undefined, "no rate before RATE_MIN_RELEASES releases");
    await serveSteadily(shedder, clock, 10);
    assert.equal(shedder.expectedWaitMs(), 10, "one request's turn: the busy time per release");
    const held = await shedder.enter();
    // Nobody ahead can be served before `held` is released: the line only grows.
    const waiters = Array.from({ length: 5 }, () => shedder.enter().catch((err: unknown) => err));
    assert.equal(shedder.waiting, 5, "10, 20, ... 50 ms expected: within 50 ms, they wait");
    assert.equal(shedder.expectedWaitMs(), 60);
    await assert.rejects(shedder.enter(), (err: unknown) => {
      assert.ok(isNimbusError(err, ErrorCode.SYSTEM_BUSY));
      assert.match(err.message, /5 requests are waiting, about 60 ms of work/);
      return true;
    });
    assert.equal(shedder.waiting, 5, "refused before it joined the line");
    assert.equal(shedder.refused, 1);
    clock.now += RATE_WINDOW_MS; // the releases left the window: no rate, so no refusal on arrival
    assert.equal(shedder.expectedWaitMs(), undefined);
    const late = shedder.enter().catch((err: unknown) => err);
    assert.equal(shedder.waiting, 6, "without a recent rate it joins the line (maxWaitMs still bounds it)");
    clock.now -= RATE_WINDOW_MS;
    held();
    for (const waiter of [...waiters, late]) {
      const outcome = await waiter;
      assert.equal(typeof outcome, "function", "admitted in turn");
      (outcome as () => void)();
    }
    assert.equal(shedder.refused, 1);
  });

  it("a stall counts: the rate is measured up to now, so a store that stopped releasing refuses sooner", async () => {
    const clock = { now: 0 };
    const shedder = new LoadShedder({
      maxInFlight: 1,
      maxWaitMs: 2000,
      maxExpectedWaitMs: 50,
      standingLineMs: 0,
      now: () => clock.now,
      schedule: never,
    });
    await serveSteadily(shedder, clock, 1);
    assert.equal(shedder.expectedWaitMs(), 1);
    const held = await shedder.enter();
    const first = shedder.enter();
    assert.equal(shedder.waiting, 1, "1 ms per turn: it waits");
    clock.now = 900; // nothing released for almost a second: the releases are still in the window
    await assert.rejects(shedder.enter(), { code: ErrorCode.SYSTEM_BUSY }, "2 turns of 900 / 32 ms each: over 50 ms");
    held();
    (await first)();
  });

  it("a burst after a quiet spell is admitted as far as the service rate drains it, refused only past that", async () => {
    const { clock, shedder } = lineOfOne();
    // One request every 31 ms, each served in 1 ms: the releases' pace is 31 ms, the broker's 1 ms.
    await serveSteadily(shedder, clock, 1, 30);
    assert.equal(shedder.expectedWaitMs(), 1, "the idle time between requests is no service time");
    const held = await shedder.enter();
    const burst = Array.from({ length: 50 }, () => shedder.enter());
    assert.equal(shedder.waiting, 50, "50 turns of 1 ms: within 50 ms, all wait (at 31 ms a turn, only one would)");
    assert.equal(shedder.refused, 0);
    await assert.rejects(shedder.enter(), (err: unknown) => {
      assert.ok(isNimbusError(err, ErrorCode.SYSTEM_BUSY));
      assert.match(err.message, /50 requests are waiting, about 51 ms of work/);
      return true;
    });
    assert.equal(shedder.refused, 1, "only the request past the line the rate drains in 50 ms");
    held();
    for (const waiter of burst) (await waiter)();
    assert.equal(shedder.running, 0);
  });
});

describe("load shedding: the local server", () => {
  let dataDir = "";
  let server: LocalServer;
  let api: NimbusApi;
  let now = 1_000;
  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-shed-"));
    server = await startLocalServer({
      port: 0,
      storage: { kind: "local", dataDir },
      // maxExpectedWaitMs as a number of its own (the default is a tenth of maxWaitMs): two sends wait, a third is refused.
      // standingLineMs 0: the expected wait refuses from the line's first waiter (the test's clock stands still).
      loadShedding: {
        maxInFlight: 1,
        maxWaitMs: 200,
        maxExpectedWaitMs: 50,
        standingLineMs: 0,
        now: () => now,
        schedule: never,
      },
      // No background work or registration beside the requests: the store's request counts are theirs alone.
      background: false,
      registerIntervalMs: 3_600_000,
    });
    // This client takes a refusal as final, to see it; the SDK's default sends a shed request again.
    api = new NimbusApi({ endpoints: server.url, timeoutMs: 60_000, shedRetries: 0 });
  });

  after(async () => {
    await api.close();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("a send that waited past the bound behind a held store is SYSTEM_BUSY and stores nothing; reads stay prompt", async () => {
    const q = { topic: "Shed", brokerName: "broker-a", queueId: 0 };
    const send = (body: string) => api.send({ ...q, messages: [{ body: utf8(body) }] });
    await send("warm");
    const store = holdNextReservation(server.storage);
    try {
      const first = send("held");
      await until("the first send holds the store", store.holding);
      const second = send("shed").catch((err: unknown) => err);
      await until("the second send waits its turn", () => server.shedder.waiting === 1);
      assert.equal((await api.health()).status, "ok", "health is answered while the line is full");
      assert.ok((await api.topicStatus(q.topic)).length > 0, "an admin read too");
      now += 201;
      store.release();
      assert.equal((await first).queueOffset, 1);
      const refused = await second;
      assert.ok(isNimbusError(refused, ErrorCode.SYSTEM_BUSY), `got ${String(refused)}`);
      assert.match((refused as Error).message, /waited 201 ms/);
    } finally {
      store.restore();
    }
    const pulled = await api.pull({ consumerGroup: "G", ...q, queueOffset: 0, maxMsgNums: 32 });
    assert.deepEqual(
      pulled.messages.map((m) => new TextDecoder().decode(m.body)),
      ["warm", "held"],
      "the shed send wrote nothing",
    );
    assert.equal(server.shedder.refused, 1);
  });

  it("a send arriving behind a line the recent rate drains slower than maxExpectedWaitMs is refused at once and stores nothing", async () => {
    const q = { topic: "ShedOnArrival", brokerName: "broker-a", queueId: 0 };
    const send = (body: string) => api.send({ ...q, messages: [{ body: utf8(body) }] });
    // The service rate: RATE_MIN_RELEASES sends, each holding the one slot for 20 ms of the server's clock (the
    // store held while the clock moves), after the earlier tests' releases left the window: 20 ms a turn.
    now += 2 * RATE_WINDOW_MS;
    const warm: string[] = [];
    for (let i = 0; i < RATE_MIN_RELEASES; i++) {
      warm.push(`warm ${i}`);
      const held = holdNextReservation(server.storage);
      const sent = send(`warm ${i}`);
      await until("the warm send holds the store", held.holding);
      now += 20;
      held.restore();
      await sent;
    }
    const refusedBefore = server.shedder.refused;
    const store = holdNextReservation(server.storage);
    try {
      const first = send("held");
      await until("the first send holds the store", store.holding);
      const waiting = [send("waits 1"), send("waits 2")];
      await until("two sends wait their turn (20 and 40 ms expected)", () => server.shedder.waiting === 2);
      const { tableReads: _r, readUnits: _u, ...storeWrites } = server.storage.counter.snapshot();
      const refused = await send("refused on arrival").catch((err: unknown) => err);
      assert.ok(isNimbusError(refused, ErrorCode.SYSTEM_BUSY), `got ${String(refused)}`);
      assert.match((refused as Error).message, /2 requests are waiting, about 60 ms of work/);
      // Table reads are left out: the push channel's hint window (earlier appends) may read on its timer meanwhile.
      const { tableReads: _r2, readUnits: _u2, ...after } = server.storage.counter.snapshot();
      assert.deepEqual(after, storeWrites, "the refusal wrote nothing and read no object");
      assert.ok(store.holding() && server.shedder.waiting === 2, "refused while the line waits, the clock unmoved");
      store.release();
      assert.equal((await first).queueOffset, RATE_MIN_RELEASES);
      assert.deepEqual(
        (await Promise.all(waiting)).map((a) => a.queueOffset),
        [RATE_MIN_RELEASES + 1, RATE_MIN_RELEASES + 2],
      );
    } finally {
      store.restore();
    }
    assert.equal(server.shedder.refused, refusedBefore + 1);
    const pulled = await api.pull({ consumerGroup: "G", ...q, queueOffset: 0, maxMsgNums: 64 });
    assert.deepEqual(
      pulled.messages.map((m) => new TextDecoder().decode(m.body)),
      [...warm, "held", "waits 1", "waits 2"],
      "the send refused on arrival wrote nothing",
    );
  });

  it("the SDK sends a shed request again by default: refused once, then stored once", async () => {
    const q = { topic: "ShedRetried", brokerName: "broker-a", queueId: 0 };
    const retrying = new NimbusApi({ endpoints: server.url, timeoutMs: 60_000 });
    const send = (body: string) => retrying.send({ ...q, messages: [{ body: utf8(body) }] });
    await send("warm");
    const refusedBefore = server.shedder.refused;
    const store = holdNextReservation(server.storage);
    try {
      const first = send("held");
      await until("the first send holds the store", store.holding);
      const second = send("shed, then sent again");
      await until("the second send waits its turn", () => server.shedder.waiting === 1);
      now += 201;
      store.release();
      assert.equal((await first).queueOffset, 1);
      assert.equal((await second).queueOffset, 2, "its second attempt is stored");
      assert.equal(server.shedder.refused, refusedBefore + 1, "its first attempt was shed");
    } finally {
      store.restore();
    }
    const pulled = await retrying.pull({ consumerGroup: "G", ...q, queueOffset: 0, maxMsgNums: 32 });
    await retrying.close();
    assert.deepEqual(
      pulled.messages.map((m) => new TextDecoder().decode(m.body)),
      ["warm", "held", "shed, then sent again"],
      "stored once",
    );
  });
});
