/**
 * E2E of the orderly lock's failure case on both storage modes: a consumer process paused with
 * SIGSTOP (its timers stop too) past its lock's lease, with pulled messages still waiting in its process
 * queues, while the group drops it (the test unregisters it, standing in for the heartbeat expiry) and
 * another consumer takes its queues once the leases end. Resumed with SIGCONT, the paused consumer
 * processes nothing more: it checks its lease before each batch, finds it gone and taken, and drops its
 * queues; it locks queues again only after the other one released them. Short leases (3 s, margin 0.5 s)
 * are configured on the broker; nothing asserts on elapsed time.
 */
import assert from "node:assert/strict";
import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { after, afterEach, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { createTopic, report, waitUntil } from "../support/consumer-helpers.js";
import { ORDERLY_TEST_TIMINGS } from "../support/consumer-process.js";
import { MODE_LABEL, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

const WORKER = fileURLToPath(new URL("../support/orderly-consumer-process.ts", import.meta.url));
const PER_QUEUE = 100;
/** A failure bound only (the machine is shared and loaded): the waits end as soon as their condition holds. */
const LONG_WAIT_MS = 180_000;

interface Processed {
  queue: string;
  offset: number;
  at: number;
}

for (const mode of ["local", "aws"] as const) {
  describe(`${MODE_LABEL[mode]}: a paused orderly consumer`, () => {
    // Registered before the server's: the child is killed before the server closes.
    const children: ChildProcess[] = [];
    after(async () => {
      for (const c of children) {
        if (c.exitCode !== null || c.signalCode !== null) continue;
        const exited = once(c, "exit");
        c.kill("SIGCONT");
        c.kill("SIGKILL");
        await exited;
      }
    });
    const ctx = useTestServer(mode, { queueLockLeaseMs: 3000, queueLockSkewMarginMs: 500 });
    const open: PushConsumer[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((c) => c.shutdown()));
    });
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

    it("does not process after its queues moved, and loses nothing", async () => {
      const topic = uniqueName("Paused");
      const group = uniqueName("gPaused");
      await createTopic(api(), topic, 4, ["broker-a"]);
      for (let q = 0; q < 4; q++) {
        await api().send({
          topic,
          brokerName: "broker-a",
          queueId: q,
          messages: Array.from({ length: PER_QUEUE }, (_, i) => ({ body: new TextEncoder().encode(`q${q}:${i}`) })),
        });
      }
      // A: a process of its own.
      const byA: Processed[] = [];
      let aId: string | undefined;
      const a = fork(WORKER, [ctx.server.url, group, topic], { execArgv: ["--import", "tsx"], stdio: "inherit" });
      children.push(a);
      a.on("message", (m: { clientId?: string; processed?: Processed }) => {
        if (m.clientId !== undefined) aId = m.clientId;
        if (m.processed !== undefined) byA.push(m.processed);
      });
      await waitUntil(() => aId !== undefined, "A started", LONG_WAIT_MS);
      // A works on all four queues, with pulled messages waiting in its process queues.
      await waitUntil(
        async () => {
          const status = (await api().consumerStatus(group)).find((s) => s.clientId === aId);
          // The topic's queues (a CLUSTERING consumer also holds its %RETRY% queue).
          const queues = (status?.runningInfo?.queues ?? []).filter((q) => q.topic === topic);
          return (
            queues.length === 4 &&
            queues.every((q) => q.locked) &&
            queues.reduce((n, q) => n + q.cachedMsgCount, 0) >= 8
          );
        },
        "A holds 4 locked queues with messages cached",
        LONG_WAIT_MS,
      );
      assert.ok(byA.length > 0);

      a.kill("SIGSTOP");
      const stoppedAt = Date.now();
      // The group drops A, as its heartbeat expiry would after 120 s.
      await api().unregister(aId as string, { consumerGroup: group });

      // B takes all four queues once A's leases end, from A's last commit, in order.
      const byB: Processed[] = [];
      const b = new PushConsumer({
        consumerGroup: group,
        endpoints: ctx.server.url,
        timeoutMs: TEST_TIMEOUT_MS,
        ...ORDERLY_TEST_TIMINGS,
        onError: () => undefined,
      });
      open.push(b);
      b.subscribe(topic, "*");
      b.registerMessageListenerOrderly((msgs, context) => {
        for (const m of msgs) byB.push({ queue: context.messageQueue.key(), offset: m.queueOffset, at: Date.now() });
        return "SUCCESS";
      });
      await b.start();
      const lastOffsets = () =>
        [0, 1, 2, 3].map((q) => Math.max(-1, ...byB.filter((p) => p.queue.endsWith(`#${q}`)).map((p) => p.offset)));
      await waitUntil(
        () => lastOffsets().every((o) => o === PER_QUEUE - 1),
        "B processed every queue to its end",
        LONG_WAIT_MS,
      );
      const locks = await api().queueLocks(group, topic);
      assert.ok(
        locks.every((l) => l.locked && l.holder === b.clientId),
        JSON.stringify(locks),
      );

      // B's commits reach the end (it persists every 200 ms): A, once it locks queues again, starts from there
      // even if B's lease lapses on this loaded machine before its hand-over commit (then B forgets, not writes).
      await waitUntil(
        async () => {
          const offsets = (await api().queryOffsets(group, topic)).filter((o) => o.brokerName === "broker-a");
          return offsets.length === 4 && offsets.every((o) => o.offset === PER_QUEUE);
        },
        "B committed every queue to its end",
        LONG_WAIT_MS,
      );

      a.kill("SIGCONT");
      const resumedAt = Date.now();
      // A finds itself missing from the group, heartbeats, gets two queues back from B's release and locks them.
      await waitUntil(
        async () => {
          const status = (await api().consumerStatus(group)).find((s) => s.clientId === aId);
          return (status?.runningInfo?.queues ?? []).some((q) => q.topic === topic && q.locked);
        },
        "A locked queues again after B released them",
        LONG_WAIT_MS,
      );
      const afterResume = byA.filter((p) => p.at >= resumedAt);
      report(`${mode}: paused orderly consumer`, {
        aBeforePause: byA.filter((p) => p.at < stoppedAt).length,
        bProcessed: byB.length,
        aAfterResume: afterResume.length,
      });
      assert.deepEqual(
        afterResume,
        [],
        `A processed messages after it was resumed: ${JSON.stringify(afterResume.map((p) => [p.queue, p.offset, p.at - resumedAt]))}; B's last: ${JSON.stringify(lastOffsets())}`,
      );
      // Nothing lost: every offset of every queue processed by A (before the pause) or B.
      for (let q = 0; q < 4; q++) {
        const done = new Set([...byA, ...byB].filter((p) => p.queue.endsWith(`#${q}`)).map((p) => p.offset));
        assert.equal(done.size, PER_QUEUE, `queue ${q}`);
      }
      // B started each queue where A had committed, so it processed in order from there.
      for (let q = 0; q < 4; q++) {
        const offsets = byB.filter((p) => p.queue.endsWith(`#${q}`)).map((p) => p.offset);
        assert.deepEqual(
          offsets,
          [...offsets].sort((x, y) => x - y),
          `B processed queue ${q} in order`,
        );
      }
    });
  });
}
