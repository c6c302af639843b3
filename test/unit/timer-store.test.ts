/**
 * @module The timer store on a fake clock, on both storages (the embedded store, and the AWS adapters on
 * dynalite + s3rver): a delayed message is not in its queue a millisecond before it is due and is after;
 * a sweep reads only the due buckets (one query for the due list, then per bucket); two brokers sweeping
 * the same store at once move each message once (the bucket lease); a mover that died is taken over after
 * its lease; an item written while its bucket's entry is deleted is not lost; the scheduled run stays up
 * for buckets falling due in its window; a retry's delay is level 3 + reconsumeTimes, clamped to the last.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Broker } from "../../lib/broker/broker.js";
import { TIMERS_TABLE } from "../../lib/broker/store/tables.js";
import { LEASE_MS, TimerStore } from "../../lib/broker/timers/timer-store.js";
import { createBroker } from "../../lib/config/create-broker.js";
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { MessageConst } from "../../lib/core/message.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import { retryTopic } from "../../lib/core/names.js";
import { openStorage } from "../../lib/dev/local-server.js";
import { diffCounts } from "../../lib/storage/request-counter.js";
import type { Storage } from "../../lib/storage/storage.js";
import { type FakeClock, fakeClock, MODE_LABEL, startTestServer, type TestServer } from "../support/server-fixture.js";

const body = (s: string) => new TextEncoder().encode(s);
/**
 * The brokers of these tests: not the server's own (broker-a, broker-b), which it registers on the real
 * clock every 30 s; ours are registered on the fake clock, years ahead.
 */
const BROKER = "timer-broker";

