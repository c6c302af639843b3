/**
 * @module RocketMQ's classic remoting client (rocketmq-client 4.9.8, unchanged; test/interop/remoting-java; and
 * the same scenarios built against rocketmq-client 5.3.3: test/interop/remoting-java5) on
 * what goes beyond sends and reads, on both storage modes: viewMessage by offset message id and by message id and
 * queryMessage by key (VIEW_MESSAGE_BY_ID, QUERY_MESSAGE); TransactionMQProducer commit, rollback, and a
 * check-back the broker sends over the producer's connection (CHECK_TRANSACTION_STATE), answered UNKNOW then
 * COMMIT; a push consumer that answers RECONSUME_LATER with maxReconsumeTimes 1: redelivered once, then in the
 * group's dead-letter queue (read over HTTP).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import type { PulledMessage } from "../../lib/protocol/index.js";
import { storedMessages } from "../grpc/producer-suite.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { REMOTING_CLIENTS, type RemotingClientProcess } from "../support/remoting-java.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

/** Each client version (4.9.8 and the same scenarios on 5.3.3) on each storage mode. */
const RUNS = REMOTING_CLIENTS.flatMap((client) => (["local", "aws"] as const).map((mode) => ({ client, mode })));

const fieldsOf = (lines: string[], prefix: string): string[][] =>
  lines.filter((l) => l.startsWith(`${prefix} `)).map((l) => l.split(" ").slice(1));

