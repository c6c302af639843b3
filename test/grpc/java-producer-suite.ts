/**
 * @module RocketMQ's Java client (rocketmq-client-java 5.0.8, unchanged; test/interop/java) producing through the
 * gRPC endpoint, the Java twin of producer-suite.ts: FIFO messages of two message groups, a delay message, a
 * transaction committed and one rolled back, and a half message left undecided by a producer that exits, whose
 * check-back a second Java producer process answers over its Telemetry stream. Each read back over Nimbus' HTTP
 * API (or the broker's own state) as the stored message it became.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { MessageConst } from "../../lib/core/message.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { useGrpcServer } from "../support/grpc-fixture.js";
import { type JavaProcess, runJavaClient, startJavaClient } from "../support/java-interop.js";
import { type ServerMode, uniqueName } from "../support/server-fixture.js";
import { storedMessages } from "./producer-suite.js";

/** The words after `<prefix>` of each line of a run whose first word it is. */
export const fields = (lines: readonly string[], prefix: string): string[][] =>
  lines.map((l) => l.split(" ")).flatMap(([first, ...rest]) => (first === prefix ? [rest] : []));

/** Waits for a running Java scenario to print a `<prefix> ...` line, failing with its output if it exits first. */
async function lineOf(run: JavaProcess, prefix: string): Promise<string[]> {
  let exited: unknown;
  run.done.catch((err: unknown) => {
    exited = err;
  });
  await waitUntil(() => exited !== undefined || fields(run.lines, prefix).length > 0, `a "${prefix}" line`, 90_000);
  if (exited !== undefined) throw exited;
  return fields(run.lines, prefix)[0] ?? [];
}

export function javaProducerCases(mode: ServerMode, skip: string | undefined): void {
  describe(`RocketMQ's Java client produces over gRPC (${mode})`, { skip }, () => {
    // Check-backs only when the test asks (checkTransactions), half messages due for one after 500 ms.
    const ctx = useGrpcServer(mode, { transactionTimeoutMs: 500, transactionCheckIntervalMs: 600_000 });
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });

    it("FIFO messages of each message group land in one queue in send order, the group kept", async () => {
      const topic = uniqueName("JavaFifo");
      await createTopic(api(), topic, 4);
      const groups = ["order-1", "order-2"];
      const run = await runJavaClient(["produce-fifo", ctx.endpoint, topic, "4", ...groups]);
      const sent = fields(run.lines, "sent");
      assert.equal(sent.length, 8, run.stderr);
      const stored = await storedMessages(api(), topic);
      for (const group of groups) {
        const ids = sent.filter(([, g]) => g === group).map(([id]) => id);
        const ofGroup = stored.filter((m) => ids.includes(m.msgId));
        assert.equal(ofGroup.length, 4, `the ${group} messages stored`);
        assert.equal(new Set(ofGroup.map((m) => `${m.brokerName}/${m.queueId}`)).size, 1, `${group}: one queue`);
        assert.deepEqual(
          ofGroup.sort((a, b) => a.queueOffset - b.queueOffset).map((m) => m.msgId),
          ids,
          `${group}: in send order`,
        );
        assert.ok(
          ofGroup.every((m) => m.properties[MessageConst.SHARDING_KEY] === group),
          "the group kept",
        );
        assert.deepEqual(
          ofGroup.map((m) => new TextDecoder().decode(m.body)),
          [0, 1, 2, 3].map((i) => `${group} ${i}`),
        );
      }
    });

    it("a delay message waits in the timer store until its delivery time, then is delivered", async () => {
      const topic = uniqueName("JavaDelay");
      await createTopic(api(), topic, 1);
      const broker = ctx.server.context.broker;
      // Ten seconds ahead: read the moment the send is answered, well before it is due.
      const run = startJavaClient(["produce-delay", ctx.endpoint, topic, "10000"]);
      const [id = "", at = ""] = await lineOf(run, "sent");
      const dueSecond = Math.floor(Number(at) / 1000);
      const pending = await broker.timers.pending();
      assert.ok(
        pending.some((p) => p.second === dueSecond && p.messages >= 1),
        `in the timer store under its due second ${dueSecond}: ${JSON.stringify(pending)}`,
      );
      assert.deepEqual(await storedMessages(api(), topic), [], "not in the queue before it is due");
      await run.done;
      await waitUntil(
        async () => {
          await broker.moveDueMessages();
          return (await storedMessages(api(), topic)).some((m) => m.msgId === id);
        },
        "the delay message delivered once due",
        60_000,
        200,
      );
      const [m] = await storedMessages(api(), topic);
      assert.equal(m?.properties[MessageConst.TIMER_DELIVER_MS], at);
      assert.equal(new TextDecoder().decode(m?.body), "later");
    });

    it("a transaction is delivered on commit and dropped on rollback", async () => {
      const topic = uniqueName("JavaTx");
      await createTopic(api(), topic, 1);
      const [committed = []] = fields(
        (await runJavaClient(["transaction", ctx.endpoint, topic, "commit"])).lines,
        "sent",
      );
      const [rolledBack = []] = fields(
        (await runJavaClient(["transaction", ctx.endpoint, topic, "rollback"])).lines,
        "sent",
      );
      const stored = await storedMessages(api(), topic);
      assert.deepEqual(
        stored.map((m) => m.msgId),
        [committed[0]],
        "only the committed message is in the queue",
      );
      assert.equal(new TextDecoder().decode(stored[0]?.body), "java commit");
      assert.equal((await api().transactionInfo(committed[1] ?? "", topic)).state, "COMMITTED");
      assert.equal((await api().transactionInfo(rolledBack[1] ?? "", topic)).state, "ROLLED_BACK");
    });

    it("a check-back reaches another producer process after the sender is gone, and commits", async () => {
      const topic = uniqueName("JavaCheck");
      await createTopic(api(), topic, 1);
      const broker = ctx.server.context.broker;
      const [sent = []] = fields((await runJavaClient(["transaction", ctx.endpoint, topic, "leave"])).lines, "sent");
      const [id = "", transactionId = ""] = sent;
      assert.deepEqual(await storedMessages(api(), topic), [], "a half message is invisible");
      assert.equal((await api().transactionInfo(transactionId, topic)).state, "PENDING");
      const checker = startJavaClient(["check-back", ctx.endpoint, topic]);
      try {
        await lineOf(checker, "ready");
        // The sender said goodbye (NotifyClientTermination): the checker is the topic's one live producer.
        await waitUntil(async () => {
          const live = await broker.clients.producers(topic, { transactional: true });
          return live.length === 1;
        }, "the checker process registered as the topic's producer");
        await waitUntil(async () => {
          await broker.checkTransactions();
          return fields(checker.lines, "checked").length > 0;
        }, "the check-back reached the second producer");
        assert.deepEqual(
          fields(checker.lines, "checked").map(([checked]) => checked),
          [id],
        );
        await waitUntil(
          async () => (await storedMessages(api(), topic)).some((m) => m.msgId === id),
          "the committed message delivered",
        );
        assert.equal((await api().transactionInfo(transactionId, topic)).state, "COMMITTED");
      } finally {
        checker.stop();
        await checker.done;
      }
    });
  });
}
