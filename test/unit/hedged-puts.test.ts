/**
 * @module Hedged object PUTs, by path: a PUT still out after the recent PUTs' 80th percentile gets a twin (the
 * same bytes under the same key) on a store that asks for it, the first success answers, a failure waits for the
 * twin, the token bucket holds twins to the budget, the delay is the recent PUTs' 80th percentile, and a cold
 * process, a local store or an S3 endpoint other than AWS's (an emulator may rewrite an object in place) sends none. The embedded
 * store's object store, its puts held by the test (the store claims S3's per-request latency where a test says).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { S3Client } from "@aws-sdk/client-s3";
import { HedgedPuts } from "../../lib/broker/queue-log/hedged-puts.js";
import { createAwsStorage, S3ObjectStore } from "../../lib/storage/aws/index.js";
import { RequestCounter } from "../../lib/storage/request-counter.js";
import type { Storage } from "../../lib/storage/storage.js";
import { type HeldPut, heldObjects, turns, until } from "../support/held-objects.js";
import { openLocalFixture } from "../support/local-fixture.js";
import type { StorageFixture } from "../support/storage-fixture.js";

const body = Uint8Array.from([1, 2, 3]);

describe("hedged object PUTs", () => {
  let fixture: StorageFixture;
  let storage: Storage;
  before(async () => {
    fixture = await openLocalFixture();
    storage = fixture.storage;
  });
  after(() => fixture.cleanup());
  let n = 0;
  const key = () => `batches/hedge/${++n}`;

  /** A writer on held puts, warmed with 16 PUTs answered as they come (the delay is then their 80th percentile). */
  async function warmed(hedgePuts: boolean, budget?: number): Promise<{ hedged: HedgedPuts; puts: HeldPut[] }> {
    const { store, puts } = heldObjects(storage.objects, hedgePuts);
    const hedged = new HedgedPuts(store, { budget });
    for (let i = 0; i < 16; i++) {
      assert.equal(hedged.delayMs, undefined, "a cold writer has no delay: it sends no twin");
      const done = hedged.put(key(), body);
      await until(() => puts.length === i + 1);
      puts[i]?.release();
      await done;
    }
    assert.notEqual(hedged.delayMs, undefined, "16 timed PUTs give the delay");
    return { hedged, puts };
  }

  /** Lets every timer due by `ms` after the hedge's run first (timers of shorter delay set earlier fire first). */
  const pastTheDelay = (hedged: HedgedPuts) =>
    new Promise<void>((resolve) => setTimeout(resolve, 3 * (hedged.delayMs ?? 0) + 20));

  it("a PUT still out after the delay gets a twin of the same key and bytes; the first to succeed answers", async () => {
    const { hedged, puts } = await warmed(true);
    const k = key();
    let answered = false;
    const done = hedged.put(k, body).then(() => {
      answered = true;
    });
    await until(() => puts.length === 18);
    const [first, twin] = [puts[16], puts[17]];
    assert.equal(twin?.key, k);
    assert.deepEqual([...(twin?.body ?? [])], [...body]);
    assert.equal(hedged.hedges, 1);
    twin?.release();
    await until(() => answered);
    assert.deepEqual([...(await storage.objects.get(k))], [...body], "the twin stored the object");
    let settled = false;
    const allAnswered = hedged.settled().then(() => {
      settled = true;
    });
    await turns(5);
    assert.equal(settled, false, "the first PUT is still out: settled() waits for it");
    first?.release();
    await allAnswered;
    await done;
    assert.equal(hedged.writes, 17, "17 objects written: the twin is a second PUT of the same one");
  });

  it("a failed PUT waits for its twin; both failing fails with the first error; failing before the delay fails at once", async () => {
    const { hedged, puts } = await warmed(true);
    const one = hedged.put(key(), body);
    await until(() => puts.length === 18);
    let settled = false;
    void one.then(
      () => (settled = true),
      () => (settled = true),
    );
    puts[16]?.release(new Error("first PUT failed"));
    await turns(5);
    assert.equal(settled, false, "the twin is still out: its answer is the answer");
    puts[17]?.release();
    await one;

    const both = hedged.put(key(), body);
    await until(() => puts.length === 20);
    puts[18]?.release(new Error("first"));
    puts[19]?.release(new Error("second"));
    await assert.rejects(both, /first/);

    const early = hedged.put(key(), body);
    await until(() => puts.length === 21);
    puts[20]?.release(new Error("refused at once"));
    await assert.rejects(early, /refused at once/);
    await pastTheDelay(hedged);
    assert.equal(puts.length, 21, "no twin after the PUT failed");
    assert.equal(hedged.hedges, 2);
  });

  it("the token bucket holds twins to the budget: 12 slow PUTs at once after 16 get 4 + 12 × 0.25 = 7 twins", async () => {
    const { hedged, puts } = await warmed(true, 0.25);
    const all = Array.from({ length: 12 }, () => hedged.put(key(), body));
    await until(() => puts.length === 16 + 12 + 7);
    await pastTheDelay(hedged);
    assert.equal(puts.length, 35, "no more than the tokens allow");
    assert.equal(hedged.hedges, 7);
    for (const p of puts.slice(16)) p.release();
    await Promise.all(all);
  });

  it("no twin on a store that does not ask for one (a local disk), nor with a budget of 0", async () => {
    for (const [hedgePuts, budget] of [
      [false, undefined],
      [true, 0],
    ] as const) {
      const { hedged, puts } = await warmed(hedgePuts, budget);
      const done = hedged.put(key(), body);
      await until(() => puts.length === 17);
      await pastTheDelay(hedged);
      assert.equal(puts.length, 17, `one PUT only (hedgePuts ${hedgePuts}, budget ${budget})`);
      assert.equal(hedged.hedges, 0);
      puts[16]?.release();
      await done;
    }
  });

  it("the delay is the 80th percentile of the PUTs timed (16 PUTs of 1 to 16 ms: the 13th, 13 ms)", async () => {
    const { store, puts } = heldObjects(storage.objects, true);
    let clock = 0;
    const hedged = new HedgedPuts(store, { now: () => clock });
    for (const ms of [7, 3, 16, 1, 12, 5, 9, 14, 2, 11, 6, 15, 4, 10, 8, 13]) {
      clock = 0;
      const done = hedged.put(key(), body);
      await until(() => puts.length > 0 && puts[puts.length - 1]?.body === body);
      clock = ms;
      puts.pop()?.release();
      await done;
    }
    assert.equal(hedged.delayMs, 13);
  });

  it("S3's adapter asks for twins; the embedded store's does not", () => {
    const s3 = new S3ObjectStore(new S3Client({ region: "us-east-1" }), "bucket", new RequestCounter());
    assert.equal(s3.hedgePuts, true);
    assert.equal(storage.objects.hedgePuts, undefined);
    const aws = { region: "us-east-1", bucket: "b", tablePrefix: "t-" };
    assert.equal(createAwsStorage(aws).objects.hedgePuts, true, "AWS's own S3 endpoint");
    const emulated = { ...aws, s3Endpoint: "http://127.0.0.1:1" };
    assert.equal(createAwsStorage(emulated).objects.hedgePuts, false, "another endpoint may rewrite in place");
    assert.equal(createAwsStorage({ ...emulated, hedgeObjectPuts: true }).objects.hedgePuts, true, "asked for");
  });
});
