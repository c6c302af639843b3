/**
 * @module E2E cases of traces written by the clients trace-suite.ts does not cover (docs/trace.md): a traced
 * TransactionProducer answering the broker's check-backs (an EndTransaction record for a COMMIT or ROLLBACK
 * answer, none for UNKNOW), and a traced LitePullConsumer (SubBefore and SubAfter when `poll()` returns messages,
 * as RocketMQ's DefaultLitePullConsumer runs its consume hooks). Called inside trace-suite.ts's server.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { LitePullConsumer } from "../../lib/client/consumer/lite-pull-consumer.js";
import { Message, type MessageExt } from "../../lib/client/message.js";
import { Producer } from "../../lib/client/producer/producer.js";
import { type LocalTransactionState, TransactionProducer } from "../../lib/client/producer/transaction-producer.js";
import { queryMessageTrace, type TraceRecord } from "../../lib/client/trace/index.js";
import type { NimbusApi } from "../../lib/client/transport/api-client.js";
import { createTopic, fastTimings, waitUntil } from "../support/consumer-helpers.js";
import type { ServerHandle } from "../support/server-fixture.js";
import { uniqueName } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

const WAIT_MS = 60_000;

/** Waits (bounded) until the trace of `msgId` has `n` records, and answers them. */
async function traceOf(api: NimbusApi, msgId: string, n: number): Promise<TraceRecord[]> {
  let records: TraceRecord[] = [];
  await waitUntil(
    async () => {
      records = await queryMessageTrace(api, msgId);
      return records.length >= n;
    },
    `the trace's ${n} records of ${msgId}`,
    WAIT_MS,
    100,
  );
  return records;
}

export function traceClientCases(ctx: ServerHandle, api: () => NimbusApi): void {
  it("traces a TransactionProducer's check-back answers: EndTransaction for COMMIT and ROLLBACK, none for UNKNOW", async () => {
    const topic = uniqueName("TracedTx");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const group = uniqueName("PTraceTx");
    const producer = new TransactionProducer({
      producerGroup: group,
      endpoints: ctx.server.url,
      heartbeatBrokerInterval: 50,
      sendMsgTimeout: TEST_TIMEOUT_MS,
      enableMsgTrace: true,
    });
    /** Each message's check answers, by body: the first check of "commit" says UNKNOW, the next COMMIT. */
    const checks = new Map<string, number>();
    const answers: Record<string, LocalTransactionState[]> = {
      commit: ["UNKNOW", "COMMIT_MESSAGE"],
      rollback: ["ROLLBACK_MESSAGE"],
    };
    producer.setTransactionListener({
      executeLocalTransaction: () => "UNKNOW",
      checkLocalTransaction: (msg: MessageExt) => {
        const body = msg.bodyText;
        const n = checks.get(body) ?? 0;
        checks.set(body, n + 1);
        const script = answers[body] ?? [];
        return script[Math.min(n, script.length - 1)] ?? "UNKNOW";
      },
    });
    await producer.start();
    const committed = await producer.sendMessageInTransaction(new Message(topic, "TagTx", "order-7", "commit"));
    const rolledBack = await producer.sendMessageInTransaction(new Message(topic, "TagTx", "order-8", "rollback"));
    assert.deepEqual([committed.localTransactionState, rolledBack.localTransactionState], ["UNKNOW", "UNKNOW"]);
    await waitUntil(
      async () =>
        (await api().transactionInfo(committed.transactionId, group)).state === "COMMITTED" &&
        (await api().transactionInfo(rolledBack.transactionId, group)).state === "ROLLED_BACK",
      "both transactions ended by check-backs",
      WAIT_MS,
    );
    assert.ok((checks.get("commit") ?? 0) >= 2, "the commit was answered UNKNOW once first");
    await producer.shutdown(); // flushes the trace records

    // Every COMMIT or ROLLBACK answer writes an EndTransaction record. On a loaded machine the broker may ask
    // again before an answer has ended the transaction; the second answer is traced too.
    const commitAnswers = (checks.get("commit") ?? 0) - 1;
    const rollbackAnswers = checks.get("rollback") ?? 0;
    const ofCommit = await traceOf(api(), committed.msgId, 1 + commitAnswers);
    const ofRollback = await traceOf(api(), rolledBack.msgId, 1 + rollbackAnswers);
    const shape = (records: TraceRecord[]) =>
      records.map((r) => [r.traceType, r.groupName, r.transactionState ?? "-", r.fromTransactionCheck ?? "-"]);
    // One EndTransaction per COMMIT or ROLLBACK answer: the UNKNOW answer wrote none.
    const ends = (state: string, n: number) => Array.from({ length: n }, () => ["EndTransaction", group, state, true]);
    assert.deepEqual(shape(ofCommit), [["Pub", group, "-", "-"], ...ends("COMMIT_MESSAGE", commitAnswers)]);
    assert.deepEqual(shape(ofRollback), [["Pub", group, "-", "-"], ...ends("ROLLBACK_MESSAGE", rollbackAnswers)]);
    const end = ofCommit[1];
    assert.deepEqual(
      [end?.msgId, end?.transactionId, end?.topic, end?.tags, end?.keys, end?.clientId, end?.success],
      [committed.msgId, committed.transactionId, topic, "TagTx", ["order-7"], producer.clientId, true],
    );
  });

  it("traces what a LitePullConsumer's poll returns: SubBefore and SubAfter (CONSUME_SUCCESS) per message", async () => {
    const topic = uniqueName("TracedLite");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const producer = new Producer({
      producerGroup: uniqueName("PTraceLite"),
      endpoints: ctx.server.url,
      enableMsgTrace: true,
    });
    await producer.start();
    const sent = [
      await producer.send(new Message(topic, "TagL", "k-1", "one")),
      await producer.send(new Message(topic, "TagL", "k-2", "two")),
    ];
    await producer.shutdown();
    const group = uniqueName("gTraceLite");
    const consumer = new LitePullConsumer({
      consumerGroup: group,
      endpoints: ctx.server.url,
      consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
      enableMsgTrace: true,
      ...fastTimings(),
    });
    consumer.subscribe(topic, "*");
    await consumer.start();
    const polled: MessageExt[] = [];
    try {
      await waitUntil(
        async () => {
          polled.push(...(await consumer.poll(200)));
          return polled.length >= 2;
        },
        "2 messages polled",
        WAIT_MS,
      );
    } finally {
      await consumer.shutdown(); // flushes the trace records
    }
    for (const [i, s] of sent.entries()) {
      const records = await traceOf(api(), s.msgId, 3);
      assert.deepEqual(
        records.map((r) => `${r.traceType} ${r.groupName} ${r.success} ${r.consumeStatus ?? "-"}`),
        [`Pub ${producer.producerGroup} true -`, `SubBefore ${group} true -`, `SubAfter ${group} true CONSUME_SUCCESS`],
      );
      const [, before, after] = records;
      assert.equal(before?.requestId, after?.requestId, "one poll: one request id");
      assert.deepEqual(
        [after?.clientId, after?.topic, after?.keys, after?.reconsumeTimes, after?.queueOffset, after?.costTime],
        [consumer.clientId, topic, [`k-${i + 1}`], 0, s.queueOffset, 0],
      );
    }
  });
}
