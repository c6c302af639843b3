/**
 * @module POP consumption's contract, run unchanged on every storage adapter: receive/ack/redelivery/DLQ,
 * handles, FIFO, concurrent receivers (brokers on their own storage clients: no shared caches), long polling
 * by the write path's hint, and the state requests per received batch and per ack call (docs/cost.md).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Broker } from "../../lib/broker/broker.js";
import type { PoppedMessage } from "../../lib/broker/pop/index.js";
import { dlqTopic } from "../../lib/core/names.js";
import { diffCounts } from "../../lib/storage/request-counter.js";
import type { Storage } from "../../lib/storage/storage.js";
import { fakeClock } from "../support/server-fixture.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import { BROKER, popBroker, receive, sendTo, text, topicWith } from "./pop-helpers.js";
import { suiteFixture } from "./queue-log-helpers.js";

export function popContract(label: string, open: OpenFixture): void {
  describe(`POP contract: ${label}`, () => {
    const fixture = suiteFixture(open);
    const storage = (): Storage => fixture().storage;

    it("a new group starts at its first receive; receive + ack of a batch of 32 cost one state write each", async () => {
      const clock = fakeClock(Date.now());
      const broker = await popBroker(storage(), clock);
      const { topic, group } = await topicWith(broker, 1);
      await sendTo(broker, topic, 0, ["before-1", "before-2"]);
      clock.advance(2000); // past the 1 s clock-skew allowance (redeliveryGraceMs)
      assert.deepEqual((await receive(broker, group, topic)).messages, [], "what was stored before is not delivered");
      const texts = Array.from({ length: 32 }, (_, i) => `m${i}`);
      await sendTo(broker, topic, 0, texts, { bytes: 1024 });
      const c0 = storage().counter.snapshot();
      const got = await receive(broker, group, topic, 32);
      const c1 = storage().counter.snapshot();
      const acked = await broker.pop.ack(
        group,
        topic,
        got.messages.map((m) => m.receiptHandle),
      );
      const c2 = storage().counter.snapshot();
      assert.deepEqual(got.messages.map(text), texts);
      assert.ok(got.messages.every((m) => m.deliveryAttempt === 1 && m.queueId === 0));
      assert.ok(acked.entries.every((e) => e.code === "OK"));
      const rx = diffCounts(c1, c0);
      const ax = diffCounts(c2, c1);
      // Receive: the queue log's read (newest item + the batch's object) and one checkpoint put.
      assert.deepEqual(pick(rx), { tableReads: 1, tableWrites: 1, writeUnits: 1, objectGets: 1, objectPuts: 0 });
      // Ack: the checkpoint's query and one ack item.
      assert.deepEqual(pick(ax), { tableReads: 1, tableWrites: 1, writeUnits: 1, objectGets: 0, objectPuts: 0 });
      assert.deepEqual((await receive(broker, group, topic)).messages, [], "acked messages do not come back");
    });

    it("a group's start holds for every queue of the topic on every broker at once, and for queues added later", async () => {
      const clock = fakeClock(Date.now());
      const brokers = ["broker-a", "broker-b"];
      const broker = await popBroker(storage(), clock, {}, brokers);
      const { topic, group } = await topicWith(broker, 2);
      await sendTo(broker, topic, 0, ["old-a"]);
      await sendTo(broker, topic, 1, ["old-b"], { brokerName: "broker-b" });
      clock.advance(2000);
      // The first receive reads broker-a only (as RocketMQ 5's clients ask one broker at a time).
      assert.deepEqual((await receive(broker, group, topic, 32, { brokerName: "broker-a" })).messages, []);
      clock.advance(10);
      await sendTo(broker, topic, 1, ["new-b"], { brokerName: "broker-b" });
      await sendTo(broker, topic, 1, ["new-a"]);
      // Another process, nothing cached: broker-b's queues were never read by the group, and start at its start.
      const other = await popBroker(await fixture().reopen(), clock, {}, brokers);
      const fromB = await receive(other, group, topic, 32, { brokerName: "broker-b" });
      assert.deepEqual(fromB.messages.map(text), ["new-b"]);
      // A queue added to the topic after the group started delivers from its first message.
      await broker.topics.upsert(topic, { readQueueNums: 3, writeQueueNums: 3, brokerNames: ["broker-b"] });
      clock.advance(4000); // the other process's route cache (3 s) sees the new queue
      await sendTo(broker, topic, 2, ["added-b"], { brokerName: "broker-b" });
      const added = await receive(other, group, topic, 32, { brokerName: "broker-b" });
      assert.deepEqual(added.messages.map(text), ["added-b"]);
      assert.deepEqual((await receive(broker, group, topic)).messages.map(text), ["new-a"]);
      // A consumer's start fixes it too, before any receive: what is sent after it is delivered.
      const started = `${group}_started`;
      clock.advance(2000);
      const startedAt = await broker.pop.start(started, topic);
      assert.equal(await other.pop.start(started, topic), startedAt, "one start per group, whoever asks");
      clock.advance(10);
      await sendTo(broker, topic, 0, ["after-start"]);
      assert.deepEqual((await receive(other, started, topic)).messages.map(text), ["after-start"]);
    });

    it("concurrent receivers of one group never hold the same message and together get everything", async () => {
      const brokers = [await popBroker(storage())];
      for (let i = 0; i < 2; i++) brokers.push(await popBroker(await fixture().reopen()));
      const first = brokers[0] as Broker;
      const { topic, group } = await topicWith(first, 4);
      await Promise.all(brokers.map((b) => receive(b, group, topic))); // the group's start
      const all: string[] = [];
      for (let q = 0; q < 4; q++) {
        const texts = Array.from({ length: 25 }, (_, i) => `q${q}-${i}`);
        all.push(...texts);
        await sendTo(first, topic, q, texts);
      }
      const held = new Set<string>();
      const got: string[] = [];
      await Promise.all(
        brokers.map(async (b) => {
          for (let empty = 0; empty < 3; ) {
            const { messages } = await receive(b, group, topic, 8);
            if (messages.length === 0) empty++;
            for (const m of messages) {
              assert.ok(!held.has(text(m)), `${text(m)} handed out twice`);
              held.add(text(m));
              got.push(text(m));
            }
            const ack = await b.pop
              .ack(
                group,
                topic,
                messages.map((m) => m.receiptHandle),
              )
              .catch(() => undefined);
            if (messages.length > 0) assert.ok(ack?.entries.every((e) => e.code === "OK"));
          }
        }),
      );
      assert.deepEqual([...got].sort(), [...all].sort());
    });

    it("an unacked message returns after its invisible time with deliveryAttempt 2, then goes to %DLQ%", async () => {
      const clock = fakeClock(Date.now());
      const broker = await popBroker(storage(), clock, { maxDeliveryAttempts: 3 });
      const { topic, group } = await topicWith(broker, 1);
      await receive(broker, group, topic);
      await sendTo(broker, topic, 0, ["late"]);
      const first = (await receive(broker, group, topic, 1, { invisibleMs: 5000 })).messages;
      assert.equal(first[0]?.deliveryAttempt, 1);
      assert.deepEqual((await receive(broker, group, topic)).messages, [], "invisible");
      clock.advance(5000 + 1000); // past the invisible time and the redelivery grace
      const second = (await receive(broker, group, topic, 1, { invisibleMs: 5000 })).messages;
      assert.deepEqual(
        second.map((m) => [text(m), m.deliveryAttempt, m.reconsumeTimes]),
        [["late", 2, 1]],
      );
      const stale = await broker.pop.ack(group, topic, [first[0]?.receiptHandle ?? ""]);
      assert.equal(stale.entries[0]?.code, "INVALID_RECEIPT_HANDLE", "the first delivery's handle is stale");
      clock.advance(6000);
      const third = (await receive(broker, group, topic, 1, { invisibleMs: 5000 })).messages;
      assert.equal(third[0]?.deliveryAttempt, 3);
      clock.advance(6000);
      assert.deepEqual((await receive(broker, group, topic)).messages, [], "past max attempts: not delivered");
      const dlq = await broker.queueLog.read({ topic: dlqTopic(group), brokerName: BROKER, queueId: 0 }, 0);
      assert.deepEqual(
        dlq.messages.map((m) => [new TextDecoder().decode(m.body), m.reconsumeTimes, m.properties.RETRY_TOPIC]),
        [["late", 2, topic]],
      );
      clock.advance(60_000);
      assert.deepEqual((await receive(broker, group, topic)).messages, [], "a dead letter never comes back");
    });

    it("a forged, stale or acked handle is refused and changes nothing; changeInvisibleDuration kills the old handle", async () => {
      const clock = fakeClock(Date.now());
      const broker = await popBroker(storage(), clock);
      const { topic, group } = await topicWith(broker, 1);
      await receive(broker, group, topic);
      await sendTo(broker, topic, 0, ["x", "y"]);
      const [x, y] = (await receive(broker, group, topic, 2, { invisibleMs: 5000 })).messages as PoppedMessage[];
      const forged = forge(x?.receiptHandle ?? "");
      const c0 = storage().counter.snapshot();
      const refused = await broker.pop.ack(group, topic, [forged, "not-a-handle", "%%%"]);
      assert.ok(refused.entries.every((e) => e.code === "INVALID_RECEIPT_HANDLE"));
      assert.equal(diffCounts(storage().counter.snapshot(), c0).tableWrites, 0, "a refused ack writes nothing");
      await assert.rejects(broker.pop.changeInvisibleDuration(group, topic, forged, 5000), {
        code: "INVALID_RECEIPT_HANDLE",
      });
      const other = await broker.pop.ack(`${group}x`, topic, [x?.receiptHandle ?? ""]);
      assert.equal(other.entries[0]?.code, "INVALID_RECEIPT_HANDLE", "another group's handle");
      const changed = await broker.pop.changeInvisibleDuration(group, topic, x?.receiptHandle ?? "", 60_000);
      assert.notEqual(changed.receiptHandle, x?.receiptHandle);
      const old = await broker.pop.ack(group, topic, [x?.receiptHandle ?? ""]);
      assert.equal(old.entries[0]?.code, "INVALID_RECEIPT_HANDLE", "the handle before the change is dead");
      clock.advance(10_000); // past y's invisible time, not x's new one
      const back = (await receive(broker, group, topic)).messages;
      assert.deepEqual(
        back.map((m) => [text(m), m.deliveryAttempt]),
        [["y", 2]],
      );
      const ok = await broker.pop.ack(group, topic, [changed.receiptHandle, back[0]?.receiptHandle ?? ""]);
      assert.deepEqual(
        ok.entries.map((e) => e.code),
        ["OK", "OK"],
      );
      const again = await broker.pop.ack(group, topic, [changed.receiptHandle]);
      assert.equal(again.entries[0]?.code, "INVALID_RECEIPT_HANDLE", "an acked handle");
      assert.equal(y?.deliveryAttempt, 1);
      clock.advance(120_000);
      await broker.registerBrokers(); // the broker's liveness, on the test's clock
      assert.deepEqual((await receive(broker, group, topic)).messages, []);
    });

    it("acks many handles of several queues in one call: one ack item per checkpoint", async () => {
      const broker = await popBroker(storage());
      const { topic, group } = await topicWith(broker, 2);
      await receive(broker, group, topic);
      await sendTo(broker, topic, 0, ["a0", "a1", "a2"]);
      await sendTo(broker, topic, 1, ["b0", "b1"]);
      const got = (await receive(broker, group, topic, 32)).messages;
      assert.equal(got.length, 5);
      const c0 = storage().counter.snapshot();
      const res = await broker.pop.ack(
        group,
        topic,
        got.map((m) => m.receiptHandle),
      );
      assert.deepEqual(
        res.entries.map((e) => e.code),
        ["OK", "OK", "OK", "OK", "OK"],
      );
      assert.equal(diffCounts(storage().counter.snapshot(), c0).tableWrites, 2);
    });

    it("acks one handle per call, in flight together (as RocketMQ 5's clients ack a batch): one read, one ack item", async () => {
      const broker = await popBroker(storage());
      const { topic, group } = await topicWith(broker, 1);
      await receive(broker, group, topic);
      const texts = Array.from({ length: 32 }, (_, i) => `c${i}`);
      await sendTo(broker, topic, 0, texts);
      const got = (await receive(broker, group, topic, 32)).messages;
      assert.equal(got.length, 32);
      const first = got[0]?.receiptHandle ?? "";
      await broker.pop.ack(group, topic, [first]);
      const c0 = storage().counter.snapshot();
      const answers = await Promise.all([
        ...got.map((m) => broker.pop.ack(group, topic, [m.receiptHandle])),
        broker.pop.ack(group, topic, ["not-a-handle"]),
      ]);
      const codes = answers.map((a) => a.entries.map((e) => e.code).join());
      assert.deepEqual(codes, ["INVALID_RECEIPT_HANDLE", ...Array(31).fill("OK"), "INVALID_RECEIPT_HANDLE"]);
      const counts = diffCounts(storage().counter.snapshot(), c0);
      assert.deepEqual({ reads: counts.tableReads, writes: counts.tableWrites }, { reads: 1, writes: 1 });
      assert.deepEqual((await receive(broker, group, topic)).messages, [], "every acked message is done");
    });

    it("FIFO: one message of each message group in flight, in order", async () => {
      const broker = await popBroker(storage(), fakeClock(Date.now()), { fifoGroups: [] });
      const { topic, group } = await topicWith(broker, 1);
      const fifo = await popBroker(storage(), fakeClock(Date.now()), { fifoGroups: [group] });
      await receive(fifo, group, topic);
      await sendTo(broker, topic, 0, ["A1", "B1", "A2", "B2", "A3"], { groups: ["A", "B", "A", "B", "A"] });
      const r1 = (await receive(fifo, group, topic)).messages;
      assert.deepEqual(r1.map(text), ["A1", "B1"]);
      assert.deepEqual((await receive(fifo, group, topic)).messages, [], "A2 waits while A1 is in flight");
      await fifo.pop.ack(
        group,
        topic,
        r1.map((m) => m.receiptHandle),
      );
      const r2 = (await receive(fifo, group, topic)).messages;
      assert.deepEqual(r2.map(text), ["A2", "B2"]);
      await fifo.pop.ack(
        group,
        topic,
        r2.map((m) => m.receiptHandle),
      );
      assert.deepEqual((await receive(fifo, group, topic)).messages.map(text), ["A3"]);
    });

    it("SQL92 filters: a message without the property never matches; filtered-out offsets are done for the group", async () => {
      const broker = await popBroker(storage());
      const { topic, group } = await topicWith(broker, 1);
      await receive(broker, group, topic);
      await broker.sender.send({
        topic,
        brokerName: BROKER,
        queueId: 0,
        messages: [
          { body: new TextEncoder().encode("big"), properties: { amount: "250" } },
          { body: new TextEncoder().encode("none"), properties: {} },
          { body: new TextEncoder().encode("small"), properties: { amount: "5" } },
        ],
      });
      const sql = { type: "SQL92" as const, expression: "amount > 100" };
      const base = { group, topic, maxMessages: 32, invisibleMs: 30_000, longPollMs: 0 };
      const got = await broker.pop.receive({ ...base, filter: sql });
      assert.deepEqual(got.messages.map(text), ["big"]);
      await assert.rejects(broker.pop.receive({ ...base, filter: { type: "SQL92", expression: "amount >" } }), {
        code: "PARAMETER_ILLEGAL",
      });
    });

    it("long polling wakes on a send through the write path's hint", async () => {
      const broker = await popBroker(storage());
      const { topic, group } = await topicWith(broker, 2);
      await receive(broker, group, topic);
      const hints = broker.pop.wakeCounts.hint ?? 0;
      const waiting = receive(broker, group, topic, 4, { longPollMs: 20_000 });
      while (broker.pop.waitingReceives === 0) await new Promise((r) => setImmediate(r));
      await sendTo(broker, topic, 1, ["wake"]);
      const got = await waiting;
      assert.deepEqual(got.messages.map(text), ["wake"]);
      assert.equal(broker.pop.wakeCounts.hint, hints + 1, "woken by the hint");
    });

    it("a woken receive takes from the queue the hint named and answers without reading the others", async () => {
      // The same send and woken receive on a topic of 1 queue and on one of 8: the same storage requests, so
      // the woken receive of the 8-queue topic read the hinted queue alone (the others stay unread until a
      // receive finds nothing there).
      const requests = async (queues: number) => {
        const broker = await popBroker(storage(), fakeClock(Date.now()));
        const { topic, group } = await topicWith(broker, queues);
        await receive(broker, group, topic);
        const waiting = receive(broker, group, topic, 4, { longPollMs: 20_000 });
        while (broker.pop.waitingReceives === 0) await new Promise((r) => setImmediate(r));
        const before = storage().counter.snapshot();
        await sendTo(broker, topic, queues - 1, ["wake"]);
        const got = await waiting;
        assert.deepEqual(
          got.messages.map((m) => [text(m), m.queueId]),
          [["wake", queues - 1]],
        );
        return pick(diffCounts(storage().counter.snapshot(), before));
      };
      assert.deepEqual(await requests(8), await requests(1));
    });
  });
}

function pick(c: ReturnType<typeof diffCounts>) {
  const { tableReads, tableWrites, writeUnits, objectGets, objectPuts } = c;
  return { tableReads, tableWrites, writeUnits, objectGets, objectPuts };
}

/** The same handle with another nonce: what a guess of a message's coordinates looks like. */
function forge(handle: string): string {
  const fields = JSON.parse(Buffer.from(handle, "base64url").toString()) as unknown[];
  fields[6] = "0123456789abcdef";
  return Buffer.from(JSON.stringify(fields)).toString("base64url");
}
