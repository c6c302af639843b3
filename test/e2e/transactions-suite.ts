/**
 * @module E2E cases of transactional messages, run on both storage modes: the SDK's TransactionProducer
 * (commit, rollback, UNKNOW settled by a check-back either way), half messages invisible until commit, ends
 * that are idempotent and deliver once under concurrency, check-backs only to the group's producers, checks
 * that go on while no producer is alive and end in TRANS_CHECK_MAX_TIME_TOPIC, and refused input that writes
 * nothing. Timings are short (checks every 200 ms); waits are conditions with generous deadlines.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { HALF_QUEUES } from "../../lib/broker/transactions/transaction-records.js";
import { Message, type MessageExt } from "../../lib/client/message.js";
import {
  LocalTransactionState,
  type TransactionListener,
  TransactionProducer,
} from "../../lib/client/producer/transaction-producer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import type { HeartbeatResponse } from "../../lib/client/transport/index.js";
import type { NimbusConfigInput } from "../../lib/config/nimbus-config.js";
import { MessageConst } from "../../lib/core/message.js";
import { RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, RMQ_SYS_TRANS_HALF_TOPIC } from "../../lib/core/names.js";
import { waitUntil } from "../support/consumer-helpers.js";
import { b64, expectError, ok, writesNothing } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

/**
 * Checks 300 ms after a half message is stored, then every 200 ms. So many checks that no test depends on
 * answering within a number of rounds; the discard test has a server of its own with 3.
 */
export const FAST_CHECKS = { transactionTimeoutMs: 300, transactionCheckIntervalMs: 200, transactionCheckMax: 1000 };
const FEW_CHECKS = { ...FAST_CHECKS, transactionCheckMax: 3 };

type State = LocalTransactionState;

/** A listener whose answers the test sets, recording what it was asked. */
export class ScriptedListener implements TransactionListener {
  executed: string[] = [];
  checked: MessageExt[] = [];
  constructor(
    public onExecute: State | (() => never),
    public onCheck: State = LocalTransactionState.UNKNOW,
  ) {}
  executeLocalTransaction(msg: Message): State {
    this.executed.push(msg.msgId ?? "");
    if (typeof this.onExecute === "function") return this.onExecute();
    return this.onExecute;
  }
  async checkLocalTransaction(msg: MessageExt): Promise<State> {
    this.checked.push(msg);
    return this.onCheck;
  }
}

/** A TransactionProducer the test hands heartbeat answers to, as its heartbeats would. */
class HeartbeatFedProducer extends TransactionProducer {
  feed(answer: HeartbeatResponse): void {
    this.handleHeartbeatAnswer(answer);
  }
}