for (const { client, mode } of RUNS) {
  const { run: runRemotingClient, start: startRemotingClient } = client;
  const skip = client.unavailable();
  describe(`RocketMQ ${client.version}'s remoting client: queries, transactions, retries (${mode})`, { skip }, () => {
    // Check-backs 300 ms after a half message, then every 500 ms; retries after 1 s.
    const ctx = useTestServer(mode, {
      transactionTimeoutMs: 300,
      transactionCheckIntervalMs: 500,
      messageDelayLevel: "1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s",
    });
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const namesrv = () => `127.0.0.1:${ctx.server.server.port}`;

    it("viewMessage by offset message id and by message id, queryMessage by key", async () => {
      const topic = uniqueName("RemotingQuery");
      await createTopic(api(), topic, 2);
      const run = await runRemotingClient(["query", namesrv(), topic]);
      const sent = fieldsOf(run.lines, "sent");
      assert.equal(sent.length, 2);
      const viewed = fieldsOf(run.lines, "viewed");
      assert.deepEqual(
        viewed,
        sent.flatMap(([msgId = ""], i) => [
          ["offset", msgId, topic, `k-${i}`, `remoting_${i}`],
          ["id", msgId, topic, `k-${i}`, `remoting_${i}`],
        ]),
      );
      assert.deepEqual(fieldsOf(run.lines, "queried"), [["k-0", sent[0]?.[0] ?? ""]]);
    });

    it("TransactionMQProducer: a commit is delivered, a rollback is not", async () => {
      const topic = uniqueName("RemotingTx");
      await createTopic(api(), topic, 1);
      const group = uniqueName("RemotingTxGroup");
      const [committed = []] = fieldsOf(
        (await runRemotingClient(["transaction", namesrv(), group, topic, "commit"])).lines,
        "sent",
      );
      const [rolledBack = []] = fieldsOf(
        (await runRemotingClient(["transaction", namesrv(), group, topic, "rollback"])).lines,
        "sent",
      );
      assert.equal(committed[2], "SEND_OK");
      const stored = await storedMessages(api(), topic);
      assert.deepEqual(
        stored.map((m) => m.msgId),
        [committed[0]],
        "only the committed message is in the queue",
      );
      assert.equal(new TextDecoder().decode(stored[0]?.body), "transaction commit");
      assert.deepEqual(stored[0]?.keys, ["tx-key"]);
      assert.equal((await api().transactionInfo(committed[1] ?? "", group)).state, "COMMITTED");
      assert.equal((await api().transactionInfo(rolledBack[1] ?? "", group)).state, "ROLLED_BACK");
    });

    it("a check-back goes over the producer's connection: answered UNKNOW, then COMMIT on the next check", async () => {
      const topic = uniqueName("RemotingCheck");
      await createTopic(api(), topic, 1);
      const group = uniqueName("RemotingCheckGroup");
      const run = await runRemotingClient(["transaction", namesrv(), group, topic, "check"]);
      const [sent = []] = fieldsOf(run.lines, "sent");
      const [msgId = "", transactionId = ""] = sent;
      assert.deepEqual(fieldsOf(run.lines, "checked"), [
        ["1", "UNKNOW", msgId],
        ["2", "COMMIT_MESSAGE", msgId],
      ]);
      await waitUntil(
        async () => (await storedMessages(api(), topic)).some((m) => m.msgId === msgId),
        "the message committed on the check is delivered",
      );
      assert.equal((await api().transactionInfo(transactionId, group)).state, "COMMITTED");
    });

    it("a push consumer answering RECONSUME_LATER gets the message again, then it is in %DLQ%group", async () => {
      const topic = uniqueName("RemotingRetry");
      await createTopic(api(), topic, 1);
      const group = uniqueName("RemotingRetryGroup");
      const run = await runRemotingClient(["retry-dlq", namesrv(), group, topic]);
      const [[msgId = ""] = []] = fieldsOf(run.lines, "sent");
      const deliveries = fieldsOf(run.lines, "delivery").filter(([id]) => id === msgId);
      // The second delivery comes from the retry topic; the client names the message's own topic.
      assert.deepEqual(deliveries.slice(0, 2), [
        [msgId, "0", topic],
        [msgId, "1", topic],
      ]);
      let dead: PulledMessage[] = [];
      await waitUntil(async () => {
        dead = await storedMessages(api(), `%DLQ%${group}`).catch(() => []);
        return dead.length > 0;
      }, "the message in the dead-letter queue");
      assert.deepEqual(
        dead.map((m) => m.msgId),
        [msgId],
      );
      assert.equal(new TextDecoder().decode(dead[0]?.body), "remoting 0");
    });

    it("NOTIFY_CONSUMER_IDS_CHANGED: a second consumer takes half the queues, and when it leaves the first takes them back", async () => {
      const topic = uniqueName("RemotingMembers");
      await createTopic(api(), topic, 2);
      const group = uniqueName("RemotingMembersGroup");
      // Their rebalance timers are off: only the door's notifications move queues.
      const first = startRemotingClient(["member", namesrv(), group, topic]);
      let second: RemotingClientProcess | undefined;
      const queuesOf = (p: RemotingClientProcess) => fieldsOf(p.lines, "queues").map(([q = ""]) => q.split(","));
      try {
        await waitUntil(() => queuesOf(first).some((q) => q.length === 4), "the first consumer holds every queue");
        second = startRemotingClient(["member", namesrv(), group, topic]);
        const alone = second;
        await waitUntil(() => queuesOf(alone).at(-1)?.length === 2, "the second consumer holds two queues");
        await waitUntil(() => queuesOf(first).at(-1)?.length === 2, "the first consumer gave two up");
        const [a = [], b = []] = [queuesOf(first).at(-1), queuesOf(alone).at(-1)];
        // The watcher may print a rebalance half done (queues join the table one by one): the full set is the one of 4.
        const every = queuesOf(first).find((q) => q.length === 4);
        assert.deepEqual([...a, ...b].sort(), every?.sort(), "together they hold every queue once");

        alone.stop();
        await alone.done;
        await waitUntil(() => queuesOf(first).at(-1)?.length === 4, "the first consumer took every queue back");
      } finally {
        second?.stop();
        first.stop();
        await Promise.allSettled([first.done, second?.done]);
      }
    });
  });
}
