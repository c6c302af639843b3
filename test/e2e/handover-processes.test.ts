/**
 * E2E of the queue handover with every member in its own process, on both storage modes: the handover
 * scenario (join at a quarter, a clean leave at half) stays under 30 duplicates with nothing lost; a
 * member killed with SIGKILL loses nothing (its queues go to the others once the group's list drops it;
 * the test unregisters the dead id, standing in for the 120 s heartbeat expiry). Numbers are printed.
 */
import assert from "node:assert/strict";
import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { report, waitUntil } from "../support/consumer-helpers.js";
import { Deliveries, type Member, prepareScenario, runScenario } from "../support/handover-scenario.js";
import { MODE_LABEL, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

const WORKER = fileURLToPath(new URL("../support/push-consumer-process.ts", import.meta.url));

interface ProcessMember extends Member {
  child(): ChildProcess | undefined;
  clientId(): string | undefined;
  kill(): Promise<void>;
}

function processMember(name: string, url: string, group: string, topic: string, deliveries: Deliveries): ProcessMember {
  let child: ChildProcess | undefined;
  let clientId: string | undefined;
  let reported = 0;
  let stopped = false;
  return {
    name,
    child: () => child,
    clientId: () => clientId,
    async start() {
      const c = fork(WORKER, [url, group, topic], { execArgv: ["--import", "tsx"], stdio: "inherit" });
      child = c;
      c.on("message", (m: { clientId?: string; delivered?: string[]; stopped?: number }) => {
        if (m.clientId !== undefined) clientId = m.clientId;
        if (m.delivered !== undefined)
          deliveries.record(
            name,
            m.delivered.map((msgId) => ({ msgId, queue: "", queueOffset: 0 })),
          );
        if (m.stopped !== undefined) {
          reported = m.stopped;
          stopped = true;
        }
      });
      await waitUntil(() => clientId !== undefined, `${name} started`, 60_000);
    },
    async shutdown() {
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.send("shutdown");
      await exited;
      assert.ok(stopped, `${name} reported its shutdown`);
    },
    async kill() {
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    },
    reportedDuplicates: () => reported,
  };
}

for (const mode of ["local", "aws"] as const) {
  describe(`${MODE_LABEL[mode]}: queue handover between consumer processes`, () => {
    // Registered before the server's: the member processes are killed before the server closes.
    const members: ProcessMember[] = [];
    after(async () => {
      for (const m of members) await m.kill();
    });
    const ctx = useTestServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
    const member = (name: string, group: string, topic: string, deliveries: Deliveries) => {
      const m = processMember(name, ctx.server.url, group, topic, deliveries);
      members.push(m);
      return m;
    };

    it("the handover scenario with a process per member: all delivered, under 30 duplicates", async () => {
      const topic = uniqueName("HandoverProc");
      const group = uniqueName("gHandoverProc");
      const ids = await prepareScenario(api(), topic);
      const deliveries = new Deliveries();
      const result = await runScenario(
        api(),
        group,
        topic,
        ids,
        {
          a: member("A", group, topic, deliveries),
          b: member("B", group, topic, deliveries),
          c: member("C", group, topic, deliveries),
        },
        deliveries,
        6000,
      );
      report(`${mode}: handover scenario, a process per member`, { ...result });
      assert.equal(result.lost, 0, "no message lost");
      assert.ok(result.duplicates < 30, `${result.duplicates} duplicates`);
      assert.ok(result.reportedDuplicates <= result.duplicates, "the SDK's count is never above the real one");
    });

    it("a member killed with SIGKILL mid-stream: the others take its queues over, nothing lost", async () => {
      const topic = uniqueName("CrashProc");
      const group = uniqueName("gCrashProc");
      const ids = await prepareScenario(api(), topic);
      const deliveries = new Deliveries();
      const a = member("A", group, topic, deliveries);
      const b = member("B", group, topic, deliveries);
      await Promise.all([a.start(), b.start()]);
      await waitUntil(() => deliveries.distinct >= ids.length / 4, "a quarter processed", 120_000);
      await a.kill();
      // The dead member's heartbeat would keep it in the group for 120 s: drop it as its expiry would.
      await api().unregister(a.clientId() as string, { consumerGroup: group });
      await waitUntil(() => ids.every((id) => deliveries.counts.has(id)), "every message delivered", 120_000);
      await b.shutdown();
      report(`${mode}: a member killed with SIGKILL`, {
        sent: ids.length,
        distinct: deliveries.distinct,
        deliveries: deliveries.total,
        duplicates: deliveries.duplicates,
      });
      assert.deepEqual(
        ids.filter((id) => !deliveries.counts.has(id)),
        [],
        "no message lost",
      );
    });
  });
}
