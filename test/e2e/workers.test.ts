/**
 * @module The built `nimbus dev --workers 2`: two server processes on one store behave as one broker. Each
 * connection stays with one worker, and a send's message id names the process that stored it, so the test finds
 * two connections served by different workers, then checks what the workers tell each other
 * (lib/dev/process-bus.ts): a route changed through one reaches the other by the primary's relay (its route cache,
 * set to a minute, would refuse the new queue until then), and a push-channel connection held by one worker hears appends made through the other.
 * Nothing asserts on elapsed time. `kill -9` of the printed pid (the primary) stops every worker.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Agent, request } from "undici";
import { WebSocket } from "ws";
import { ensureBuilt, type RunningCli, spawnNimbus } from "../support/cli-runner.js";
import { waitUntil } from "../support/consumer-helpers.js";

/** The process part of a message id (UNIQ_KEY: 4 bytes of IP, then 2 of pid), as hex. */
const processOf = (msgId: string) => msgId.slice(8, 12);

describe("nimbus dev --workers 2 (the built CLI)", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-workers-"));
  let dev: RunningCli;
  let url = "";
  let pid = 0;
  const agents: Agent[] = [];
  const call = async (agent: Agent, method: "GET" | "PUT" | "POST", p: string, body?: unknown) => {
    const res = await request(`${url}${p}`, {
      method,
      dispatcher: agent,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  };
  const send = (agent: Agent, topic: string, queue?: { brokerName: string; queueId: number }) =>
    call(agent, "POST", "/send", { topic, ...queue, messages: [{ body: Buffer.from("w").toString("base64") }] });

  before(async () => {
    await ensureBuilt();
    // A minute of route cache: only the workers' relay can bring a route change to the other worker in time.
    dev = spawnNimbus([
      ...["dev", "--port", "0", "--grpc-port", "0", "--workers", "2", "--data-dir", dataDir],
      ...["--route-cache-ms", "60000"],
    ]);
    await dev.waitForStdout(/2 worker processes/);
    url = /listening on (http:\/\/\S+)/.exec(dev.stdout())?.[1] ?? "";
    pid = Number(/pid (\d+)/.exec(dev.stdout())?.[1]);
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.close()));
    if (dev.child.exitCode === null) dev.child.kill("SIGINT");
    await dev.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Two keep-alive connections (one each) that different workers serve. */
  async function twoWorkers(): Promise<[Agent, Agent]> {
    const byProcess = new Map<string, Agent>();
    for (let i = 0; i < 16 && byProcess.size < 2; i++) {
      const agent = new Agent({ connections: 1, pipelining: 1 });
      agents.push(agent);
      const sent = await send(agent, "WorkersProbe");
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      byProcess.set(processOf(String((sent.body.msgIds as string[])[0])), agent);
    }
    const [a, b] = [...byProcess.values()];
    assert.ok(a && b, "two connections served by different workers");
    return [a, b];
  }

  it("a route changed through one worker reaches the other by the relay, not the cache's expiry", async () => {
    const [a, b] = await twoWorkers();
    const topic = "WorkersRoute";
    const twoQueues = { readQueueNums: 2, writeQueueNums: 2, brokerNames: ["broker-a"] };
    assert.equal((await call(a, "PUT", `/topics/${topic}`, twoQueues)).status, 200);
    assert.equal((await send(a, topic, { brokerName: "broker-a", queueId: 1 })).status, 200, "a has the route cached");
    const fourQueues = { ...twoQueues, readQueueNums: 4, writeQueueNums: 4 };
    assert.equal((await call(b, "PUT", `/topics/${topic}`, fourQueues)).status, 200);
    // The relay passes through the primary (IPC), so the other worker may answer once more from its cache; within
    // the cache's minute only the relay can make queue 3 known there (the wait is a failure bound, not a timing).
    let onNewQueue = await send(a, topic, { brokerName: "broker-a", queueId: 3 });
    await waitUntil(
      async () => {
        onNewQueue = await send(a, topic, { brokerName: "broker-a", queueId: 3 });
        return onNewQueue.status === 200;
      },
      `queue 3 through the other worker: ${JSON.stringify(onNewQueue.body)}`,
      30_000,
      50,
    );
  });

  it("a push-channel connection hears appends made through either worker", async () => {
    const [a, b] = await twoWorkers();
    const topic = "WorkersHint";
    const queues = [0, 1].map((queueId) => ({ topic, brokerName: "broker-a", queueId }));
    assert.equal(
      (await call(a, "PUT", `/topics/${topic}`, { readQueueNums: 2, writeQueueNums: 2, brokerNames: ["broker-a"] }))
        .status,
      200,
    );
    const ws = new WebSocket(`${url.replace("http", "ws")}/channel`);
    const hinted = new Set<number>();
    let registered = false;
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { type: string; queueId?: number; topic?: string };
      if (frame.type === "registered") registered = true;
      if (frame.type === "queue" && frame.topic === topic && frame.queueId !== undefined) hinted.add(frame.queueId);
    });
    await new Promise((resolve) => ws.once("open", resolve));
    ws.send(JSON.stringify({ type: "register", heartbeat: { clientId: "workers-test@1" }, queues }));
    await waitUntil(() => registered, "registered");
    try {
      // One append through each worker: whichever holds the socket, one of them is the other worker.
      assert.equal((await send(a, topic, { brokerName: "broker-a", queueId: 0 })).status, 200);
      assert.equal((await send(b, topic, { brokerName: "broker-a", queueId: 1 })).status, 200);
      await waitUntil(() => hinted.size === 2, `hints for both queues (got ${[...hinted]})`);
    } finally {
      ws.close();
    }
  });

  it("kill -9 of the printed pid stops every worker", async () => {
    process.kill(pid, "SIGKILL");
    await dev.exited;
    await waitUntil(async () => {
      const agent = new Agent({ connections: 1 });
      try {
        await request(`${url}/health`, { dispatcher: agent, headersTimeout: 2000 });
        return false;
      } catch {
        return true;
      } finally {
        await agent.close();
      }
    }, "nothing serves the port");
  });
});
