/**
 * @module Append notices across the processes of the built `nimbus dev --workers 2` (lib/dev/append-notices.ts), on
 * both storage modes: sends with nobody waiting anywhere cross the process bus not once; a pull suspended on one
 * worker is woken by a send through the other, each time on a new topic with the send issued at once behind the
 * pull (the waiter's hold and the append race), and never waits out its suspend time. Each raw connection stays
 * with one worker, which GET_BROKER_RUNTIME_INFO names (its pid) along with its counts. Then a SimpleConsumer (the
 * Node.js gRPC client) long-polling on one worker is woken by the notice of a send through the other. Asserts on
 * the counts, never on elapsed time.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { SimpleConsumer } from "rocketmq-client-nodejs";
import { NimbusApi } from "../../lib/client/index.js";
import { RequestCode, ResponseCode } from "../../lib/remoting/index.js";
import type { RunningCli } from "../support/cli-runner.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { type DevWorkers, startDevWorkers } from "../support/dev-workers.js";
import { quietLogger } from "../support/grpc-fixture.js";
import { json, RawRemoting } from "../support/remoting-raw.js";
import { uniqueName } from "../support/server-fixture.js";

/** The worker's runtime table: its pid and counts. */
async function runtime(c: RawRemoting): Promise<Record<string, string>> {
  const answer = await c.request({ code: RequestCode.GET_BROKER_RUNTIME_INFO });
  assert.equal(answer.code, ResponseCode.SUCCESS, answer.remark);
  return (json(answer) as { table: Record<string, string> }).table;
}
const count = (table: Record<string, string>, key: string) => Number(table[key] ?? Number.NaN);

const sendThrough = async (c: RawRemoting, topic: string, body: string) => {
  const answer = await c.request({
    code: RequestCode.SEND_MESSAGE_V2,
    extFields: { a: "interest-producer", b: topic, e: "0", f: "0", g: String(Date.now()), h: "0", i: "" },
    body: new TextEncoder().encode(body),
  });
  assert.equal(answer.code, ResponseCode.SUCCESS, answer.remark);
};

/** A pull suspended up to 15 s at `offset` of queue 0. */
const suspendedPull = (c: RawRemoting, topic: string, offset: number) =>
  c.request({
    code: RequestCode.PULL_MESSAGE,
    extFields: {
      ...{ consumerGroup: "interest-consumer", topic, queueId: "0", queueOffset: String(offset), maxMsgNums: "32" },
      ...{ sysFlag: String(0x2 | 0x4), commitOffset: "0", suspendTimeoutMillis: "15000" },
      ...{ subscription: "*", subVersion: "0", expressionType: "TAG" },
    },
  });

