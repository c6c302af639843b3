/**
 * @module LOCK_BATCH_MQ and UNLOCK_BATCH_MQ spoken frame by frame (test/support/remoting-raw.ts), on both storage
 * modes: a body outside the HTTP lock request's bounds (a negative queue id, a queue twice, more queues than a
 * commit takes, a group or client id outside the names' bounds) gets MESSAGE_ILLEGAL and writes no lock, not even of
 * its good queues; a body as a RocketMQ client sends it (every queue it holds on the broker, strays of a deleted
 * topic or of shrunk queues among them) locks the topic's own queues and neither locks nor answers the strays.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { MAX_OFFSETS_PER_COMMIT } from "../../lib/protocol/index.js";
import { RequestCode, ResponseCode } from "../../lib/remoting/index.js";
import { createTopic } from "../support/consumer-helpers.js";
import { json, RawRemoting } from "../support/remoting-raw.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

interface WireQueue {
  topic: string;
  brokerName: string;
  queueId: number;
}

for (const mode of ["local", "aws"] as const) {
  describe(`queue locks over the remoting door (${mode})`, () => {
    const ctx = useTestServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });

    it("grants the topic's own queues, skips strays, and refuses a body outside the lock's bounds, writing nothing", async () => {
      const topic = uniqueName("Locked");
      const group = uniqueName("OrderlyGroup");
      await createTopic(api(), topic, 2);
      const c = await RawRemoting.open(ctx.server.server.port);
      const lock = (body: unknown, code: number = RequestCode.LOCK_BATCH_MQ) =>
        c.request({ code, body: new TextEncoder().encode(JSON.stringify(body)) });
      const queue = (queueId: number, name = topic): WireQueue => ({ topic: name, brokerName: "broker-a", queueId });
      const holders = async () =>
        (await ctx.server.server.context.broker.locks.holders(group, topic, [queue(0), queue(1), queue(2)]))
          .filter((h) => h.holder !== "")
          .map((h) => h.queueId);
      try {
        const hostile: Array<[string, unknown]> = [
          ["a negative queue id", { consumerGroup: group, clientId: "c1", mqSet: [queue(0), queue(-1)] }],
          ["a queue twice", { consumerGroup: group, clientId: "c1", mqSet: [queue(0), queue(0)] }],
          [
            "more queues than a commit takes",
            {
              consumerGroup: group,
              clientId: "c1",
              mqSet: Array.from({ length: MAX_OFFSETS_PER_COMMIT + 1 }, (_, i) => queue(i)),
            },
          ],
          ["a group name with a blank", { consumerGroup: "bad group", clientId: "c1", mqSet: [queue(0)] }],
          [
            "a client id of 10,000 characters",
            { consumerGroup: group, clientId: "c".repeat(10_000), mqSet: [queue(0)] },
          ],
          ["no queues list", { consumerGroup: group, clientId: "c1" }],
        ];
        for (const [what, body] of hostile) {
          const answer = await lock(body);
          assert.equal(answer.code, ResponseCode.MESSAGE_ILLEGAL, `${what}: ${answer.remark}`);
          assert.ok((answer.remark ?? "").length <= 1024, `${what}: a bounded remark`);
        }
        assert.deepEqual(await holders(), [], "no lock was written");
        // As a RocketMQ client sends it: every queue it holds on the broker, one of a deleted topic and one the topic
        // no longer has among them, and 5.x's onlyThisBroker.
        const granted = await lock({
          consumerGroup: group,
          clientId: "c1",
          onlyThisBroker: true,
          mqSet: [queue(0), queue(1), queue(2), queue(0, uniqueName("DeletedTopic"))],
        });
        assert.equal(granted.code, ResponseCode.SUCCESS, granted.remark);
        const locked = (json(granted) as { lockOKMQSet: WireQueue[] }).lockOKMQSet;
        assert.deepEqual(
          locked.map((q) => `${q.topic === topic ? "" : "other:"}${q.queueId}`).sort(),
          ["0", "1"],
          "the topic's own queues are locked; the strays are neither locked nor answered",
        );
        assert.deepEqual(await holders(), [0, 1]);
        const unlocked = await lock(
          { consumerGroup: group, clientId: "c1", mqSet: [queue(0), queue(1), queue(2)] },
          RequestCode.UNLOCK_BATCH_MQ,
        );
        assert.equal(unlocked.code, ResponseCode.SUCCESS, unlocked.remark);
        assert.deepEqual(await holders(), []);
      } finally {
        c.close();
      }
    });
  });
}
