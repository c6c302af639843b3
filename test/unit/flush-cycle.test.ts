/**
 * @module The shared-object writer's flush cycle, by path: after an object that held merged groups, the next PUT
 * waits for those queues' next groups (one PUT for every queue's group), a queue takes its next group once the
 * senders it answered are back, nothing waits after single sends, a failed PUT fails every group in it, and the
 * bound lets the waiting writes go when a queue never comes back. The embedded store's object store, its puts
 * held by the test.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { FlushCycle } from "../../lib/broker/queue-log/flush-cycle.js";
import { SharedObjectWriter } from "../../lib/broker/queue-log/shared-objects.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import type { ObjectStore } from "../../lib/storage/object-store.js";
import { heldObjects as held, turns, until } from "../support/held-objects.js";

const bytes = (...b: number[]) => Uint8Array.from(b);

describe("shared-object writer: the flush cycle", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-cycle-"));
  const storage = createLocalStorage({ dataDir });
  after(async () => {
    await storage.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  /** A writer whose cycle holds for a minute at most: every step below is taken by the path, never the bound. */
  const writer = (store: ObjectStore, waitMs = 60_000) => new SharedObjectWriter(store, { cycleWaitMs: () => waitMs });

  it("after an object of merged groups, the next PUT waits for those queues: all groups ready go in ONE PUT", async () => {
    const { store, puts } = held(storage.objects);
    const w = writer(store);
    const lone = w.write(bytes(9), "x", 1);
    await turns(1);
    assert.equal(puts.length, 1, "nothing in flight: a write goes at once");
    const merged = [w.write(bytes(1), "a", 2), w.write(bytes(2), "b", 3)];
    puts[0]?.release();
    await lone;
    await turns(1);
    assert.equal(puts.length, 2, "a lone send's object holds nothing: the next PUT starts at once");
    const c = w.write(bytes(3), "c", 2);
    puts[1]?.release();
    await Promise.all(merged);
    await turns(3);
    assert.equal(puts.length, 2, "queue c waits: a and b (merged groups) are in their index write");
    const a = w.write(bytes(4, 4), "a", 2);
    await turns(3);
    assert.equal(puts.length, 2, "b has not handed its next group yet");
    const b = w.write(bytes(5), "b", 3);
    await until(() => puts.length === 3);
    assert.deepEqual([...(puts[2]?.body ?? [])], [3, 4, 4, 5], "c, a and b in one object, in arrival order");
    puts[2]?.release();
    const ranges = await Promise.all([c, a, b]);
    assert.deepEqual(
      ranges.map((r) => [r.objectKey === puts[2]?.key, r.byteOffset, r.byteLength]),
      [
        [true, 0, 1],
        [true, 1, 2],
        [true, 3, 1],
      ],
    );
    assert.deepEqual([...(await storage.objects.get(puts[2]?.key ?? ""))], [3, 4, 4, 5], "stored whole");
  });

  it("a queue that has no next group releases its place: the waiting writes go at once", async () => {
    const { store, puts } = held(storage.objects);
    const w = writer(store);
    const first = w.write(bytes(1), "a", 2);
    await turns(1);
    const b = w.write(bytes(2), "b", 1);
    puts[0]?.release();
    await first;
    await turns(3);
    assert.equal(puts.length, 1, "b waits for a");
    w.cycle.release("a");
    await until(() => puts.length === 2);
    assert.deepEqual([...(puts[1]?.body ?? [])], [2]);
    puts[1]?.release();
    await b;
  });

  it("single sends never wait: an object of unmerged groups holds nothing", async () => {
    const { store, puts } = held(storage.objects);
    const w = writer(store);
    const first = w.write(bytes(1), "a", 1);
    await turns(1);
    const b = w.write(bytes(2), "b", 1);
    puts[0]?.release();
    await first;
    await turns(1);
    assert.equal(puts.length, 2, "b's PUT started as the first ended");
    assert.equal(w.cycle.holding, false);
    puts[1]?.release();
    await b;
  });

  it("a failed PUT fails every group in it, and the cycle then holds for none of them", async () => {
    const { store, puts } = held(storage.objects);
    const w = writer(store);
    const first = w.write(bytes(1), "a", 2);
    await turns(1);
    const inIt = [w.write(bytes(2), "b", 2), w.write(bytes(3), "c", 4), w.write(bytes(4), "d", 1)];
    puts[0]?.release();
    await first;
    w.cycle.release("a");
    await until(() => puts.length === 2);
    puts[1]?.release(new Error("put failed"));
    const settled = await Promise.allSettled(inIt);
    assert.deepEqual(
      settled.map((s) => s.status),
      ["rejected", "rejected", "rejected"],
    );
    assert.equal(w.cycle.holding, false);
    const next = w.write(bytes(5), "e", 2);
    await turns(1);
    assert.equal(puts.length, 3, "the next write goes at once");
    puts[2]?.release();
    assert.equal((await next).byteOffset, 0);
  });

  it("bounded: a queue of the last object that never comes back holds the next PUT one bound, not more", async () => {
    const { store, puts } = held(storage.objects);
    const w = writer(store, 0);
    const first = w.write(bytes(1), "a", 2);
    await turns(1);
    puts[0]?.release();
    await first;
    assert.equal(w.cycle.holding, true);
    const b = w.write(bytes(2), "b", 1);
    await until(() => puts.length === 2);
    assert.equal(w.cycle.holding, false, "the bound passed: a is no longer waited for");
    puts[1]?.release();
    await b;
  });
});

describe("flush cycle: a queue's turn", () => {
  it("comes when as many sends arrived (on any queue) as the last object's merged groups answered", async () => {
    let settled = 0;
    const cycle = new FlushCycle(() => settled++);
    assert.equal(cycle.turn(), undefined, "no cycle on: the turn is now");
    cycle.stored(
      new Map([
        ["a", 2],
        ["b", 1],
      ]),
      60_000,
    );
    let turned = 0;
    const turn = cycle.turn()?.then(() => turned++);
    assert.ok(turn !== undefined, "the senders of a and b are awaited");
    cycle.arrived();
    cycle.arrived();
    await turns(2);
    assert.equal(turned, 0, "two of three senders back");
    cycle.arrived();
    await turn;
    assert.equal(turned, 1);
    assert.equal(cycle.holding, true, "a and b have not handed their groups");
    const told = settled;
    cycle.release("a");
    assert.equal(settled, told, "b still expected");
    cycle.release("b");
    assert.equal(cycle.holding, false);
    assert.equal(settled, told + 1, "told when the last queue released");
  });

  it("comes at once when no object of merged groups is being answered", async () => {
    const cycle = new FlushCycle(() => {});
    cycle.stored(new Map(), 60_000);
    assert.equal(cycle.turn(), undefined);
    assert.equal(cycle.holding, false);
  });
});