for (const mode of ["local", "aws"] as const) {
  describe(`append notices across nimbus dev --workers 2 (${mode})`, () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-interest-"));
    let workers: DevWorkers | undefined;
    let dev: RunningCli | undefined;
    let url = "";
    let port = 0;
    const open: RawRemoting[] = [];
    const api = () => new NimbusApi({ endpoints: url, timeoutMs: 10_000 });
    let a: RawRemoting;
    let b: RawRemoting;

    before(async () => {
      workers = await startDevWorkers(mode, dataDir, "wi");
      ({ dev, url, port } = workers);
      const byWorker = new Map<string, RawRemoting>();
      for (let i = 0; i < 16 && byWorker.size < 2; i++) {
        const c = await RawRemoting.open(port);
        open.push(c);
        const pid = (await runtime(c)).processId ?? "";
        if (!byWorker.has(pid)) byWorker.set(pid, c);
      }
      const [first, second] = [...byWorker.values()];
      assert.ok(first && second, "two connections served by different workers");
      [a, b] = [first, second];
    });
    after(async () => {
      for (const c of open) c.close();
      await workers?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("sends with nobody waiting anywhere cross the bus not once", async () => {
      const topic = uniqueName("NoWaiters");
      await createTopic(api(), topic, 1, ["broker-a"]);
      const [beforeA, beforeB] = [await runtime(a), await runtime(b)];
      for (let i = 0; i < 10; i++) await sendThrough(i % 2 === 0 ? a : b, topic, `m${i}`);
      const [afterA, afterB] = [await runtime(a), await runtime(b)];
      assert.equal(count(afterA, "appendNoticesSent") - count(beforeA, "appendNoticesSent"), 0);
      assert.equal(count(afterB, "appendNoticesSent") - count(beforeB, "appendNoticesSent"), 0);
      assert.equal(count(afterA, "appendNoticesWithheld") - count(beforeA, "appendNoticesWithheld"), 5);
      assert.equal(count(afterB, "appendNoticesWithheld") - count(beforeB, "appendNoticesWithheld"), 5);
    });

    it("a pull suspended on one worker wakes on a send through the other, however close the two come", async () => {
      const rounds = 8;
      const beforeA = await runtime(a);
      const beforeB = await runtime(b);
      for (let i = 0; i < rounds; i++) {
        // A new topic each round: its hold is new, so the other worker hears of it while the send races it.
        const topic = uniqueName(`Waiters${i}`);
        await createTopic(api(), topic, 1, ["broker-a"]);
        const pulled = suspendedPull(b, topic, 0);
        await sendThrough(a, topic, `w${i}`);
        const answer = await pulled;
        assert.equal(answer.code, ResponseCode.SUCCESS, `round ${i}: the message (${answer.remark})`);
        assert.equal(answer.extFields.nextBeginOffset, "1");
      }
      const afterA = await runtime(a);
      const afterB = await runtime(b);
      assert.equal(count(afterB, "pullWaitsTimedOut") - count(beforeB, "pullWaitsTimedOut"), 0, "no pull waited out");
      const sent = count(afterA, "appendNoticesSent") - count(beforeA, "appendNoticesSent");
      const woken = count(afterB, "pullWaitsWokenByAppend") - count(beforeB, "pullWaitsWokenByAppend");
      assert.ok(sent <= rounds, `at most one notice per send: ${sent}`);
      // A pull whose read came after the send found the message at once; every other one was woken by a notice.
      assert.ok(woken <= sent, `woken ${woken}, notices ${sent}`);
    });

    it("a SimpleConsumer's receive long-polling on one worker wakes on a send through the other", async () => {
      const endpoints = /gRPC endpoint on (\S+)/.exec(dev?.stdout() ?? "")?.[1] ?? "";
      const topic = uniqueName("PopWaiters");
      await createTopic(api(), topic, 1, ["broker-a"]);
      const consumer = new SimpleConsumer({
        ...{ endpoints, namespace: "", consumerGroup: uniqueName("PopWaitersG") },
        ...{ subscriptions: new Map([[topic, "*"]]), awaitDuration: 15_000, logger: quietLogger() },
      });
      await consumer.startup();
      try {
        const before = [await runtime(a), await runtime(b)];
        const receiving = consumer.receive(16, 10_000);
        // Which worker holds the receive: the other one serves the send.
        let waitingOn: 0 | 1 | undefined;
        await waitUntil(async () => {
          const waiting = [await runtime(a), await runtime(b)].map((t) => count(t, "popWaiting"));
          waitingOn = waiting[0] === 1 ? 0 : waiting[1] === 1 ? 1 : undefined;
          return waitingOn !== undefined;
        }, "the receive waits on a worker");
        const on = waitingOn ?? 0;
        await sendThrough(on === 0 ? b : a, topic, "pop");
        const got = await receiving;
        assert.deepEqual(
          got.map((m) => m.body.toString()),
          ["pop"],
        );
        for (const m of got) await consumer.ack(m);
        const after = await runtime(on === 0 ? a : b);
        const was = before[on] ?? {};
        assert.equal(count(after, "popWaitsWokenByHint") - count(was, "popWaitsWokenByHint"), 1, "woken by the notice");
        assert.equal(count(after, "popWaitsTimedOut") - count(was, "popWaitsTimedOut"), 0, "not by its wait's end");
      } finally {
        await consumer.shutdown();
      }
    });
  });
}