for (const mode of ["local", "aws"] as const) {
  describe(`timer store (${MODE_LABEL[mode]})`, () => {
    let server: TestServer;
    let storage: Storage;
    let clock: FakeClock;
    const brokers: Broker[] = [];

    /** A broker of its own (as another Lambda container) on the shared store and clock. */
    async function broker(): Promise<Broker> {
      const b = createBroker(
        storage,
        parseNimbusConfig({ messageDelayLevel: "1s 2s 3s", brokers: [{ brokerName: BROKER }] }),
        {
          apiUrl: "http://127.0.0.1:9876",
          newMessageId,
          now: clock,
        },
      );
      brokers.push(b);
      // Registered at the fake clock's time (a broker expires 120 s after its registration).
      await b.registerBrokers();
      return b;
    }

    before(async () => {
      // The server only provides the store (its own timers run on the real clock, far from the fake one).
      server = await startTestServer(mode);
      storage = await openStorage(server.storage);
      clock = fakeClock(Date.UTC(2031, 0, 1));
      await broker();
    });
    after(async () => {
      await storage.close();
      await server.close();
    });

    const depth = async (b: Broker, topic: string) =>
      (await b.topics.status(topic)).reduce((n, q) => n + q.maxOffset, 0);

    it("a delayed message is stored in its queue only once due", async () => {
      const b = await broker();
      const topic = "TimerVisible";
      const sent = await b.sender.send({
        topic,
        brokerName: BROKER,
        queueId: 0,
        messages: [{ body: body("x"), properties: { [MessageConst.TIMER_DELIVER_MS]: String(clock() + 5000) } }],
      });
      const due = sent.deliverTimeMs?.[0];
      assert.equal(due, clock() + 5000);
      clock.set((due as number) - 1);
      assert.equal((await b.timers.sweep()).moved, 0);
      assert.equal(await depth(b, topic), 0, "not in the queue before it is due");
      clock.set(due as number);
      assert.equal((await b.timers.sweep()).moved, 1);
      assert.equal(await depth(b, topic), 1, "in the queue once due");
      const page = await b.queueLog.read({ topic, brokerName: BROKER, queueId: 0 }, 0, {});
      assert.equal(page.messages[0]?.properties[MessageConst.UNIQ_KEY], sent.msgIds[0]);
      assert.deepEqual(await b.timers.pending(), [], "nothing left waiting");
    });

    it("a sweep with nothing due is one query; a due bucket a few more, whatever else waits", async () => {
      const b = await broker();
      const topic = "TimerQueries";
      // Many buckets waiting in the future must not be read by a sweep.
      for (let i = 1; i <= 20; i++) {
        await b.sender.send({
          topic,
          brokerName: BROKER,
          queueId: 0,
          messages: [{ body: body(`f${i}`), properties: { [MessageConst.TIMER_DELAY_SEC]: String(60 + i) } }],
        });
      }
      const before = storage.counter.snapshot();
      await b.timers.sweep();
      const idle = diffCounts(storage.counter.snapshot(), before);
      assert.equal(idle.tableReads + idle.tableWrites, 1, `an idle sweep is one query (${JSON.stringify(idle)})`);
      clock.advance(61_000);
      const due = storage.counter.snapshot();
      const r = await b.timers.sweep();
      assert.equal(r.moved, 1);
      assert.equal(r.buckets, 1, "only the due bucket is read");
      clock.advance(60_000);
      assert.equal((await b.timers.sweep()).moved, 19);
      assert.ok(diffCounts(storage.counter.snapshot(), due).tableReads > 1);
    });

    it("two brokers sweeping at once move each of 300 messages once", async () => {
      const [b1, b2] = [await broker(), await broker()];
      const topic = "TimerRace";
      const at = clock() + 2000;
      for (let i = 0; i < 3; i++) {
        await b1.sender.send({
          topic,
          brokerName: BROKER,
          queueId: 0,
          messages: Array.from({ length: 100 }, (_, j) => ({
            body: body(`r${i}-${j}`),
            properties: { [MessageConst.TIMER_DELIVER_MS]: String(at + j) },
          })),
        });
      }
      clock.set(at + 1000);
      const reports = await Promise.all([b1.timers.sweep(), b2.timers.sweep(), b1.timers.sweep(), b2.timers.sweep()]);
      let rest = await b2.timers.sweep();
      while (rest.moved > 0) rest = await b2.timers.sweep();
      const page = await b1.queueLog.read({ topic, brokerName: BROKER, queueId: 0 }, 0, { maxMessages: 1024 });
      const ids = page.messages.map((m) => m.properties[MessageConst.UNIQ_KEY]);
      assert.equal(ids.length, 300, `300 appended (${JSON.stringify(reports)})`);
      assert.equal(new Set(ids).size, 300, "none twice");
    });

    it("a bucket whose mover died is taken over after the lease", async () => {
      const b = await broker();
      const topic = "TimerTakeover";
      const sent = await b.sender.send({
        topic,
        brokerName: BROKER,
        queueId: 0,
        messages: [{ body: body("t"), properties: { [MessageConst.TIMER_DELAY_MS]: "1500" } }],
      });
      const due = sent.deliverTimeMs?.[0] as number;
      const second = Math.floor(due / 1000);
      // A mover claimed the bucket and died before moving anything.
      await storage
        .table(TIMERS_TABLE)
        .put({ pk: `timer:${second}`, sk: "lease#000000001", claimedAt: due, released: false, expiresAt: 0 });
      clock.set(due + 10);
      const held = await b.timers.sweep();
      assert.equal(held.busy, 1);
      assert.equal(await depth(b, topic), 0);
      clock.set(due + LEASE_MS + 10);
      assert.equal((await b.timers.sweep()).moved, 1);
      assert.equal(await depth(b, topic), 1);
    });

    it("the scheduled run stays up for buckets falling due in its window", async () => {
      const b = await broker();
      const topic = "TimerScheduled";
      const start = clock();
      for (const delay of [3000, 20_000]) {
        await b.sender.send({
          topic,
          brokerName: BROKER,
          queueId: 0,
          messages: [
            { body: body(`d${delay}`), properties: { [MessageConst.TIMER_DELIVER_MS]: String(start + delay) } },
          ],
        });
      }
      const sleeps: number[] = [];
      // Sleeping advances the fake clock: the run's waits are what it would sleep.
      const run = new TimerStore(storage.table(TIMERS_TABLE), b.queueLog, {
        retentionMs: 3600_000,
        sweepIntervalMs: 500,
        now: clock,
        sleep: async (ms: number) => {
          sleeps.push(ms);
          clock.advance(ms);
        },
      });
      const report = await run.runScheduled(10_000);
      assert.equal(report.moved, 1, "the message due within the window moved; the later one waits");
      const bucketStart = Math.floor((start + 3000) / 1000) * 1000;
      assert.equal(sleeps[0], bucketStart - start, `slept until the bucket's second first: ${sleeps.join(",")}`);
      assert.ok(
        sleeps.slice(1).every((ms) => ms === 250),
        `then polled the bucket until its message was due: ${sleeps.join(",")}`,
      );
      assert.equal(await depth(b, topic), 1);
    });

    it("send-back: retry due after level 3 + reconsumeTimes (clamped to the last level), then the DLQ", async () => {
      const b = await broker();
      const topic = "TimerRetry";
      const group = "gTimerRetry";
      await b.sender.send({ topic, brokerName: BROKER, queueId: 0, messages: [{ body: body("f") }] });
      const first = await b.sendBack.sendBack({
        consumerGroup: group,
        topic,
        brokerName: BROKER,
        queueId: 0,
        queueOffset: 0,
        maxReconsumeTimes: 2,
      });
      assert.equal(first.result, "RETRY");
      assert.equal(first.deliverTimeMs, clock() + 3000, "level 3 of 1s 2s 3s");
      clock.advance(3000);
      await b.timers.sweep();
      const retry = { topic: retryTopic(group), brokerName: BROKER, queueId: 0 };
      const again = await b.sendBack.sendBack({ consumerGroup: group, ...retry, queueOffset: 0, maxReconsumeTimes: 2 });
      assert.equal(again.deliverTimeMs, clock() + 3000, "level 4 clamped to the last level (3 s)");
      assert.equal(again.reconsumeTimes, 2);
      clock.advance(3000);
      await b.timers.sweep();
      const dead = await b.sendBack.sendBack({ consumerGroup: group, ...retry, queueOffset: 1, maxReconsumeTimes: 2 });
      assert.equal(dead.result, "DLQ");
      assert.equal(dead.queueOffset, 0);
    });
  });
}
