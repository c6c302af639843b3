/**
 * E2E of the queue handover between LitePullConsumers (subscribe mode), on both storage modes: a second
 * consumer joins one that is polling (a quarter done), then the first shuts down at half; every message is
 * polled, with fewer than 30 polled twice (what was pulled but not yet polled at a move is dropped, not
 * duplicated). Numbers are printed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LitePullConsumer } from "../../lib/client/consumer/lite-pull-consumer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { report, waitUntil } from "../support/consumer-helpers.js";
import { Deliveries, prepareScenario } from "../support/handover-scenario.js";
import { MODE_LABEL, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

for (const mode of ["local", "aws"] as const) {
  describe(`${MODE_LABEL[mode]}: queue handover between lite pull consumers`, () => {
    const ctx = useTestServer(mode);

    it("join at a quarter, leave at half: every message polled, under 30 twice", async () => {
      const api = new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
      const topic = uniqueName("LiteHandover");
      const group = uniqueName("gLite");
      const ids = await prepareScenario(api, topic);
      const deliveries = new Deliveries();
      const running: Promise<void>[] = [];
      const start = async (name: string) => {
        const c = new LitePullConsumer({
          consumerGroup: group,
          endpoints: ctx.server.url,
          timeoutMs: TEST_TIMEOUT_MS,
          consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
          membershipPollInterval: 1000,
          autoCommitIntervalMillis: 5000,
          handoverGraceMillis: 30_000,
          pullBatchSize: 8,
          onError: () => undefined,
        });
        c.subscribe(topic, "*");
        await c.start();
        const stop = new AbortController();
        running.push(
          (async () => {
            while (!stop.signal.aborted) {
              const msgs = await c.poll(200);
              // ~8 ms per message, as the push scenario's listener.
              await new Promise((resolve) => setTimeout(resolve, 8 * msgs.length));
              deliveries.record(
                name,
                msgs.map((m) => ({ msgId: m.msgId, queue: "", queueOffset: m.queueOffset })),
              );
            }
            await c.shutdown();
          })(),
        );
        return { consumer: c, stop };
      };
      const a = await start("A");
      await waitUntil(() => deliveries.distinct >= ids.length / 4, "a quarter polled", 120_000);
      const b = await start("B");
      await waitUntil(() => deliveries.distinct >= ids.length / 2, "half polled", 120_000);
      a.stop.abort();
      await waitUntil(() => ids.every((id) => deliveries.counts.has(id)), "every message polled", 120_000);
      b.stop.abort();
      await Promise.all(running);
      report(`${mode}: lite pull handover`, {
        sent: ids.length,
        distinct: deliveries.distinct,
        deliveries: deliveries.total,
        duplicates: deliveries.duplicates,
        reportedDuplicates: a.consumer.duplicatesDelivered + b.consumer.duplicatesDelivered,
      });
      assert.deepEqual(
        ids.filter((id) => !deliveries.counts.has(id)),
        [],
        "nothing lost",
      );
      assert.ok(deliveries.duplicates < 30, `${deliveries.duplicates} duplicates`);
    });
  });
}
