/**
 * Unit tests of offset accounting: the process queue's offset to commit (the lowest offset not yet
 * consumed), the concurrent consume service's effect on it (success, RECONSUME_LATER redelivery, ackIndex,
 * giving up), the remote store (commits only what changed, one read per topic) and the local file store
 * (round trip, atomic write with a backup).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { ConsumeMessageConcurrentlyService } from "../../lib/client/consumer/consume-concurrently.js";
import type { ConsumeConcurrentlyStatus } from "../../lib/client/consumer/consumer-options.js";
import { LocalFileOffsetStore, RemoteBrokerOffsetStore } from "../../lib/client/consumer/offset-store.js";
import { ProcessQueue } from "../../lib/client/consumer/process-queue.js";
import { type MessageExt, toMessageExt } from "../../lib/client/message.js";
import type { NimbusApi, OffsetEntry } from "../../lib/client/transport/index.js";
import { MessageQueue } from "../../lib/core/message-queue.js";
import { waitUntil } from "../support/consumer-helpers.js";

const MQ = new MessageQueue("T", "broker-a", 0);

function msg(queueOffset: number, mq = MQ): MessageExt {
  return toMessageExt({
    msgId: `m${queueOffset}`,
    topic: mq.topic,
    brokerName: mq.brokerName,
    queueId: mq.queueId,
    queueOffset,
    tags: "",
    keys: [],
    properties: {},
    body: new TextEncoder().encode(`body-${queueOffset}`),
    flag: 0,
    bornTimestamp: 0,
    storeTimestamp: 0,
    reconsumeTimes: 0,
  });
}

describe("ProcessQueue", () => {
  it("answers the lowest offset not yet consumed, then one past the highest when all are consumed", () => {
    const pq = new ProcessQueue();
    const msgs = [10, 11, 12, 13].map((o) => msg(o));
    assert.equal(pq.removeMessages([]), -1, "nothing cached: nothing to commit");
    assert.equal(pq.putMessages(msgs), 4);
    assert.equal(pq.maxSpan, 3);
    assert.equal(pq.removeMessages([msgs[2]!, msgs[1]!]), 10, "offset 10 is still being consumed");
    assert.equal(pq.removeMessages([msgs[0]!]), 13);
    assert.equal(pq.removeMessages([msgs[3]!]), 14);
    assert.equal(pq.msgCount, 0);
    assert.equal(pq.msgSize, 0);
  });

  it("ignores messages already cached and keeps offset order after an out-of-order put", () => {
    const pq = new ProcessQueue();
    pq.putMessages([msg(5), msg(6)]);
    assert.equal(pq.putMessages([msg(6), msg(2)]), 1);
    assert.equal(pq.firstOffset(), 2);
    assert.equal(pq.removeMessages([msg(2)]), 5);
  });
});

function consumeHarness(results: ConsumeConcurrentlyStatus[], sendBackFailures?: number) {
  const calls: { offsets: number[]; reconsumeTimes: number[] }[] = [];
  const offsets: number[] = [];
  const errors: string[] = [];
  const sentBack: number[] = [];
  const store = {
    updateOffset: (_mq: MessageQueue, offset: number) => offsets.push(offset),
  } as unknown as RemoteBrokerOffsetStore;
  const service = new ConsumeMessageConcurrentlyService({
    listener: (msgs) => {
      calls.push({ offsets: msgs.map((m) => m.queueOffset), reconsumeTimes: msgs.map((m) => m.reconsumeTimes) });
      return results.shift() ?? "CONSUME_SUCCESS";
    },
    messageModel: "CLUSTERING",
    store,
    consumeMessageBatchMaxSize: 1,
    consumeThreadMax: 1,
    reconsumeDelay: () => 1,
    ...(sendBackFailures === undefined
      ? {}
      : {
          sendBack: async (m: MessageExt) => {
            sentBack.push(m.queueOffset);
            if (sentBack.length <= sendBackFailures) throw new Error("broker unreachable");
          },
        }),
    onError: (_err, what) => errors.push(what),
  });
  return { service, calls, offsets, errors, sentBack };
}

describe("ConsumeMessageConcurrentlyService offsets", () => {
  it("holds the offset at a RECONSUME_LATER message until its redelivery (reconsumeTimes 1) succeeds", async () => {
    const { service, calls, offsets } = consumeHarness(["RECONSUME_LATER"]);
    const pq = new ProcessQueue();
    const msgs = [0, 1, 2].map((o) => msg(o));
    pq.putMessages(msgs);
    service.submitConsumeRequest(msgs, pq, MQ);
    await waitUntil(() => pq.msgCount === 0, "every message consumed");
    assert.deepEqual(
      calls.map((c) => c.offsets[0]),
      [0, 1, 2, 0],
    );
    assert.deepEqual(calls[3]?.reconsumeTimes, [1]);
    assert.deepEqual(offsets, [0, 0, 0, 3], "the offset stays at 0 until message 0 is consumed");
    await service.shutdown(0);
  });

  it("moves the offset past a failed message once the broker took it back", async () => {
    const { service, calls, offsets, sentBack } = consumeHarness(["RECONSUME_LATER"], 0);
    const pq = new ProcessQueue();
    const msgs = [0, 1].map((o) => msg(o));
    pq.putMessages(msgs);
    service.submitConsumeRequest(msgs, pq, MQ);
    await waitUntil(() => pq.msgCount === 0, "every message done");
    assert.deepEqual(sentBack, [0]);
    assert.deepEqual(
      calls.map((c) => c.offsets[0]),
      [0, 1],
      "no local redelivery",
    );
    assert.deepEqual(offsets, [1, 2]);
    await service.shutdown(0);
  });

  it("keeps a message whose send-back fails and redelivers it here until the broker takes it back", async () => {
    const { service, calls, offsets, sentBack } = consumeHarness(
      ["RECONSUME_LATER", "RECONSUME_LATER", "RECONSUME_LATER"],
      2,
    );
    const pq = new ProcessQueue();
    pq.putMessages([msg(7)]);
    service.submitConsumeRequest([msg(7)], pq, MQ);
    await waitUntil(() => pq.msgCount === 0, "message sent back");
    assert.deepEqual(
      calls.map((c) => c.reconsumeTimes[0]),
      [0, 1, 2],
    );
    assert.deepEqual(sentBack, [7, 7, 7], "sent back after each failure; the third send-back succeeded");
    assert.deepEqual(offsets, [7, 7, 8], "the offset moved only when the broker had it");
    await service.shutdown(0);
  });
});

describe("RemoteBrokerOffsetStore", () => {
  function fakeApi(stored: OffsetEntry[]) {
    const commits: OffsetEntry[][] = [];
    let queries = 0;
    const api = {
      async queryOffsets() {
        queries++;
        return stored;
      },
      async commitOffsets(_g: string, _t: string, rows: OffsetEntry[]) {
        commits.push(rows);
      },
    } as unknown as NimbusApi;
    return { api, commits, queries: () => queries };
  }

  it("reads from the broker once per topic, commits only offsets that changed, never moves back with increaseOnly", async () => {
    const fake = fakeApi([{ brokerName: "broker-a", queueId: 0, offset: 5 }]);
    const store = new RemoteBrokerOffsetStore(fake.api, "g");
    const other = new MessageQueue("T", "broker-a", 1);
    const [a, b] = await Promise.all([
      store.readOffset(MQ, "READ_FROM_STORE"),
      store.readOffset(other, "READ_FROM_STORE"),
    ]);
    assert.deepEqual([a, b], [5, -1]);
    assert.equal(fake.queries(), 1);

    await store.persistAll([MQ, other]);
    assert.deepEqual(fake.commits, [], "nothing changed since the read");
    store.updateOffset(MQ, 9, true);
    store.updateOffset(MQ, 7, true);
    assert.equal(await store.readOffset(MQ, "READ_FROM_MEMORY"), 9);
    await store.persistAll([MQ, other]);
    await store.persistAll([MQ, other]);
    assert.deepEqual(fake.commits, [[{ brokerName: "broker-a", queueId: 0, offset: 9 }]]);
    store.removeOffset(MQ);
    assert.equal(await store.readOffset(MQ, "READ_FROM_MEMORY"), -1);
  });
});

describe("LocalFileOffsetStore", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "nimbus-offsets-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("round-trips offsets through offsets.json under <dir>/<clientId>/<group>", async () => {
    const store = new LocalFileOffsetStore(dir, "10.0.0.1@DEFAULT", "g");
    assert.equal(store.storePath, path.join(dir, "10.0.0.1@DEFAULT", "g", "offsets.json"));
    await store.load();
    const b = new MessageQueue("T", "broker-b", 3);
    store.updateOffset(MQ, 12, false);
    store.updateOffset(b, 4, false);
    await store.persistAll([MQ, b]);

    const again = new LocalFileOffsetStore(dir, "10.0.0.1@DEFAULT", "g");
    await again.load();
    assert.equal(await again.readOffset(MQ, "READ_FROM_MEMORY"), 12);
    assert.equal(await again.readOffset(b, "READ_FROM_STORE"), 4);
    assert.equal(await again.readOffset(new MessageQueue("T", "broker-b", 0), "MEMORY_FIRST_THEN_STORE"), -1);
  });

  it("writes atomically (no temp file left), keeps the previous file as .bak and falls back to it", async () => {
    const store = new LocalFileOffsetStore(dir, "c2", "g");
    store.updateOffset(MQ, 1, false);
    await store.persistAll([MQ]);
    store.updateOffset(MQ, 2, false);
    await store.persistAll([MQ]);
    const files = readdirSync(path.dirname(store.storePath)).sort();
    assert.deepEqual(files, ["offsets.json", "offsets.json.bak"]);
    const parsed = JSON.parse(readFileSync(store.storePath, "utf8")) as { offsetTable: { offset: number }[] };
    assert.equal(parsed.offsetTable[0]?.offset, 2);

    writeFileSync(store.storePath, "{ torn");
    const recovered = new LocalFileOffsetStore(dir, "c2", "g");
    await recovered.load();
    assert.equal(await recovered.readOffset(MQ, "READ_FROM_MEMORY"), 1);
  });
});
