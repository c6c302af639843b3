/**
 * @module The queue log's contract, run unchanged on every storage adapter: append/read semantics,
 * inline and object batches, pull statuses, retention, request counts, and the chain rule under
 * 20 concurrent appenders.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { QUEUE_INDEX_TABLE, type QueueRef, queuePk } from "../../lib/broker/queue-log/queue-index.js";
import { QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import { OBJECT_REPLICATION_GRACE_MS } from "../../lib/broker/queue-log/read.js";
import { ErrorCode } from "../../lib/core/errors.js";
import type { MessageRecord } from "../../lib/core/message.js";
import { encodeBatch } from "../../lib/core/message-codec.js";
import { diffCounts } from "../../lib/storage/request-counter.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { OpenFixture } from "../support/storage-fixture.js";
import {
  type AppendedBatch,
  appendConcurrently,
  assertChainAndReadBack,
  record,
  suiteFixture,
} from "./queue-log-helpers.js";

let queueSeq = 0;
/** A fresh queue per test, so tests never see each other's data. */
function freshQueue(): QueueRef {
  queueSeq++;
  return { topic: `T_${process.pid}_${queueSeq}`, brokerName: "broker-a", queueId: queueSeq % 4 };
}

export function queueLogContract(label: string, open: OpenFixture): void {
  describe(`queue log contract: ${label}`, () => {
    const fixture = suiteFixture(open);
    const storage = (): Storage => fixture().storage;

    it("appends batches at consecutive offsets and reads every message back intact", async () => {
      const log = new QueueLog(storage());
      const q = freshQueue();
      const first = await log.append(q, [record("a0"), record("a1"), record("a2")]);
      const second = await log.append(q, [record("b0")]);
      assert.equal(first.queueOffset, 0);
      assert.equal(second.queueOffset, 3);
      const got = await log.read(q, 0);
      assert.equal(got.status, "FOUND");
      assert.deepEqual(
        got.messages.map((m) => [m.queueOffset, Buffer.from(m.body).toString()]),
        [
          [0, "a0"],
          [1, "a1"],
          [2, "a2"],
          [3, "b0"],
        ],
      );
      assert.equal(got.messages[0]?.tags, "TagA");
      assert.deepEqual(got.messages[0]?.keys, ["key-a0"]);
      assert.equal(got.messages[0]?.properties.UNIQ_KEY, "uniq-a0");
      assert.equal(got.messages[0]?.storeTimestamp, first.storeTimestamp);
      assert.equal(got.nextBeginOffset, 4);
      assert.equal(got.minOffset, 0);
      assert.equal(got.maxOffset, 4);
    });

    it("stores large batches as one object and small ones inline, both readable by byte range", async () => {
      const log = new QueueLog(storage(), { inlineThresholdBytes: 1024 });
      const q = freshQueue();
      const big = Buffer.alloc(5000, 7);
      const before = storage().counter.snapshot();
      await log.append(q, [record("small")]);
      await log.append(q, [record(big), record("after-big")]);
      const used = diffCounts(storage().counter.snapshot(), before);
      assert.equal(used.objectPuts, 1, "only the large batch goes to the object store");
      const got = await log.read(q, 1, { maxMessages: 2 });
      assert.deepEqual(Buffer.from(got.messages[0]?.body ?? []), big);
      assert.equal(Buffer.from(got.messages[1]?.body ?? []).toString(), "after-big");
    });

    it("reads from the middle of a batch, across batches, up to maxMessages", async () => {
      const log = new QueueLog(storage());
      const q = freshQueue();
      for (let b = 0; b < 5; b++)
        await log.append(
          q,
          [0, 1, 2, 3].map((i) => record(`m${b * 4 + i}`)),
        );
      const got = await log.read(q, 6, { maxMessages: 7 });
      assert.deepEqual(
        got.messages.map((m) => m.queueOffset),
        [6, 7, 8, 9, 10, 11, 12],
      );
      assert.deepEqual(
        got.messages.map((m) => Buffer.from(m.body).toString()),
        ["m6", "m7", "m8", "m9", "m10", "m11", "m12"],
      );
      assert.equal(got.nextBeginOffset, 13);
      const rest = await log.read(q, got.nextBeginOffset, { maxMessages: 100 });
      assert.deepEqual(
        rest.messages.map((m) => m.queueOffset),
        [13, 14, 15, 16, 17, 18, 19],
      );
    });

    it("stops a read before the answer outgrows a Lambda response, but always returns one message", async () => {
      const log = new QueueLog(storage());
      const q = freshQueue();
      const big = (fill: number) => record(Buffer.alloc(1536 * 1024, fill));
      await log.append(q, [big(1), big(2), big(3)]);
      const first = await log.read(q, 0, { maxMessages: 32 });
      assert.deepEqual(
        first.messages.map((m) => m.body[0]),
        [1, 2],
        "two 1.5 MiB bodies (2 MB each as base64) fit in 5.5 MB, the third does not",
      );
      assert.equal(first.nextBeginOffset, 2);
      const tiny = await log.read(q, 2, { maxWireBytes: 10 });
      assert.deepEqual(
        tiny.messages.map((m) => m.body[0]),
        [3],
        "one message even over the budget",
      );
      assert.equal(tiny.nextBeginOffset, 3);
    });

    it("answers NO_NEW_MSG at the end, OFFSET_ILLEGAL past it, and on an empty queue", async () => {
      const log = new QueueLog(storage());
      const q = freshQueue();
      const empty = await log.read(q, 0);
      assert.deepEqual(empty, { status: "NO_NEW_MSG", messages: [], nextBeginOffset: 0, minOffset: 0, maxOffset: 0 });
      assert.equal((await log.read(q, 5)).status, "OFFSET_ILLEGAL");
      await log.append(q, [record("x"), record("y")]);
      const atEnd = await log.read(q, 2);
      assert.deepEqual(atEnd, { status: "NO_NEW_MSG", messages: [], nextBeginOffset: 2, minOffset: 0, maxOffset: 2 });
      const past = await log.read(q, 9);
      assert.equal(past.status, "OFFSET_ILLEGAL");
      assert.equal(past.nextBeginOffset, 0, "a queue that never lost messages restarts from 0, as RocketMQ does");
    });

    it("skips filtered messages for good: NO_MATCHED_MSG moves nextBeginOffset past them", async () => {
      const log = new QueueLog(storage());
      const q = freshQueue();
      await log.append(q, [record("1", "TagB"), record("2", "TagB"), record("3", "TagA"), record("4", "TagB")]);
      const onlyA = (m: MessageRecord) => m.tags === "TagA";
      const found = await log.read(q, 0, { filter: onlyA });
      assert.equal(found.status, "FOUND");
      assert.deepEqual(
        found.messages.map((m) => m.queueOffset),
        [2],
      );
      assert.equal(found.nextBeginOffset, 4);
      await log.append(q, [record("5", "TagC")]);
      const none = await log.read(q, 4, { filter: onlyA });
      assert.equal(none.status, "NO_MATCHED_MSG");
      assert.equal(none.messages.length, 0);
      assert.equal(none.nextBeginOffset, 5);
    });

    it("reports min/max offset and last store time", async () => {
      let now = 1_000_000;
      const log = new QueueLog(storage(), { now: () => now });
      const q = freshQueue();
      assert.deepEqual(await log.status(q), { minOffset: 0, maxOffset: 0, lastUpdateTimestamp: 0 });
      await log.append(q, [record("a")]);
      now += 500;
      await log.append(q, [record("b"), record("c")]);
      assert.deepEqual(await log.status(q), { minOffset: 0, maxOffset: 3, lastUpdateTimestamp: 1_000_500 });
    });

    it("retention deletes old batches and their objects, never the newest batch", async () => {
      let now = 10_000_000;
      const log = new QueueLog(storage(), { now: () => now, inlineThresholdBytes: 0 });
      const q = freshQueue();
      for (let i = 0; i < 4; i++) {
        await log.append(q, [record(`old${i}`)]);
        now += 1000;
      }
      now += 3_600_000 * 2;
      await assert.rejects(
        log.trim(q, now - 1000),
        { code: ErrorCode.PARAMETER_ILLEGAL },
        "retention under the minimum",
      );
      const index = storage().table(QUEUE_INDEX_TABLE);
      const items = (await index.query(queuePk(q), { consistent: true })).items;
      const objectKeys = items.map((item) => String(item.ok));
      assert.equal(objectKeys.length, 4);
      const trimmed = await log.trim(q, now - 3_600_000);
      assert.equal(trimmed.deletedBatches, 3, "everything is old, but the newest batch stays");
      assert.equal(trimmed.deletedMessages, 3);
      assert.equal(trimmed.minOffset, 3);
      for (const key of objectKeys.slice(0, 3)) {
        await assert.rejects(storage().objects.get(key), { code: ErrorCode.OBJECT_NOT_FOUND });
      }
      assert.equal((await storage().objects.get(objectKeys[3] as string)).byteLength > 0, true);
      const below = await log.read(q, 0);
      assert.equal(below.status, "OFFSET_ILLEGAL");
      assert.equal(below.nextBeginOffset, 3);
      const appended = await log.append(q, [record("new")]);
      assert.equal(appended.queueOffset, 4, "the chain goes on after retention");
      assert.deepEqual(
        (await log.read(q, 3)).messages.map((m) => Buffer.from(m.body).toString()),
        ["old3", "new"],
      );
    });

    it("on a replica, a young batch whose object is missing has not replicated yet: SYSTEM_BUSY, then the loss", async () => {
      let now = 50_000_000;
      const options = {
        now: () => now,
        inlineThresholdBytes: 0,
        objectReplicationGraceMs: OBJECT_REPLICATION_GRACE_MS,
      };
      const log = new QueueLog(storage(), options);
      const q = freshQueue();
      await log.append(q, [record("lagging")]);
      const [item] = (await storage().table(QUEUE_INDEX_TABLE).query(queuePk(q), { consistent: true })).items;
      // What a slave cell sees while S3 replication lags DynamoDB's: the index item, no object yet.
      await storage().objects.delete([String(item?.ok)]);
      await assert.rejects(log.read(q, 0), { code: ErrorCode.SYSTEM_BUSY }, "retry: not replicated yet");
      now += OBJECT_REPLICATION_GRACE_MS + 1;
      await assert.rejects(log.read(q, 0), { code: ErrorCode.OBJECT_NOT_FOUND }, "past the grace: gone");
    });

    it("reads a batch whose object the lifecycle rule removed after retention as expired, and fails on a young one", async () => {
      let now = 50_000_000;
      const log = new QueueLog(storage(), { now: () => now, inlineThresholdBytes: 0, retentionMs: 3_600_000 });
      const q = freshQueue();
      await log.append(q, [record("old-a"), record("old-b")]);
      const [item] = (await storage().table(QUEUE_INDEX_TABLE).query(queuePk(q), { consistent: true })).items;
      await storage().objects.delete([String(item?.ok)]);
      await assert.rejects(
        log.read(q, 0),
        { code: ErrorCode.OBJECT_NOT_FOUND },
        "a young batch must not lose its object",
      );
      now += 3_600_000 + 1;
      const expired = await log.read(q, 0);
      assert.equal(expired.status, "NO_MATCHED_MSG");
      assert.equal(expired.nextBeginOffset, 2, "the consumer moves past the expired messages");
      await log.append(q, [record("new")]);
      assert.deepEqual(
        (await log.read(q, 0)).messages.map((m) => m.queueOffset),
        [2],
      );
    });

    it("costs one reservation and one conditional put per batch (plus one object put above the threshold)", async () => {
      const log = new QueueLog(storage(), { inlineThresholdBytes: 1024 });
      const q = freshQueue();
      const c0 = storage().counter.snapshot();
      await log.append(q, [record("first")]);
      const c1 = storage().counter.snapshot();
      await log.append(q, [record("second")]);
      const c2 = storage().counter.snapshot();
      await log.append(q, [record(Buffer.alloc(2000))]);
      const c3 = storage().counter.snapshot();
      assert.deepEqual(
        pick(diffCounts(c1, c0)),
        { tableReads: 1, tableWrites: 4, objectPuts: 0 },
        "a new queue: a failed add, its index read, the counter created, then add + put",
      );
      assert.deepEqual(pick(diffCounts(c2, c1)), { tableReads: 0, tableWrites: 2, objectPuts: 0 }, "inline");
      assert.deepEqual(pick(diffCounts(c3, c2)), { tableReads: 0, tableWrites: 2, objectPuts: 1 }, "object");
      const fresh = new QueueLog(storage());
      const c4 = storage().counter.snapshot();
      await fresh.append(q, [record("cold")]);
      assert.deepEqual(
        pick(diffCounts(storage().counter.snapshot(), c4)),
        { tableReads: 0, tableWrites: 2, objectPuts: 0 },
        "a cold instance (a new Lambda container) reads nothing before it writes",
      );
      const units = diffCounts(c2, c1).writeUnits;
      assert.ok(units <= 3, `${units} write units for a small append`);
      await log.read(q, 0, { maxMessages: 1 }); // warms the min-offset cache, as a consumer's first pull does
      const r0 = storage().counter.snapshot();
      await log.read(q, 4);
      assert.deepEqual(
        pick(diffCounts(storage().counter.snapshot(), r0)),
        { tableReads: 1, tableWrites: 0, objectPuts: 0 },
        "a warm idle poll is one query",
      );
    });

    it("refuses bad input and writes nothing", async () => {
      const log = new QueueLog(storage());
      const q = freshQueue();
      await assert.rejects(log.appendEncoded(q, new Uint8Array(8), 0), { code: ErrorCode.MESSAGE_ILLEGAL });
      await assert.rejects(log.read(q, -1), { code: ErrorCode.PARAMETER_ILLEGAL });
      await assert.rejects(log.read(q, 0, { maxMessages: 0 }), { code: ErrorCode.PARAMETER_ILLEGAL });
      assert.deepEqual(await log.status(q), { minOffset: 0, maxOffset: 0, lastUpdateTimestamp: 0 });
    });

    it("detects a corrupt stored batch instead of returning garbage", async () => {
      const log = new QueueLog(storage());
      const q = freshQueue();
      await log.append(q, [record("fine")]);
      await storage()
        .table(QUEUE_INDEX_TABLE)
        .put({ pk: queuePk(q), sk: 1, n: 1, t: 1, d: new Uint8Array([1, 2, 3, 4, 5]) });
      await assert.rejects(log.read(q, 1), { code: ErrorCode.DATA_CORRUPTED });
    });

    it("parses a batch's records only as far as a read goes: a bad CRC past it is found by the read that reaches it", async () => {
      const log = new QueueLog(storage());
      const q = freshQueue();
      await log.append(q, [record("fine")]);
      const bytes = encodeBatch([record("c1"), record("c2"), record("c3")]);
      // The last byte of the third record's body (its CRC32C follows): that record no longer checks.
      bytes[bytes.length - 5] = (bytes[bytes.length - 5] as number) ^ 0xff;
      await storage()
        .table(QUEUE_INDEX_TABLE)
        .put({ pk: queuePk(q), sk: 1, n: 3, t: 1, d: bytes });
      const head = await log.read(q, 1, { maxMessages: 2 });
      assert.deepEqual(
        head.messages.map((m) => new TextDecoder().decode(m.body)),
        ["c1", "c2"],
      );
      assert.equal(head.nextBeginOffset, 3);
      await assert.rejects(log.read(q, 2), { code: ErrorCode.DATA_CORRUPTED });
      await assert.rejects(log.read(q, 3), { code: ErrorCode.DATA_CORRUPTED });
    });

    it("20 concurrent appenders x 50 batches: offsets disjoint and gap-free, every message read back once", async () => {
      const q = freshQueue();
      const storages = [storage(), await fixture().reopen(), await fixture().reopen()];
      const batches: AppendedBatch[] = await appendConcurrently(storages, q, { appenders: 20, batchesEach: 50 });
      await assertChainAndReadBack(new QueueLog(storage()), q, batches, 20 * 50);
      for (const s of storages.slice(1)) await s.close();
    });
  });
}

function pick(c: ReturnType<typeof diffCounts>) {
  return { tableReads: c.tableReads, tableWrites: c.tableWrites, objectPuts: c.objectPuts };
}
