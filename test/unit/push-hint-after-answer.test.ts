/**
 * @module The push channel's append hint leaves the send's path: a send is answered before its hint queries the
 * queue's connections (the query runs in the turn after the append's), and the hint still reaches the connection
 * holding the queue, with the send's offset. The path is asserted (which step ran when), never a time.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { PushGateway } from "../../lib/broker/push/push-channel.js";
import type { ServerFrame } from "../../lib/protocol/index.js";
import { openTestBroker, type TestBroker } from "../support/server-fixture.js";

const QUEUE = { topic: "Orders", brokerName: "broker-a", queueId: 0 } as const;

describe("the push channel's append hint", () => {
  let t: TestBroker;
  const posted: Array<{ connectionId: string; frame: ServerFrame }> = [];
  const gateway: PushGateway = {
    post: async (connectionId, frame) => {
      posted.push({ connectionId, frame });
      return "sent";
    },
  };

  beforeEach(async () => {
    posted.length = 0;
    t = await openTestBroker();
    await t.broker.topics.upsert("Orders", { readQueueNums: 1, writeQueueNums: 1 });
    t.broker.channel.attach(gateway);
    await t.broker.channel.register("conn-1", {
      type: "register",
      heartbeat: { clientId: "consumer-1" },
      queues: [QUEUE],
    });
  });
  afterEach(() => t.close());

  it("queries the queue's connections after the send is answered, then posts the send's offset", async () => {
    const before = t.broker.channel.stats.notifications;
    const answer = await t.broker.sender.send({ ...QUEUE, messages: [{ body: new TextEncoder().encode("m") }] });
    // The send's promise settled in the append's turn: the hint is scheduled, its query has not run.
    assert.equal(t.broker.channel.stats.notifications, before, "no connections query before the answer");
    assert.deepEqual(posted, []);
    await t.broker.channel.settle(10_000);
    assert.equal(t.broker.channel.stats.notifications, before + 1, "one connections query for the hint");
    assert.deepEqual(posted, [
      { connectionId: "conn-1", frame: { type: "queue", ...QUEUE, maxOffset: answer.queueOffset + 1 } },
    ]);
  });
});
