/**
 * @module The broker services behind mqadmin's remoting codes: resetOffsetByTime with `force: false` moves no
 * queue forwards (mqadmin's `-f false`), and `groups.groupsOfTopic` (QUERY_TOPIC_CONSUME_BY_WHO) names the groups
 * with committed offsets on a topic or a live consumer subscribed to it.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { resetOffsetByTime } from "../../lib/broker/consume/index.js";
import { openTestBroker, type TestBroker } from "../support/server-fixture.js";

const body = (s: string) => new TextEncoder().encode(s);

describe("broker services of mqadmin's codes", () => {
  let t: TestBroker;
  beforeEach(async () => {
    t = await openTestBroker();
    await t.broker.topics.upsert("Orders", { readQueueNums: 2, writeQueueNums: 2, brokerNames: ["broker-a"] });
    for (const queueId of [0, 1])
      for (let i = 0; i < 4; i++) {
        await t.broker.sender.send({
          topic: "Orders",
          brokerName: "broker-a",
          queueId,
          messages: [{ body: body("m") }],
        });
        t.clock.advance(1000);
      }
  });
  afterEach(() => t.close());

  const deps = () => ({
    offsets: t.broker.offsets,
    clients: t.broker.clients,
    queueLog: t.broker.queueLog,
    routes: t.broker.routeCache,
    now: () => t.clock(),
  });
  const offsets = async (group: string) =>
    (await t.broker.offsets.query(group, "Orders"))
      .sort((a, b) => a.queueId - b.queueId)
      .map((e) => [e.queueId, e.offset]);

  it("force false moves a queue back to the time, never forwards past its committed offset", async () => {
    await t.broker.offsets.commit("G", "Orders", [
      { brokerName: "broker-a", queueId: 0, offset: 1 },
      { brokerName: "broker-a", queueId: 1, offset: 4 },
    ]);
    const reset = await resetOffsetByTime(deps(), "G", "Orders", "now", { force: false });
    assert.deepEqual(
      reset.offsetTable.map((e) => [e.queueId, e.offset]).sort(),
      [
        [0, 1],
        [1, 4],
      ],
      "queue 0 stays at 1 (the end, 4, is ahead); queue 1 is at the end already",
    );
    await resetOffsetByTime(deps(), "G", "Orders", "first", { force: false });
    assert.deepEqual(await offsets("G"), [
      [0, 0],
      [1, 0],
    ]);
    await resetOffsetByTime(deps(), "G", "Orders", "now");
    assert.deepEqual(
      await offsets("G"),
      [
        [0, 4],
        [1, 4],
      ],
      "force (the default) moves forwards too",
    );
  });

  it("groupsOfTopic: groups with committed offsets on the topic, and groups whose live consumers subscribe to it", async () => {
    await t.broker.offsets.commit("Committed", "Orders", [{ brokerName: "broker-a", queueId: 0, offset: 1 }]);
    await t.broker.topics.upsert("Other", { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
    await t.broker.offsets.commit("Elsewhere", "Other", [{ brokerName: "broker-a", queueId: 0, offset: 0 }]);
    await t.broker.clients.heartbeat({
      clientId: "c1",
      consumerDataSet: [
        {
          groupName: "Subscribed",
          consumeType: "CONSUME_PASSIVELY",
          messageModel: "CLUSTERING",
          consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
          subscriptionDataSet: [{ topic: "Orders", subString: "*" }],
        },
      ],
    });
    assert.deepEqual(await t.broker.groups.groupsOfTopic("Orders"), ["Committed", "Subscribed"]);
    assert.deepEqual(await t.broker.groups.groupsOfTopic("Other"), ["Elsewhere"]);
    assert.deepEqual(await t.broker.groups.groupsOfTopic("Nobody"), []);
  });
});
