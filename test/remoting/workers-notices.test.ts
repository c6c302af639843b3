/**
 * @module NOTIFY_CONSUMER_IDS_CHANGED across the processes of the built `nimbus dev --workers 2`, on both storage
 * modes. Each connection stays with one worker; a raw connection (test/support/remoting-raw.ts) learns which by a
 * batch send without message ids, whose ids the worker makes with its pid. A consumer joining (its first
 * heartbeat) or leaving (its connection closed) through one worker makes the group's consumers connected to the
 * other rebalance at once: the door tells the process bus (lib/dev/process-bus.ts), the primary relays it. Then a
 * 4.9.8 DefaultMQPushConsumer whose rebalance timer is set to an hour gives up and takes back queues as members
 * join through each worker and leave: only the notices can move its queues. Nothing asserts on elapsed time.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { RequestCode } from "../../lib/remoting/index.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { type DevWorkers, startDevWorkers } from "../support/dev-workers.js";
import { remotingClientUnavailable, startRemotingClient } from "../support/remoting-java.js";
import { consumerHeartbeat, RawRemoting } from "../support/remoting-raw.js";
import { uniqueName } from "../support/server-fixture.js";
import { workerOf } from "../support/worker-probe.js";

/** Registers `clientId` as a clustering consumer of `group` on the connection; resolves on the answer. */
async function join(c: RawRemoting, clientId: string, group: string, topic: string): Promise<void> {
  const answer = await c.request(consumerHeartbeat(clientId, group, topic));
  assert.equal(answer.code, 0, answer.remark);
}

const notices = (c: RawRemoting, group: string) =>
  c.calls.filter((f) => f.code === RequestCode.NOTIFY_CONSUMER_IDS_CHANGED && f.extFields.consumerGroup === group)
    .length;

for (const mode of ["local", "aws"] as const) {
  describe(`remoting notices across nimbus dev --workers 2 (${mode})`, () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-remoting-workers-"));
    let workers: DevWorkers | undefined;
    let url = "";
    let port = 0;
    const open: RawRemoting[] = [];
    const api = () => new NimbusApi({ endpoints: url, timeoutMs: 10_000 });

    before(async () => {
      workers = await startDevWorkers(mode, dataDir, "rw");
      ({ url, port } = workers);
    });
    after(async () => {
      for (const c of open) c.close();
      await workers?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    /** Two raw connections that different workers serve. */
    async function twoWorkers(topic: string): Promise<[RawRemoting, RawRemoting]> {
      const byWorker = new Map<string, RawRemoting>();
      for (let i = 0; i < 16 && byWorker.size < 2; i++) {
        const c = await RawRemoting.open(port);
        open.push(c);
        const worker = await workerOf(c, api(), topic);
        if (byWorker.has(worker)) c.close();
        else byWorker.set(worker, c);
      }
      const [a, b] = [...byWorker.values()];
      assert.ok(a && b, "two connections served by different workers");
      return [a, b];
    }

    it("a consumer joining or leaving through one worker is told to the group's consumers on the other", async () => {
      const topic = uniqueName("WorkersNotice");
      await createTopic(api(), topic, 1);
      const group = uniqueName("WorkersNoticeGroup");
      const [a, b] = await twoWorkers(topic);
      await join(a, "0.0.0.1@notice-a", group, topic);
      const before = notices(a, group);
      await join(b, "0.0.0.1@notice-b", group, topic);
      await waitUntil(() => notices(a, group) > before, "a notice on the other worker's connection when b joins");
      const beforeLeave = notices(a, group);
      b.close();
      await waitUntil(() => notices(a, group) > beforeLeave, "a notice on the other worker's connection when b leaves");
      await waitUntil(
        async () => (await api().consumerIds(group)).join() === "0.0.0.1@notice-a",
        "b, whose connection closed, is no longer a member",
      );
    });

    it("a 4.9.8 push consumer with an hour's rebalance timer moves queues on the notices of both workers", {
      skip: remotingClientUnavailable(),
    }, async () => {
      const topic = uniqueName("WorkersMember");
      await createTopic(api(), topic, 2);
      const group = uniqueName("WorkersMemberGroup");
      const member = startRemotingClient(["member", `127.0.0.1:${port}`, group, topic], 240_000);
      const queues = () =>
        (member.lines.filter((l) => l.startsWith("queues ")).at(-1) ?? "").split(" ")[1]?.split(",") ?? [];
      try {
        await waitUntil(() => queues().length === 4, "the consumer holds every queue");
        // Probe ids sort before the consumer's: with AllocateMessageQueueAveragely it holds 2 of 4 queues with one
        // probe, 1 with two. One of the two probes is on a worker that the notice must cross to.
        const [a, b] = await twoWorkers(topic);
        await join(a, "0.0.0.1@probe-a", group, topic);
        await waitUntil(() => queues().length === 2, "two queues given up when a member joins through one worker");
        await join(b, "0.0.0.1@probe-b", group, topic);
        await waitUntil(() => queues().length === 1, "one more given up when a member joins through the other");
        a.close();
        b.close();
        await waitUntil(() => queues().length === 4, "every queue taken back when both members' connections close");
      } finally {
        member.stop();
        await member.done.catch(() => undefined);
      }
    });
  });
}
