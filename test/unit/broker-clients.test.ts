/**
 * @module Client liveness with a fake clock: a consumer is listed while its last heartbeat is under 120 s
 * old, a new heartbeat renews it, and unregistering removes it at once.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { HeartbeatData as HeartbeatInput } from "../../lib/protocol/index.js";
import { openTestBroker, type TestBroker } from "../support/server-fixture.js";

const EXPIRY_MS = 120_000;

const consumer = (clientId: string, groupName = "CG"): HeartbeatInput => ({
  clientId,
  consumerDataSet: [
    {
      groupName,
      consumeType: "CONSUME_PASSIVELY",
      messageModel: "CLUSTERING",
      consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
      subscriptionDataSet: [{ topic: "Orders", subString: "TagA || TagB" }],
    },
  ],
});

describe("client liveness (fake clock)", () => {
  let t: TestBroker;
  const ids = async (group = "CG") => (await t.broker.clients.consumers(group)).map((c) => c.clientId);
  beforeEach(async () => {
    t = await openTestBroker();
  });
  afterEach(() => t.close());

  it("a consumer whose last heartbeat is 120 s old or more is not listed; a heartbeat renews it", async () => {
    await t.broker.clients.heartbeat(consumer("c1"));
    await t.broker.clients.heartbeat(consumer("c2"));
    t.clock.advance(60_000);
    await t.broker.clients.heartbeat(consumer("c2"));
    t.clock.advance(EXPIRY_MS - 60_000 - 1);
    assert.deepEqual(await ids(), ["c1", "c2"], "c1's heartbeat is 119.999 s old");
    t.clock.advance(1);
    assert.deepEqual(await ids(), ["c2"], "c1's heartbeat is 120 s old");
    t.clock.advance(60_000 - 1);
    assert.deepEqual(await ids(), ["c2"]);
    t.clock.advance(1);
    assert.deepEqual(await ids(), []);

    await t.broker.clients.heartbeat(consumer("c1"));
    const [info] = await t.broker.clients.consumers("CG");
    assert.deepEqual(info, {
      clientId: "c1",
      consumeType: "CONSUME_PASSIVELY",
      messageModel: "CLUSTERING",
      consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
      subscriptionDataSet: [{ topic: "Orders", subString: "TagA || TagB" }],
      lastHeartbeat: t.clock(),
      subscriptionConsistent: true,
    });
  });

  it("unregister removes a consumer at once, from its group only; producers are never listed", async () => {
    await t.broker.clients.heartbeat(consumer("c1"));
    await t.broker.clients.heartbeat(consumer("c2"));
    await t.broker.clients.heartbeat(consumer("c1", "Other"));
    await t.broker.clients.heartbeat({ clientId: "p1", producerDataSet: [{ groupName: "CG" }] });
    assert.deepEqual(await ids(), ["c1", "c2"]);

    await t.broker.clients.unregister("c1", { consumerGroup: "CG" });
    assert.deepEqual(await ids(), ["c2"]);
    assert.deepEqual(await ids("Other"), ["c1"]);
    await t.broker.clients.unregister("c2", { producerGroup: "CG" });
    assert.deepEqual(await ids(), ["c2"], "unregistering the producer role keeps the consumer");
    await t.broker.clients.unregister("nobody", { consumerGroup: "CG" });
    assert.deepEqual(await ids(), ["c2"]);
  });
});
