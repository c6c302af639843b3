/**
 * @module Subscription groups' contract, run unchanged on every storage adapter (groups.test.ts): a group's
 * config honoured by the broker — consume disabled refuses pulls and POP receives with RocketMQ's answer,
 * retryMaxTimes sends to %DLQ% on send-back and POP, consumeMessageOrderly makes POP FIFO, broadcast disallowed
 * refuses a BROADCASTING heartbeat — the list of every group with its lag, and the bounded lag ring.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Broker } from "../../lib/broker/broker.js";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import { dlqTopic, retryTopic } from "../../lib/core/names.js";
import type { Storage } from "../../lib/storage/storage.js";
import { fakeClock } from "../support/server-fixture.js";
import type { OpenFixture, StorageFixture } from "../support/storage-fixture.js";
import { BROKER, freshNames, popBroker, receive, sendTo, text, topicWith } from "./pop-helpers.js";

const refusedWith = (code: string, pattern: RegExp) => (err: unknown) =>
  isNimbusError(err, code as ErrorCode) && pattern.test((err as Error).message);

export function groupsContract(label: string, open: OpenFixture): void {
  describe(`subscription groups contract: ${label}`, () => {
    let fx: StorageFixture;
    let storage: Storage;
    before(async () => {
      fx = await open();
      storage = fx.storage;
    });
    after(async () => fx.cleanup());

    const pull = (broker: Broker, group: string, topic: string) =>
      broker.puller.pull({
        consumerGroup: group,
        topic,
        brokerName: BROKER,
        queueId: 0,
        queueOffset: 0,
        maxMsgNums: 32,
      });

    it("consumeEnable false: pulls and POP receives get NO_PERMISSION; true again: they read", async () => {
      const broker = await popBroker(storage);
      const { topic, group } = await topicWith(broker, 1);
      await sendTo(broker, topic, 0, ["a"]);
      await broker.subscriptionGroups.update(group, { consumeEnable: false });
      const refused = refusedWith(ErrorCode.NO_PERMISSION, /subscription group no permission/);
      await assert.rejects(pull(broker, group, topic), refused);
      await assert.rejects(receive(broker, group, topic), refused);
      // Another process (its own cache) sees the config too.
      const other = await popBroker(storage);
      await assert.rejects(pull(other, group, topic), refused);
      await broker.subscriptionGroups.update(group, { consumeEnable: true });
      assert.equal((await pull(broker, group, topic)).pullStatus, "FOUND");
    });

    it("retryMaxTimes drives send-back: 0 sends the first failure to %DLQ%, the consumer's own maxReconsumeTimes wins", async () => {
      const broker = await popBroker(storage);
      const { topic, group } = await topicWith(broker, 1);
      await sendTo(broker, topic, 0, ["x", "y"]);
      const at = { consumerGroup: group, topic, brokerName: BROKER, queueId: 0 };
      assert.equal((await broker.sendBack.sendBack({ ...at, queueOffset: 0 })).result, "RETRY", "default: 16");
      await broker.subscriptionGroups.update(group, { retryMaxTimes: 0 });
      const dead = await broker.sendBack.sendBack({ ...at, queueOffset: 1 });
      assert.equal(dead.result, "DLQ");
      assert.equal(dead.topic, dlqTopic(group));
      const own = await broker.sendBack.sendBack({ ...at, queueOffset: 1, maxReconsumeTimes: 16 });
      assert.deepEqual([own.result, own.topic], ["RETRY", retryTopic(group)]);
    });

    it("retryMaxTimes drives POP: 1 means two deliveries, then %DLQ%<group>", async () => {
      const clock = fakeClock(Date.now());
      const broker = await popBroker(storage, clock);
      const { topic, group } = await topicWith(broker, 1);
      await broker.subscriptionGroups.update(group, { retryMaxTimes: 1 });
      await receive(broker, group, topic);
      await sendTo(broker, topic, 0, ["late"]);
      assert.equal((await receive(broker, group, topic, 1, { invisibleMs: 5000 })).messages[0]?.deliveryAttempt, 1);
      clock.advance(6000);
      assert.equal((await receive(broker, group, topic, 1, { invisibleMs: 5000 })).messages[0]?.deliveryAttempt, 2);
      clock.advance(6000);
      assert.deepEqual((await receive(broker, group, topic)).messages, [], "past retryMaxTimes + 1 deliveries");
      const dlq = await broker.queueLog.read({ topic: dlqTopic(group), brokerName: BROKER, queueId: 0 }, 0);
      assert.deepEqual(
        dlq.messages.map((m) => new TextDecoder().decode(m.body)),
        ["late"],
      );
    });

    it("consumeMessageOrderly: POP hands out one message of a message group at a time", async () => {
      const broker = await popBroker(storage);
      const { topic, group } = await topicWith(broker, 1);
      await receive(broker, group, topic);
      await sendTo(broker, topic, 0, ["o1", "o2"], { groups: ["order-1", "order-1"] });
      await broker.subscriptionGroups.update(group, { consumeMessageOrderly: true });
      assert.deepEqual((await receive(broker, group, topic)).messages.map(text), ["o1"], "FIFO: one in flight");
      assert.deepEqual((await receive(broker, group, topic)).messages, [], "the next waits for the ack");
    });

    it("consumeBroadcastEnable false: a BROADCASTING consumer's heartbeat is refused and records nothing", async () => {
      const broker = await popBroker(storage);
      const { group } = freshNames();
      await broker.subscriptionGroups.update(group, { consumeBroadcastEnable: false });
      const hb = (clientId: string, messageModel: "BROADCASTING" | "CLUSTERING") =>
        broker.clients.heartbeat({ clientId, consumerDataSet: [{ groupName: group, messageModel }] });
      await assert.rejects(hb("b1", "BROADCASTING"), refusedWith(ErrorCode.NO_PERMISSION, /broadcast/));
      assert.deepEqual(await broker.clients.consumers(group), []);
      await hb("c1", "CLUSTERING");
      assert.deepEqual(
        (await broker.clients.consumers(group)).map((c) => c.clientId),
        ["c1"],
      );
    });

    it("the broker meets groups: a commit lists the group with RocketMQ's defaults and its lag; delete removes it", async () => {
      const broker = await popBroker(storage);
      const { topic, group } = await topicWith(broker, 2);
      await sendTo(broker, topic, 0, ["1", "2", "3"]);
      await sendTo(broker, topic, 1, ["4"]);
      await broker.offsets.commit(group, topic, [{ brokerName: BROKER, queueId: 0, offset: 1 }]);
      const page = await broker.groups.list({ limit: 100 });
      const row = page.groups.find((g) => g.group === group);
      assert.ok(row, "the committing group is listed");
      assert.deepEqual(row.topics, [topic]);
      assert.equal(row.totalLag, 2 + 1, "queue 0: 3 - 1, queue 1: 1 - 0");
      assert.equal(row.subscriptionGroup.configured, false);
      assert.equal(row.subscriptionGroup.retryMaxTimes, 16);
      // An update keeps it listed, configured; the next meeting does not overwrite the config.
      await broker.subscriptionGroups.update(group, { retryMaxTimes: 3 });
      await (await popBroker(storage)).subscriptionGroups.meet(group);
      assert.equal((await broker.subscriptionGroups.configOf(group)).retryMaxTimes, 3);
      await broker.subscriptionGroups.delete(group);
      assert.equal(
        (await broker.groups.list({ limit: 100 })).groups.find((g) => g.group === group),
        undefined,
      );
      await assert.rejects(
        broker.subscriptionGroups.delete(group),
        refusedWith(ErrorCode.SUBSCRIPTION_GROUP_NOT_EXIST, /does not exist/),
      );
    });

    it("lag samples: one per group per run, a ring of at most `slots` items, oldest first", async () => {
      const clock = fakeClock(Date.UTC(2030, 0, 1));
      const broker = new Broker(storage, {
        brokers: [{ cluster: "C", brokerName: BROKER, brokerId: 0, address: "http://127.0.0.1:1" }],
        newMessageId,
        now: clock,
        lagSamples: { intervalMs: 60_000, slots: 3 },
      });
      await broker.registerBrokers();
      const { topic, group } = await topicWith(broker, 1);
      await broker.offsets.commit(group, topic, [{ brokerName: BROKER, queueId: 0, offset: 0 }]);
      for (let i = 1; i <= 5; i++) {
        await broker.registerBrokers(); // the fake clock moves past the brokers' 120 s expiry
        await sendTo(broker, topic, 0, ["m"]);
        const report = await broker.sampleLag();
        assert.ok(report.groups >= 1);
        clock.advance(60_000);
      }
      const history = await broker.lagSamples.history(group);
      assert.deepEqual(
        history.map((s) => s.lag),
        [3, 4, 5],
        "the ring keeps the last 3 of 5 samples",
      );
      const items = await storage.table({ name: "offsets", sortKeyType: "string" }).query(`lag:${group}`);
      assert.equal(items.items.length, 3, "never more items than slots");
      clock.advance(3 * 60_000);
      assert.deepEqual(await broker.lagSamples.history(group), [], "a ring-old sample is stale");
    });
  });
}
