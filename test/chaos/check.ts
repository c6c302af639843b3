/**
 * @module The chaos checker: reads every queue of the workload back from offset 0 and holds it against
 * the acks the producers received. It counts acked messages lost (not at their acked offset), offsets
 * assigned twice (two acks for one offset, or an acked offset holding another message), gaps and
 * unreadable ranges, and extra copies by UNIQ_KEY (allowed: client retries after an unknown outcome).
 */
import { BATCH_OBJECT_PREFIX, QUEUE_INDEX_TABLE, queuePk } from "../../lib/broker/queue-log/queue-index.js";
import { QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import type { Storage } from "../../lib/storage/storage.js";
import { type AckReport, CHAOS_BROKER, uniqKey } from "./workload.js";

export interface CheckResult {
  /** Messages acknowledged to the producers. */
  acked: number;
  /** Messages stored (read back), copies included. */
  stored: number;
  lost: number;
  doubleAssigned: number;
  gaps: number;
  /** Offsets sealed empty after their writer died (reserved, never filled): passed by reads, holding no message. */
  sealed: number;
  /** Extra copies of a UNIQ_KEY beyond the first. */
  duplicates: number;
}

/** Reads queues `0..queues-1` of `topic` and checks them against `acks`. */
export async function checkQueues(
  storage: Storage,
  topic: string,
  queues: number,
  acks: readonly AckReport[],
): Promise<CheckResult> {
  // The check runs after every writer stopped, and reads as a consumer would once every reservation's lease is
  // over: a range that a killed writer reserved and never filled is sealed (read as empty), never skipped unread.
  const afterEveryLease = () => Date.now() + 3_600_000;
  const log = new QueueLog(storage, { now: afterEveryLease });
  const holder = new Map<string, string>(); // `${queueId}@${offset}` -> UNIQ_KEY stored there
  const copies = new Map<string, number>();
  let gaps = 0;
  let sealed = 0;
  for (let queueId = 0; queueId < queues; queueId++) {
    const q = { topic, brokerName: CHAOS_BROKER, queueId };
    const { minOffset, maxOffset } = await log.status(q);
    let expected = minOffset;
    let offset = minOffset;
    while (offset < maxOffset) {
      let read: Awaited<ReturnType<QueueLog["read"]>>;
      try {
        read = await log.read(q, offset, { maxMessages: 1024 });
      } catch {
        gaps++; // an unreadable range: a batch whose bytes are gone or corrupt
        break;
      }
      if (read.status !== "FOUND") {
        gaps++;
        break;
      }
      for (const m of read.messages) {
        // Offsets a dead writer reserved are sealed empty (docs/queue-log.md): the read passes them, never skips a message.
        if (m.queueOffset > expected) sealed += m.queueOffset - expected;
        else if (m.queueOffset < expected) gaps++;
        expected = m.queueOffset + 1;
        const key = m.properties.UNIQ_KEY ?? "";
        holder.set(`${queueId}@${m.queueOffset}`, key);
        copies.set(key, (copies.get(key) ?? 0) + 1);
      }
      offset = read.nextBeginOffset;
    }
    if (expected < maxOffset) sealed += maxOffset - expected;
  }

  let acked = 0;
  let lost = 0;
  let doubleAssigned = 0;
  const claimed = new Set<string>();
  for (const ack of acks) {
    for (let k = 0; k < ack.count; k++) {
      acked++;
      const slot = `${ack.queueId}@${ack.queueOffset + k}`;
      if (claimed.has(slot)) doubleAssigned++;
      claimed.add(slot);
      const there = holder.get(slot);
      if (there === undefined) lost++;
      else if (there !== uniqKey(ack.producer, ack.from + k)) doubleAssigned++;
    }
  }
  let stored = 0;
  let duplicates = 0;
  for (const n of copies.values()) {
    stored += n;
    duplicates += n - 1;
  }
  return { acked, stored, lost, doubleAssigned, gaps, sealed, duplicates };
}

/** Batch objects that no index item of the workload's queues names (what killed writers left). */
export async function unownedObjects(storage: Storage, topics: readonly string[], queues: number): Promise<number> {
  const owned = new Set<string>();
  const index = storage.table(QUEUE_INDEX_TABLE);
  for (let n = 0; n < topics.length * queues; n++) {
    const topic = topics[Math.floor(n / queues)] as string;
    const queueId = n % queues;
    const pk = queuePk({ topic, brokerName: CHAOS_BROKER, queueId });
    let startAfter: number | undefined;
    do {
      const page = await index.query(pk, { consistent: true, ...(startAfter === undefined ? {} : { startAfter }) });
      for (const item of page.items) if (typeof item.ok === "string") owned.add(item.ok);
      startAfter = page.lastSk as number | undefined;
    } while (startAfter !== undefined);
  }
  let unowned = 0;
  let continuation: string | undefined;
  do {
    const page = await storage.objects.list(BATCH_OBJECT_PREFIX, continuation === undefined ? {} : { continuation });
    for (const o of page.objects) if (!owned.has(o.key)) unowned++;
    continuation = page.next;
  } while (continuation !== undefined);
  return unowned;
}
