/** @module Shared pieces of the queue-log contract: test messages, concurrent appenders, the chain check. */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import type { QueueRef } from "../../lib/broker/queue-log/queue-index.js";
import { QueueLog, type QueueLogOptions } from "../../lib/broker/queue-log/queue-log.js";
import type { MessageRecord } from "../../lib/core/message.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { OpenFixture, StorageFixture } from "../support/storage-fixture.js";

export function record(body: string | Uint8Array, tags = "TagA"): MessageRecord {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const name = typeof body === "string" ? body : `bin${bytes.byteLength}`;
  return {
    bornTimestamp: Date.now(),
    flag: 0,
    tags,
    keys: [`key-${name}`],
    properties: { UNIQ_KEY: `uniq-${name}` },
    body: bytes,
    reconsumeTimes: 0,
  };
}

export interface AppendedBatch {
  appender: number;
  batch: number;
  queueOffset: number;
  count: number;
}

/** Messages per batch (1..4) and whether the batch is large (every 10th: an object, not inline). */
export function batchShape(appender: number, batch: number): { count: number; large: boolean } {
  return { count: 1 + ((appender * 7 + batch) % 4), large: (appender + batch) % 10 === 0 };
}

/** The body of message `i` of a batch: unique and checkable after read-back. */
export function bodyFor(appender: number, batch: number, i: number): string {
  const id = `${appender}:${batch}:${i}`;
  return batchShape(appender, batch).large ? id + "#".repeat(12_000) : id;
}

/**
 * Appenders each with their own `QueueLog` (their own tail cache, like separate Lambda instances), spread
 * over `storages` (separate clients/connections), appending their batches one after another.
 */
export async function appendConcurrently(
  storages: Storage[],
  q: QueueRef,
  options: { appenders: number; batchesEach: number; appenderIds?: number[] },
): Promise<AppendedBatch[]> {
  const ids = options.appenderIds ?? Array.from({ length: options.appenders }, (_, i) => i);
  const out: AppendedBatch[] = [];
  await Promise.all(
    ids.map(async (appender, n) => {
      // A generous budget: this is about correctness under contention; the production budget (2.5 s) is
      // about answering before the client's timeout, and a slow emulator on a loaded CI machine is no client.
      const log = new QueueLog(storages[n % storages.length] as Storage, { maxAppendMs: 120_000 });
      for (let batch = 0; batch < options.batchesEach; batch++) {
        const { count } = batchShape(appender, batch);
        const messages = Array.from({ length: count }, (_, i) => record(bodyFor(appender, batch, i)));
        const { queueOffset } = await log.append(q, messages);
        out.push({ appender, batch, queueOffset, count });
      }
    }),
  );
  return out;
}

/** Offsets are disjoint and gap-free from 0, and every message reads back exactly once with its bytes. */
export async function assertChainAndReadBack(
  log: QueueLog,
  q: QueueRef,
  batches: AppendedBatch[],
  expectedBatches: number,
): Promise<void> {
  assert.equal(batches.length, expectedBatches);
  const sorted = [...batches].sort((a, b) => a.queueOffset - b.queueOffset);
  const expected = new Map<number, string>();
  let next = 0;
  for (const b of sorted) {
    assert.equal(b.queueOffset, next, `batch ${b.appender}/${b.batch} must start where the previous one ends`);
    for (let i = 0; i < b.count; i++) expected.set(b.queueOffset + i, bodyFor(b.appender, b.batch, i));
    next += b.count;
  }
  const seen = new Map<number, string>();
  let offset = 0;
  for (;;) {
    const got = await log.read(q, offset, { maxMessages: 1024 });
    if (got.status === "NO_NEW_MSG") break;
    assert.equal(got.status, "FOUND");
    for (const m of got.messages) {
      assert.equal(seen.has(m.queueOffset), false, `offset ${m.queueOffset} read twice`);
      seen.set(m.queueOffset, new TextDecoder().decode(m.body));
    }
    offset = got.nextBeginOffset;
  }
  assert.equal(seen.size, next, "every message reads back");
  assert.deepEqual(seen, expected);
}

let queueSeq = 0;

/** A queue no other test uses (`<prefix>_<pid>_<n>` on broker "b", queue 0), so tests never see each other's data. */
export function freshQueue(prefix: string): QueueRef {
  return { topic: `${prefix}_${process.pid}_${++queueSeq}`, brokerName: "b", queueId: 0 };
}

/** Opens a fixture before the enclosing suite's tests and cleans it up after them (call inside `describe`). */
export function suiteFixture(open: OpenFixture): () => StorageFixture {
  let fx: StorageFixture | undefined;
  before(async () => {
    fx = await open();
  });
  after(async () => fx?.cleanup());
  return () => {
    if (!fx) throw new Error("the suite's fixture is not open");
    return fx;
  };
}

/** A writer killed, once `kill` is called, right after its next reservation: a dead writer's range, never filled. */
export function killableWriter(storage: Storage, options: QueueLogOptions): { log: QueueLog; kill: () => void } {
  let dead = false;
  const log = new QueueLog(storage, {
    ...options,
    afterReserve: () => {
      if (dead) throw new Error("killed after reserving");
    },
  });
  return {
    log,
    kill: () => {
      dead = true;
    },
  };
}
