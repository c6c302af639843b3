/**
 * E2E of the queue handover, members in this process, on both storage modes: the handover
 * scenario (join at a quarter, a clean leave at half) delivers every message with fewer than 30
 * duplicates, and the SDK's count of deliveries already committed by another member is printed;
 * flapping membership (a member that joins and leaves again and again) loses nothing.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { PushConsumerOptions } from "../../lib/client/consumer/consumer-options.js";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { MessageQueue } from "../../lib/core/message-queue.js";
import { backgroundErrors, report, waitUntil } from "../support/consumer-helpers.js";
import { Deliveries, type Member, prepareScenario, runScenario } from "../support/handover-scenario.js";
import { MODE_LABEL, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

/** ~8 ms per message, one listener call at a time: a slow consumer. */
const LISTENER_MS = 8;

for (const mode of ["local", "aws"] as const) {
  describe(`${MODE_LABEL[mode]}: queue handover between push consumers`, () => {
    const ctx = useTestServer(mode);
    const open: PushConsumer[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((c) => c.shutdown()));
    });
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

    function member(
      name: string,
      group: string,
      topic: string,
      deliveries: Deliveries,
      options: Partial<PushConsumerOptions> = {},
    ): Member {
      const c: PushConsumer = new PushConsumer({
        consumerGroup: group,
        endpoints: ctx.server.url,
        timeoutMs: TEST_TIMEOUT_MS,
        consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
        consumeThreadMax: 1,
        // The members see a join within 1 s (the default 5 s poll would see it after they consumed everything);
        // commits stay at the default 5 s, the window the issue is about.
        membershipPollInterval: 1000,
        // A hang guard: a healthy previous owner releases long before this.
        handoverGraceMillis: 30_000,
        onError: (err, what) => backgroundErrors.push(`${name} ${what}: ${String(err)}`),
        ...options,
      });
      c.subscribe(topic, "*");
      c.registerMessageListener(async (msgs) => {
        await new Promise((resolve) => setTimeout(resolve, LISTENER_MS * msgs.length));
        deliveries.record(
          name,
          msgs.map((m) => ({ msgId: m.msgId, queue: `${m.brokerName}#${m.queueId}`, queueOffset: m.queueOffset })),
        );
        return "CONSUME_SUCCESS" as const;
      });
      open.push(c);
      return {
        name,
        start: () => c.start(),
        shutdown: () => c.shutdown(),
        reportedDuplicates: () => c.duplicatesDelivered,
      };
    }

    it("the handover scenario: join at a quarter, leave at half; all delivered, under 30 duplicates", async () => {
      const topic = uniqueName("Handover");
      const group = uniqueName("gHandover");
      const ids = await prepareScenario(api(), topic);
      const deliveries = new Deliveries();
      const members = {
        a: member("A", group, topic, deliveries),
        b: member("B", group, topic, deliveries),
        c: member("C", group, topic, deliveries),
      };
      const result = await runScenario(api(), group, topic, ids, members, deliveries, 6000);
      report(`${mode}: handover scenario, members in one process (membership poll 1 s, commits every 5 s)`, {
        ...result,
      });
      assert.equal(result.lost, 0, "no message lost");
      assert.ok(result.duplicates < 30, `${result.duplicates} duplicates (at most what was in flight at each move)`);
      assert.ok(result.reportedDuplicates <= result.duplicates, "the SDK's count is never above the real one");
    });

    it("flapping membership: a member joins and leaves six times while the group consumes; nothing lost", async () => {
      const topic = uniqueName("Flap");
      const group = uniqueName("gFlap");
      const ids = await prepareScenario(api(), topic);
      const deliveries = new Deliveries();
      const fast = { membershipPollInterval: 100, persistConsumerOffsetInterval: 200, rebalanceInterval: 1000 };
      const steady = member("S", group, topic, deliveries, fast);
      await steady.start();
      for (let i = 0; i < 6; i++) {
        const flapper = member(`F${i}`, group, topic, deliveries, fast);
        await flapper.start();
        const before = deliveries.distinct;
        await waitUntil(() => deliveries.distinct >= Math.min(ids.length, before + 20), "some progress", 90_000);
        await flapper.shutdown();
      }
      await waitUntil(() => ids.every((id) => deliveries.counts.has(id)), "every message delivered", 120_000);
      const queues = Array.from({ length: 4 }, (_, i) => new MessageQueue(topic, "broker-a", i));
      await waitUntil(async () => {
        const committed = await api().queryOffsets(group, topic);
        return queues.every((q) => committed.some((e) => e.queueId === q.queueId && e.offset === 90));
      }, "every queue committed at its end");
      await steady.shutdown();
      report(`${mode}: flapping membership`, {
        sent: ids.length,
        distinct: deliveries.distinct,
        deliveries: deliveries.total,
        duplicates: deliveries.duplicates,
      });
      assert.equal(ids.filter((id) => !deliveries.counts.has(id)).length, 0, "no message lost");
      assert.ok(deliveries.duplicates < 30, `${deliveries.duplicates} duplicates`);
    });
  });
}
