/**
 * @module Transactions at the service level on a fake clock: what each step costs in storage requests (the
 * counters both adapters share, so these are the AWS requests per transaction that docs/transactions.md
 * quotes), and the check-back rounds: timeout, interval, the freshest live producer, discard after checkMax,
 * and a commit whose deliverer died finished once by the checker.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { queuePk } from "../../lib/broker/queue-log/queue-index.js";
import { keys } from "../../lib/broker/store/tables.js";
import { TAKEOVER_LEASE_MS } from "../../lib/broker/transactions/transaction-checks.js";
import {
  HALF_QUEUES,
  halfQueue,
  PENDING_SHARDS,
  pendingPkOf,
  pendingSk,
} from "../../lib/broker/transactions/transaction-records.js";
import { isNimbusError } from "../../lib/core/errors.js";
import { MessageConst } from "../../lib/core/message.js";
import { diffCounts, type RequestCounts } from "../../lib/storage/request-counter.js";
import { openTestBroker, type TestBroker } from "../support/server-fixture.js";

const body = (s: string) => new TextEncoder().encode(s);
const CONFIG = { transactionTimeoutMs: 6000, transactionCheckIntervalMs: 60_000, transactionCheckMax: 3 };

describe("transactions (service level, fake clock)", () => {
  let t: TestBroker;
  let id = 0;
  beforeEach(async () => {
    t = await openTestBroker({ config: CONFIG });
    await t.broker.topics.upsert("Orders", { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
  });
  afterEach(() => t.close());

  const half = (group = "TxG") =>
    t.broker.transactions.sendHalf({
      producerGroup: group,
      topic: "Orders",
      brokerName: "broker-a",
      queueId: 0,
      message: { body: body("paid"), properties: { [MessageConst.UNIQ_KEY]: `TX${++id}` } },
    });
  const counted = async <T>(run: () => Promise<T>): Promise<{ result: T; used: RequestCounts }> => {
    const before = t.storage.counter.snapshot();
    const result = await run();
    return { result, used: diffCounts(t.storage.counter.snapshot(), before) };
  };
  const rw = (c: RequestCounts) => ({ reads: c.tableReads, writes: c.tableWrites, s3: c.objectPuts + c.objectGets });
  const heartbeat = (clientId: string) =>
    t.broker.clients.heartbeat({ clientId, producerDataSet: [{ groupName: "TxG", transactional: true }] });

  it("costs: a half message 1 read and 4 writes; a commit 4 reads and 5 writes; a rollback 1 read and 2 writes (warm caches)", async () => {
    // Warms the route cache and the tails of the half queues (transactions spread over them by id).
    for (let i = 0; i < 4 * HALF_QUEUES; i++) await half();
    const stored = await counted(() => half());
    assert.deepEqual(
      rw(stored.used),
      { reads: 1, writes: 4, s3: 0 },
      "the transaction's records (a retry?); half queue append (reservation + put), pending entry, half record",
    );
    // The real queue's counter exists from here on (its first append creates it: one read and two writes more).
    await t.broker.queueLog.append({ topic: "Orders", brokerName: "broker-a", queueId: 0 }, [
      { bornTimestamp: 0, flag: 0, tags: "", keys: [], properties: {}, body: body("first"), reconsumeTimes: 0 },
    ]);
    const commit = await counted(() => t.broker.transactions.end("TxG", stored.result.transactionId, "COMMIT_MESSAGE"));
    assert.equal(commit.result.state, "COMMITTED");
    assert.equal(commit.result.queueOffset, 1);
    // Reads: the transaction's records, the real queue's tail, the half message (the half queue's newest item
    // and the message's own). Writes: the end claim, the append (reservation + put: its ids ride in that put,
    // lib/broker/query, no index item of their own), the delivered record, the pending delete.
    assert.deepEqual(rw(commit.used), { reads: 4, writes: 5, s3: 0 });
    const again = await counted(() => t.broker.transactions.end("TxG", stored.result.transactionId, "COMMIT_MESSAGE"));
    assert.deepEqual(rw(again.used), { reads: 1, writes: 0, s3: 0 }, "a repeated end reads and answers");
    const other = await half();
    const rollback = await counted(() => t.broker.transactions.end("TxG", other.transactionId, "ROLLBACK_MESSAGE"));
    assert.equal(rollback.result.state, "ROLLED_BACK");
    assert.deepEqual(rw(rollback.used), { reads: 1, writes: 2, s3: 0 }, "records; end claim and pending delete");
  });

  it("checks after the timeout, every interval, to the freshest live producer; discards after checkMax", async () => {
    const pending = await half();
    await heartbeat("10.0.0.1@old");
    t.clock.advance(1000);
    await heartbeat("10.0.0.2@new");
    t.clock.advance(4000);
    assert.equal((await t.broker.checkTransactions()).checked, 0, "not before the timeout");
    t.clock.advance(1000);
    const first = await counted(() => t.broker.checkTransactions());
    assert.deepEqual({ ...first.result }, { checked: 1, sentToProducers: 1, discarded: 0, recovered: 0, failed: 0 });
    // Reads: due entries (one query per pending shard, shared by every due transaction), the records, the
    // group's producers. Writes: the new pending entry, the check claim, the old entry's delete, the inbox item.
    assert.deepEqual(rw(first.used), { reads: PENDING_SHARDS + 2, writes: 4, s3: 0 });
    assert.deepEqual(await heartbeat("10.0.0.1@old"), [], "the older producer got nothing");
    assert.deepEqual(await heartbeat("10.0.0.2@new"), [
      { transactionId: pending.transactionId, producerGroup: "TxG", checkTimes: 1 },
    ]);
    assert.deepEqual(await heartbeat("10.0.0.2@new"), [], "a check is handed out once");
    assert.equal((await t.broker.checkTransactions()).checked, 0, "not before the interval");
    for (let round = 2; round <= CONFIG.transactionCheckMax; round++) {
      t.clock.advance(CONFIG.transactionCheckIntervalMs);
      assert.equal((await t.broker.checkTransactions()).checked, 1, `round ${round}`);
    }
    t.clock.advance(CONFIG.transactionCheckIntervalMs);
    assert.equal((await t.broker.checkTransactions()).discarded, 1);
    const info = await t.broker.transactions.info("TxG", pending.transactionId);
    assert.deepEqual([info.state, info.checkTimes], ["DISCARDED", CONFIG.transactionCheckMax]);
    const kept = await t.broker.queueLog.read(
      { topic: "TRANS_CHECK_MAX_TIME_TOPIC", brokerName: "broker-a", queueId: 0 },
      0,
    );
    assert.deepEqual(
      kept.messages.map((m) => m.properties[MessageConst.UNIQ_KEY]),
      [pending.transactionId],
    );
    t.clock.advance(CONFIG.transactionCheckIntervalMs);
    assert.deepEqual(
      { ...(await t.broker.checkTransactions()) },
      { checked: 0, sentToProducers: 0, discarded: 0, recovered: 0, failed: 0 },
    );
  });

  it("a commit whose deliverer died after its claim is delivered once by the checker after the lease", async () => {
    const pending = await half();
    const tx = await t.broker.transactions.records("TxG", pending.transactionId);
    // What a deliverer that died right after claiming leaves: the end record, no delivery.
    const table = t.storage.table({ name: "transactions", sortKeyType: "string", ttlAttribute: "expiresAt" });
    await table.put({
      pk: keys.transaction(pending.transactionId),
      sk: "end",
      state: "COMMITTED",
      tailAtClaim: 0,
      claimedAt: t.clock(),
    });
    assert.equal(tx.end, undefined);
    t.clock.advance(CONFIG.transactionTimeoutMs);
    assert.equal((await t.broker.checkTransactions()).recovered, 0, "not within the lease");
    t.clock.advance(TAKEOVER_LEASE_MS);
    assert.equal((await t.broker.checkTransactions()).recovered, 1);
    t.clock.advance(TAKEOVER_LEASE_MS);
    await t.broker.checkTransactions();
    const read = await t.broker.queueLog.read({ topic: "Orders", brokerName: "broker-a", queueId: 0 }, 0);
    assert.deepEqual(
      read.messages.map((m) => m.properties[MessageConst.UNIQ_KEY]),
      [pending.transactionId],
    );
    const info = await t.broker.transactions.info("TxG", pending.transactionId);
    assert.deepEqual([info.state, info.queueOffset], ["COMMITTED", 0]);
  });

  it("a failure between writes never leaves a transaction unchecked", async () => {
    const table = t.storage.table({ name: "transactions", sortKeyType: "string", ttlAttribute: "expiresAt" });
    const pending = await half();
    const id = pending.transactionId;
    // A half-send that died after its pending entry: the retry writes the entry again, stores nothing more.
    const records = await t.broker.transactions.records("TxG", id);
    await t.broker.transactions.dropPending(id, records.pendingSk);
    const retry = await t.broker.transactions.sendHalf({
      producerGroup: "TxG",
      topic: "Orders",
      brokerName: "broker-a",
      queueId: 0,
      message: { body: body("paid"), properties: { [MessageConst.UNIQ_KEY]: id } },
    });
    assert.deepEqual(retry, pending, "the retry answers the half message stored");
    // A check move that died after its new entry and before its claim: a stray entry, dropped, checks go on.
    await table.put({ pk: pendingPkOf(id), sk: pendingSk(t.clock(), id, 1), transactionId: id, producerGroup: "TxG" });
    for (let round = 1; round <= CONFIG.transactionCheckMax; round++) {
      t.clock.advance(CONFIG.transactionCheckIntervalMs);
      await t.broker.checkTransactions();
    }
    t.clock.advance(CONFIG.transactionCheckIntervalMs);
    await t.broker.checkTransactions();
    assert.equal((await t.broker.transactions.info("TxG", id)).state, "DISCARDED", "checked to the end");
  });

  it("a half message gone with retention: commit answers 404 and writes nothing; the checker goes on", async () => {
    const gone = await half();
    const other = await half();
    // What retention leaves: the half message's batch deleted from its half queue.
    const records = await t.broker.transactions.records("TxG", gone.transactionId);
    const index = t.storage.table({ name: "queue-index", sortKeyType: "number" });
    const halfPk = queuePk(halfQueue("broker-a", gone.transactionId));
    await index.delete({ pk: halfPk, sk: Number(records.half.halfOffset) });
    const before = t.storage.counter.snapshot();
    await assert.rejects(t.broker.transactions.end("TxG", gone.transactionId, "COMMIT_MESSAGE"), (err: unknown) =>
      isNimbusError(err, "QUERY_NOT_FOUND"),
    );
    assert.equal(diffCounts(t.storage.counter.snapshot(), before).tableWrites, 0, "nothing written");
    await heartbeat("10.0.0.9@p");
    for (let round = 0; round <= CONFIG.transactionCheckMax + 1; round++) {
      t.clock.advance(CONFIG.transactionCheckIntervalMs);
      const report = await t.broker.checkTransactions();
      assert.equal(report.failed, 0);
    }
    assert.equal((await t.broker.transactions.info("TxG", gone.transactionId)).state, "DISCARDED");
    assert.equal((await t.broker.transactions.info("TxG", other.transactionId)).state, "DISCARDED");
  });

  it("checks go to transactional producers only, each group's to its own inbox (one client id, two groups)", async () => {
    const a = await half("TxA");
    const b = await half("TxB");
    const both = (transactional: boolean) =>
      t.broker.clients.heartbeat({
        clientId: "10.0.0.5@shared",
        producerDataSet: [
          { groupName: "TxA", transactional },
          { groupName: "TxB", transactional },
        ],
      });
    await both(true);
    t.clock.advance(1);
    await t.broker.clients.heartbeat({ clientId: "10.0.0.6@plain", producerDataSet: [{ groupName: "TxA" }] });
    t.clock.advance(CONFIG.transactionTimeoutMs);
    assert.equal((await t.broker.checkTransactions()).sentToProducers, 2, "the fresher plain producer is skipped");
    const checks = await both(true);
    assert.deepEqual(
      checks.map((c) => [c.producerGroup, c.transactionId]).sort(),
      [
        ["TxA", a.transactionId],
        ["TxB", b.transactionId],
      ].sort(),
    );
  });
});
