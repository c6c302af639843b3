/**
 * @module The check-back scenario with real processes, on both storage modes: producer process P1 sends a
 * transactional message whose local transaction is UNKNOW and is killed with SIGKILL; the checks go on while
 * no live producer answers; producer process P2 of the same group, started after P1 died, receives the
 * check and commits; the message is delivered exactly once; a producer process of another group gets no check.
 */
import assert from "node:assert/strict";
import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { waitUntil } from "../support/consumer-helpers.js";
import { MODE_LABEL, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";
import { FAST_CHECKS } from "./transactions-suite.js";

const WORKER = fileURLToPath(new URL("../support/tx-producer-process.ts", import.meta.url));

interface Reports {
  child: ChildProcess;
  messages: unknown[];
}

function startProducer(url: string, group: string, role: string, topic = ""): Reports {
  const child = fork(WORKER, [url, group, role, topic], { execArgv: ["--import", "tsx"], stdio: "inherit" });
  const reports: Reports = { child, messages: [] };
  child.on("message", (m) => reports.messages.push(m));
  return reports;
}

const reported = <T>(r: Reports, pick: (m: unknown) => T | undefined): T | undefined =>
  r.messages.map(pick).find((v) => v !== undefined);

async function kill(r: Reports): Promise<void> {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return;
  const exited = once(r.child, "exit");
  r.child.kill("SIGKILL");
  await exited;
}

for (const mode of ["local", "aws"] as const) {
  describe(`${MODE_LABEL[mode]}: a check-back reaches another live producer of the group`, () => {
    // Registered before the server's: the producer processes are killed before the server closes.
    const children: Reports[] = [];
    after(async () => {
      for (const c of children) await kill(c);
    });
    const ctx = useTestServer(mode, FAST_CHECKS);

    it("P1 dies with an UNKNOW transaction; P2 of the same group commits it on check; delivered once", async (t) => {
      const api = new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
      const topic = uniqueName("TxProc");
      await api.updateTopic(topic, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
      const group = uniqueName("TxGroup");

      const p1 = startProducer(ctx.server.url, group, "unknown", topic);
      children.push(p1);
      await waitUntil(() => reported(p1, txIdOf) !== undefined, "P1 stored its half message", 60_000);
      const transactionId = reported(p1, txIdOf) as string;
      await kill(p1);

      const other = startProducer(ctx.server.url, uniqueName("OtherGroup"), "commit-on-check");
      children.push(other);
      await waitUntil(() => other.messages.includes("ready"), "the other group's producer started", 60_000);

      // Nobody answers: P1 is dead (its heartbeat still counts as live for 120 s), so the checks go on.
      await waitUntil(
        async () => (await api.transactionInfo(transactionId, group)).checkTimes >= 2,
        "checks while no producer answers",
        60_000,
      );
      assert.equal((await api.transactionInfo(transactionId, group)).state, "PENDING");

      const p2Started = Date.now();
      const p2 = startProducer(ctx.server.url, group, "commit-on-check");
      children.push(p2);
      // Delivered: committed, and the message appended (the offset is known once it is).
      await waitUntil(
        async () => (await api.transactionInfo(transactionId, group)).queueOffset !== undefined,
        "P2 answered a check with commit",
        60_000,
      );
      assert.equal(
        reported(p2, (m) => checkedOf(m)),
        transactionId,
        "P2 was asked about P1's transaction",
      );
      // Reported, not asserted: P2's start, the next check round (every 200 ms), a heartbeat (50 ms), the end.
      t.diagnostic(`${mode}: from P2's start to the message delivered: ${Date.now() - p2Started} ms`);

      const pulled = await api.pull({ consumerGroup: "C", topic, brokerName: "broker-a", queueId: 0, queueOffset: 0 });
      assert.deepEqual(
        pulled.messages.map((m) => m.msgId),
        [transactionId],
        "delivered exactly once",
      );
      assert.deepEqual(
        other.messages.filter((m) => checkedOf(m) !== undefined),
        [],
        "another group's producer got no check",
      );
    });
  });
}

function txIdOf(m: unknown): string | undefined {
  return typeof m === "object" && m !== null && "transactionId" in m ? String(m.transactionId) : undefined;
}

function checkedOf(m: unknown): string | undefined {
  return typeof m === "object" && m !== null && "checked" in m ? String(m.checked) : undefined;
}
