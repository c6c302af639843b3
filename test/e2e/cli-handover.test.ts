/**
 * E2E of `nimbus consume`'s queue handover (the CLI's consumer class, in this process), on both storage
 * modes: a second consumer of the group joins one that is reading a stream of messages; the first notices
 * within its 5 s membership poll and releases the queues it gives up, the second reads them only after
 * that. Before, the two overlapped on a queue for up to 20 s. Asserted: nothing lost, duplicates below one
 * pull batch per queue; printed: the counts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CliConsumer } from "../../lib/cli/cli-consumer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { MessageQueue } from "../../lib/core/message-queue.js";
import { report, sendRoundRobin, waitUntil } from "../support/consumer-helpers.js";
import { MODE_LABEL, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS, WAIT_GUARD_MS } from "../support/timeouts.js";

for (const mode of ["local", "aws"] as const) {
  describe(`${MODE_LABEL[mode]}: nimbus consume hands queues over`, () => {
    const ctx = useTestServer(mode);

    it("a second consume process joins a busy one: nothing lost, no queue read twice", async () => {
      const api = new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
      const topic = uniqueName("CliHandover");
      const group = uniqueName("gCli");
      await api.updateTopic(topic, { readQueueNums: 4, writeQueueNums: 4, brokerNames: ["broker-a"] });
      const queues = Array.from({ length: 4 }, (_, i) => new MessageQueue(topic, "broker-a", i));
      const counts = new Map<string, number>();
      const byConsumer = [0, 0];
      const stop = new AbortController();
      const consumer = (n: 0 | 1) =>
        new CliConsumer(api, {
          group,
          topic,
          filter: { type: "TAG", expression: "*" },
          from: "first",
          signal: stop.signal,
          onMessage: (m) => {
            counts.set(m.msgId, (counts.get(m.msgId) ?? 0) + 1);
            byConsumer[n] = (byConsumer[n] ?? 0) + 1;
          },
          onError: () => undefined,
        });
      const first = consumer(0).run();
      const sent: string[] = [];
      let sending = true;
      const producing = (async () => {
        for (let i = 0; sending; i++) {
          sent.push(...(await sendRoundRobin(api, queues, 4, `m${i}`)).map((s) => s.msgId));
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      await waitUntil(() => counts.size >= 40, "the first consumer reading");
      const secondRun = consumer(1).run();
      // Past the first's membership poll (5 s) and its release, the second reads its share of the stream.
      await waitUntil(() => (byConsumer[1] ?? 0) >= 20, "the second consumer reading", WAIT_GUARD_MS);
      sending = false;
      await producing;
      await waitUntil(() => sent.every((id) => counts.has(id)), "every message read", WAIT_GUARD_MS);
      stop.abort();
      const [a, b] = await Promise.all([first, secondRun]);
      const duplicates = [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
      report(`${mode}: nimbus consume, a second process joins`, {
        sent: sent.length,
        distinct: counts.size,
        duplicates,
        first: a.consumed,
        second: b.consumed,
      });
      assert.deepEqual(
        sent.filter((id) => !counts.has(id)),
        [],
        "nothing lost",
      );
      assert.ok(b.consumed > 0, "the second consumer read its share");
      assert.ok(duplicates < 32, `${duplicates} duplicates`);
    });
  });
}
