/**
 * @module Load shedding, asserted by the path a request takes, never by elapsed time: a store held still and
 * a controllable clock make a send wait past the bound; it is answered SYSTEM_BUSY before its route runs
 * (nothing of it is stored), while health and admin reads are answered with the line full; the shedder's own
 * rules (the line's bound, a request that arrived too late, the next waiter admitted in order).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { QUEUE_INDEX_TABLE } from "../../lib/broker/queue-log/queue-index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";
import { LoadShedder } from "../../lib/http/load-shedder.js";
import type { Table } from "../../lib/storage/table.js";

const never = () => () => undefined;
const utf8 = (s: string) => new TextEncoder().encode(s);
const until = async (what: string, ok: () => boolean) => {
  for (let i = 0; !ok(); i++) {
    assert.ok(i < 100_000, `never: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
};

describe("load shedding: the shedder's rules", () => {
  it("admits in order, refuses a waiter past the bound when its turn comes, and a full line at once", async () => {
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
    await assert.rejects(shedder.enter(now - 201), { code: ErrorCode.SYSTEM_BUSY }, "arrived too long ago");
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
      loadShedding: { maxInFlight: 1, maxWaitMs: 200, now: () => now, schedule: never },
    });
    api = new NimbusApi({ endpoints: server.url, timeoutMs: 60_000 });
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
    // The store holds the next reservation still: the send in the route cannot finish.
    const index = server.storage.table(QUEUE_INDEX_TABLE) as Table & { add: Table["add"] };
    const add = index.add.bind(index);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding = false;
    index.add = async (...args) => {
      holding = true;
      await held;
      return add(...args);
    };
    try {
      const first = send("held");
      await until("the first send holds the store", () => holding);
      const second = send("shed").catch((err: unknown) => err);
      await until("the second send waits its turn", () => server.shedder.waiting === 1);
      assert.equal((await api.health()).status, "ok", "health is answered while the line is full");
      assert.ok((await api.topicStatus(q.topic)).length > 0, "an admin read too");
      now += 201;
      release();
      assert.equal((await first).queueOffset, 1);
      const refused = await second;
      assert.ok(isNimbusError(refused, ErrorCode.SYSTEM_BUSY), `got ${String(refused)}`);
      assert.match((refused as Error).message, /waited 201 ms/);
    } finally {
      release();
      delete (index as { add?: unknown }).add;
    }
    const pulled = await api.pull({ consumerGroup: "G", ...q, queueOffset: 0, maxMsgNums: 32 });
    assert.deepEqual(
      pulled.messages.map((m) => new TextDecoder().decode(m.body)),
      ["warm", "held"],
      "the shed send wrote nothing",
    );
    assert.equal(server.shedder.refused, 1);
  });
});