/** A test server with check-back timings, and the helpers of the cases. */
function useTransactionServer(mode: ServerMode, config: NimbusConfigInput) {
  const ctx = useTestServer(mode, config);
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
  const running = new Set<TransactionProducer>();
  const start = async (group: string, listener: TransactionListener) => {
    const p = new TransactionProducer({
      producerGroup: group,
      endpoints: ctx.server.url,
      heartbeatBrokerInterval: 50,
      sendMsgTimeout: TEST_TIMEOUT_MS,
    });
    p.setTransactionListener(listener);
    await p.start();
    running.add(p);
    return p;
  };
  const stop = async (p: TransactionProducer) => {
    running.delete(p);
    await p.shutdown();
  };
  // A failed test leaves no producer running into the next.
  afterEach(async () => {
    await Promise.all([...running].map(stop));
  });
  const topicWithOneQueue = async () => {
    const topic = uniqueName("Tx");
    await api().updateTopic(topic, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
    return topic;
  };
  const delivered = async (topic: string) =>
    (await api().pull({ consumerGroup: "TxReader", topic, brokerName: "broker-a", queueId: 0, queueOffset: 0 }))
      .messages;
  return { ctx, api, start, stop, topicWithOneQueue, delivered };
}

export function transactionCases(mode: ServerMode): void {
  describe("transactional messages", () => {
    const { ctx, api, start, stop, topicWithOneQueue, delivered } = useTransactionServer(mode, FAST_CHECKS);

    it("commit: the message is delivered once, keeps its msgId and properties, carries TRAN_MSG and PGROUP", async () => {
      const topic = await topicWithOneQueue();
      const group = uniqueName("TxG");
      // A check would commit too, should the producer's own end be lost on a loaded machine.
      const p = await start(group, new ScriptedListener("COMMIT_MESSAGE", "COMMIT_MESSAGE"));
      const msg = new Message(topic, "TagA", "key-1", "paid");
      msg.putUserProperty("region", "eu");
      const r = await p.sendMessageInTransaction(msg, "arg");
      assert.equal(r.sendStatus, "SEND_OK");
      assert.equal(r.localTransactionState, "COMMIT_MESSAGE");
      assert.equal(r.transactionId, r.msgId);
      assert.deepEqual({ ...r.messageQueue }, { topic, brokerName: "broker-a", queueId: 0 });
      await waitUntil(async () => (await delivered(topic)).length > 0, "delivered");
      const [m, ...rest] = await delivered(topic);
      assert.equal(rest.length, 0);
      assert.equal(m?.msgId, r.msgId);
      assert.equal(m?.tags, "TagA");
      assert.deepEqual(m?.keys, ["key-1"]);
      assert.equal(new TextDecoder().decode(m?.body), "paid");
      assert.equal(m?.properties.region, "eu");
      assert.equal(m?.properties[MessageConst.TRAN_MSG], "true");
      assert.equal(m?.properties[MessageConst.PGROUP], group);
      assert.equal((await api().transactionInfo(r.transactionId, group)).state, "COMMITTED");
      // Sending the same Message object again is a new transaction, with a new id.
      const again = await p.sendMessageInTransaction(msg, "arg");
      assert.notEqual(again.transactionId, r.transactionId);
      await waitUntil(async () => (await delivered(topic)).length === 2, "the second transaction delivered");
    });

    it("rollback: never delivered; a half message is invisible to pulls, queue status and consumer progress", async () => {
      const topic = await topicWithOneQueue();
      const group = uniqueName("TxG");
      const listener = new ScriptedListener(LocalTransactionState.UNKNOW);
      const p = await start(group, listener);
      await api().commitOffsets("TxReader", topic, [{ brokerName: "broker-a", queueId: 0, offset: 0 }]);
      const r = await p.sendMessageInTransaction(new Message(topic, "pending"));
      assert.equal(r.localTransactionState, "UNKNOW");
      assert.deepEqual(await delivered(topic), []);
      assert.equal((await api().topicStatus(topic))[0]?.maxOffset, 0);
      assert.equal((await api().progress("TxReader", topic))[0]?.diff, 0);
      const ended = await api().endTransaction(r.transactionId, {
        producerGroup: group,
        commitOrRollback: "ROLLBACK_MESSAGE",
      });
      assert.equal(ended.state, "ROLLED_BACK");
      assert.deepEqual(await delivered(topic), []);
      await stop(p);
    });

    it("a listener that throws counts as UNKNOW, and a check-back then commits", async () => {
      const topic = await topicWithOneQueue();
      const group = uniqueName("TxG");
      const listener = new ScriptedListener(() => {
        throw new Error("local transaction failed");
      }, LocalTransactionState.COMMIT_MESSAGE);
      const p = await start(group, listener);
      const r = await p.sendMessageInTransaction(new Message(topic, "later"));
      assert.equal(r.localTransactionState, "UNKNOW");
      await waitUntil(async () => (await delivered(topic)).length === 1, "the check-back committed");
      assert.equal(listener.checked[0]?.msgId, r.msgId);
      assert.equal(listener.checked[0]?.topic, topic);
      assert.equal(new TextDecoder().decode(listener.checked[0]?.body), "later");
      const info = await api().transactionInfo(r.transactionId, group);
      assert.equal(info.state, "COMMITTED");
      assert.ok(info.checkTimes >= 1);
      await stop(p);
    });

    it("UNKNOW then a check-back that rolls back: never delivered", async () => {
      const topic = await topicWithOneQueue();
      const group = uniqueName("TxG");
      const p = await start(group, new ScriptedListener(LocalTransactionState.UNKNOW, "ROLLBACK_MESSAGE"));
      const r = await p.sendMessageInTransaction(new Message(topic, "no"));
      await waitUntil(
        async () => (await api().transactionInfo(r.transactionId, group)).state === "ROLLED_BACK",
        "the check-back rolled back",
      );
      assert.deepEqual(await delivered(topic), []);
      await stop(p);
    });

    it("ends are idempotent: concurrent and repeated ends deliver once, the first end wins", async () => {
      const topic = await topicWithOneQueue();
      const group = uniqueName("TxG");
      const p = await start(group, new ScriptedListener(LocalTransactionState.UNKNOW));
      const r = await p.sendMessageInTransaction(new Message(topic, "once"));
      const end = (state: "COMMIT_MESSAGE" | "ROLLBACK_MESSAGE") =>
        api().endTransaction(r.transactionId, {
          producerGroup: group,
          commitOrRollback: state,
          fromTransactionCheck: true,
        });
      const answers = await Promise.all([end("COMMIT_MESSAGE"), end("COMMIT_MESSAGE"), end("COMMIT_MESSAGE")]);
      for (const a of answers) assert.equal(a.state, "COMMITTED");
      assert.equal((await end("ROLLBACK_MESSAGE")).state, "COMMITTED");
      assert.equal((await end("COMMIT_MESSAGE")).queueOffset, 0);
      assert.equal((await delivered(topic)).length, 1);
      await stop(p);
    });

    it("check-backs go to a live producer of the group only; another group's producer gets none", async () => {
      const topic = await topicWithOneQueue();
      const group = uniqueName("TxG");
      const sender = await start(group, new ScriptedListener(LocalTransactionState.UNKNOW));
      const other = new ScriptedListener(LocalTransactionState.COMMIT_MESSAGE, LocalTransactionState.COMMIT_MESSAGE);
      const otherProducer = await start(uniqueName("OtherG"), other);
      const r = await sender.sendMessageInTransaction(new Message(topic, "mine"));
      await stop(sender);
      const answering = new ScriptedListener(LocalTransactionState.UNKNOW, LocalTransactionState.COMMIT_MESSAGE);
      const answering2 = await start(group, answering);
      await waitUntil(async () => (await delivered(topic)).length === 1, "another producer of the group committed");
      assert.equal(answering.checked[0]?.msgId, r.msgId);
      assert.deepEqual(other.checked, []);
      await Promise.all([stop(otherProducer), stop(answering2)]);
    });

    it("operators see a group's live producers (producerConnection)", async () => {
      const group = uniqueName("TxG");
      const p = await start(group, new ScriptedListener(LocalTransactionState.UNKNOW));
      const [info, ...more] = await api().producerConnection(group);
      assert.equal(more.length, 0);
      assert.equal(info?.clientId, p.clientId);
      assert.equal(info?.language, "TYPESCRIPT");
      assert.match(info?.version ?? "", /^\d+\.\d+\.\d+/);
      assert.equal(info?.clientAddr, p.clientId.split("@")[0]);
      await stop(p);
      assert.deepEqual(await api().producerConnection(group), []);
    });

    it("one producer per group per process: a second start of the group is refused", async () => {
      const group = uniqueName("TxG");
      const first = await start(group, new ScriptedListener(LocalTransactionState.UNKNOW));
      const second = new TransactionProducer({ producerGroup: group, endpoints: ctx.server.url });
      await assert.rejects(second.start(), /producer group\[.*\] has been created before/);
      await stop(first);
      await second.start();
      await second.shutdown();
    });

    it("refused input: 4xx {code, message}, nothing written", async () => {
      const topic = await topicWithOneQueue();
      const readOnly = uniqueName("TxRO");
      await api().updateTopic(readOnly, { readQueueNums: 1, writeQueueNums: 1, perm: 4, brokerNames: ["broker-a"] });
      const group = uniqueName("TxG");
      const halfTo = (t: string, message: unknown, g = group) =>
        ctx.http.post("/transactions", { producerGroup: g, topic: t, message });
      const half = ok(await halfTo(topic, { body: b64("x") })) as { transactionId: string };
      const ended = ok(await halfTo(topic, { body: b64("y") })) as { transactionId: string };
      await api().endTransaction(ended.transactionId, { producerGroup: group, commitOrRollback: "ROLLBACK_MESSAGE" });
      const halfQueues = async () =>
        Promise.all(
          Array.from(
            { length: HALF_QUEUES },
            async (_, queueId) =>
              (
                await ctx.server.server.context.broker.queueLog.status({
                  topic: RMQ_SYS_TRANS_HALF_TOPIC,
                  brokerName: "broker-a",
                  queueId,
                })
              ).maxOffset,
          ),
        );
      const halvesBefore = await halfQueues();
      await writesNothing(ctx.http, [topic, readOnly], async () => {
        const end = (id: string, body: unknown) => ctx.http.post(`/transactions/${id}/end`, body);
        expectError(
          await end("NOPE", { producerGroup: group, commitOrRollback: "COMMIT_MESSAGE" }),
          404,
          "QUERY_NOT_FOUND",
        );
        expectError(
          await end(half.transactionId, { producerGroup: "OtherG", commitOrRollback: "COMMIT_MESSAGE" }),
          404,
          "QUERY_NOT_FOUND",
        );
        for (const state of ["UNKNOW", "COMMIT", "", 1]) {
          expectError(
            await end(half.transactionId, { producerGroup: group, commitOrRollback: state }),
            400,
            "PARAMETER_ILLEGAL",
          );
        }
        expectError(
          await end("bad id!", { producerGroup: group, commitOrRollback: "COMMIT_MESSAGE" }),
          400,
          "PARAMETER_ILLEGAL",
        );
        expectError(await halfTo(readOnly, { body: b64("x") }), 403, "NO_PERMISSION");
        expectError(await halfTo(topic, { body: b64("x"), delayTimeLevel: 3 }), 400, "PARAMETER_ILLEGAL");
        expectError(await halfTo(topic, { body: "" }), 400, "MESSAGE_ILLEGAL");
        expectError(await halfTo(topic, { body: b64("x"), properties: { TRAN_MSG: "true" } }), 400, "MESSAGE_ILLEGAL");
        for (const uniq of ["has space", "dot.id", "é", "x".repeat(129)]) {
          expectError(
            await halfTo(topic, { body: b64("x"), properties: { UNIQ_KEY: uniq } }),
            400,
            "PARAMETER_ILLEGAL",
          );
        }
        for (const immunity of ["0", "-5", "1.5", "soon", String(10 ** 9)]) {
          const props = { UNIQ_KEY: uniqueName("Imm"), CHECK_IMMUNITY_TIME_IN_SECONDS: immunity };
          expectError(await halfTo(topic, { body: b64("x"), properties: props }), 400, "PARAMETER_ILLEGAL");
        }
        const reuse = (id: string, g = group) => halfTo(topic, { body: b64("z"), properties: { UNIQ_KEY: id } }, g);
        expectError(await reuse(half.transactionId, "OtherG"), 400, "PARAMETER_ILLEGAL");
        expectError(await reuse(ended.transactionId), 400, "PARAMETER_ILLEGAL");
        expectError(
          await ctx.http.post("/transactions", { topic, message: { body: b64("x") } }),
          400,
          "PARAMETER_ILLEGAL",
        );
        expectError(await ctx.http.get(`/transactions/${half.transactionId}`), 400, "PARAMETER_ILLEGAL");
      });
      assert.deepEqual(await halfQueues(), halvesBefore, "no half message stored by a refused request");
      assert.equal((await api().transactionInfo(half.transactionId, group)).state, "PENDING");
      // A retry of a pending half message (same id, group and topic) answers the one stored.
      const retried = ok(await halfTo(topic, { body: b64("x"), properties: { UNIQ_KEY: half.transactionId } })) as {
        transactionId: string;
      };
      assert.equal(retried.transactionId, half.transactionId);
      assert.deepEqual(await halfQueues(), halvesBefore, "a retry stores nothing again");
    });
  });

  describe("a producer stopping", () => {
    // No check-back comes from the server within a test: the only check is the one the test hands over.
    const { ctx, api, topicWithOneQueue } = useTransactionServer(mode, { transactionTimeoutMs: 3_600_000 });

    it("takes no check-back from a heartbeat answered after shutdown began: its answer could not be traced", async () => {
      const topic = await topicWithOneQueue();
      const group = uniqueName("TxG");
      const listener = new ScriptedListener(LocalTransactionState.UNKNOW, LocalTransactionState.COMMIT_MESSAGE);
      const p = new HeartbeatFedProducer({ producerGroup: group, endpoints: ctx.server.url, pushChannel: false });
      p.setTransactionListener(listener);
      await p.start();
      const r = await p.sendMessageInTransaction(new Message(topic, "late"));
      const stopping = p.shutdown();
      p.feed({
        code: "SUCCESS",
        transactionChecks: [{ producerGroup: group, transactionId: r.transactionId, checkTimes: 1 }],
      });
      await stopping;
      assert.deepEqual(listener.checked, [], "the listener was not asked");
      assert.equal((await api().transactionInfo(r.transactionId, group)).state, "PENDING");
    });
  });

  describe("transactions without an answer", () => {
    const { api, start, stop, topicWithOneQueue, delivered } = useTransactionServer(mode, FEW_CHECKS);

    it("with no producer alive the checks go on; after transactionCheckMax the message is discarded for operators", async () => {
      const topic = await topicWithOneQueue();
      const group = uniqueName("TxG");
      const p = await start(group, new ScriptedListener(LocalTransactionState.UNKNOW));
      const r = await p.sendMessageInTransaction(new Message(topic, "orphan"));
      await stop(p);
      await waitUntil(
        async () => (await api().transactionInfo(r.transactionId, group)).state === "DISCARDED",
        "discarded after the checks",
      );
      const info = await api().transactionInfo(r.transactionId, group);
      assert.equal(info.checkTimes, FEW_CHECKS.transactionCheckMax);
      assert.deepEqual(await delivered(topic), []);
      const kept = await api().pull({
        consumerGroup: "Operators",
        topic: RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC,
        brokerName: "broker-a",
        queueId: 0,
        queueOffset: 0,
        maxMsgNums: 1024,
      });
      assert.ok(kept.messages.some((m) => m.msgId === r.msgId && new TextDecoder().decode(m.body) === "orphan"));
    });
  });
}
