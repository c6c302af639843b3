/**
 * @module Offset ranges of a queue: reserved from the queue's counter item by one atomic `ADD` (no
 * conflicts, however many writers), and sealed by an empty item when their writer never filled them.
 * See docs/queue-log.md ("Append: reserve, then fill").
 */
import { isNimbusError } from "../../core/errors.js";
import { ConditionFailedError, type Item, type Table } from "../../storage/table.js";
import { COUNTER_ATTRIBUTE, counterKey, end, fromItem, type IndexEntry, toItem } from "./queue-index.js";

/**
 * Reserves `count` consecutive offsets of queue `pk` and answers the first: one `ADD` on the counter item,
 * which DynamoDB serializes, so concurrent writers get disjoint ranges and none of them conflicts. The
 * first reservation of a queue creates its counter (`initCounter`). A reply lost after the add landed
 * loses that range: nobody fills it, and a reader seals it after the lease.
 */
export async function reserveRange(index: Table, pk: string, count: number): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      // Condition `attribute_exists(pk)`: the counter was created on purpose from the queue's index (never
      // implicitly at 0 by the add, which would hand out offsets the queue already holds).
      const next = await index.add(counterKey(pk), COUNTER_ATTRIBUTE, count, { condition: { exists: true } });
      return next - count;
    } catch (err) {
      if (!(err instanceof ConditionFailedError) || attempt > 0) throw err;
      await initCounter(index, pk);
    }
  }
}

/**
 * Creates the counter of a queue at the end of its index: 0 for a new queue; for a queue written before
 * counters (by the chain rule: gap-free), the end of its newest batch, with a trimmed marker under its
 * oldest batch when retention had deleted the ones before it (so that the bottom is not taken for an
 * unfilled range). The first initializer wins; the others find the counter there.
 *
 * The counter is read after the index: when it is still absent then, nobody had reserved anything while the
 * index was read (batches of reserved ranges come after the counter), so what was read is all from the chain
 * rule, and a marker under its oldest batch lies in space retention emptied, which no range can cover.
 */
export async function initCounter(index: Table, pk: string): Promise<void> {
  const newest = (await index.query(pk, { descending: true, limit: 1, consistent: true })).items[0];
  const next = newest === undefined ? 0 : end(fromItem(newest));
  if (newest !== undefined) {
    const oldest = fromItem((await index.query(pk, { limit: 1, consistent: true })).items[0] ?? newest);
    if ((await index.get(counterKey(pk), { consistent: true })) !== undefined) return;
    if (oldest.start > 0 && oldest.loc.kind !== "trimmed") {
      const marker: IndexEntry = { start: oldest.start - 1, count: 1, storeTimestamp: 0, loc: { kind: "trimmed" } };
      await createIfAbsent(index, toItem(pk, marker));
    }
  }
  await createIfAbsent(index, { ...counterKey(pk), [COUNTER_ATTRIBUTE]: next });
}

/**
 * Seals offset `offset` of queue `pk` with an empty item and answers what holds the offset now: the seal,
 * or the item that was there first (its writer filled it in time: first writer wins). Only ever called at
 * the end of an item (or the queue's bottom) that is followed by a later item older than the lease, so the
 * offset was reserved longer ago than the lease.
 */
export async function sealOffset(index: Table, pk: string, offset: number, now: number): Promise<IndexEntry> {
  const seal: IndexEntry = { start: offset, count: 1, storeTimestamp: now, loc: { kind: "sealed" } };
  try {
    // Condition `attribute_not_exists(pk)` on (queue, sk = offset): a seal never replaces a batch. A writer
    // whose fill lands first keeps its batch; one that comes later finds the seal and reserves again.
    await index.put(toItem(pk, seal), { condition: { exists: false }, returnExistingOnFailure: true });
    return seal;
  } catch (err) {
    if (err instanceof ConditionFailedError && err.existing !== undefined) return fromItem(err.existing);
    throw err;
  }
}

/** Creates `item` unless one is stored under its key; an unknown outcome is settled by reading the key. */
async function createIfAbsent(index: Table, item: Item): Promise<void> {
  try {
    // Condition `attribute_not_exists(pk)`: of concurrent initializers, only the first one's item is stored.
    await index.put(item, { condition: { exists: false } });
  } catch (err) {
    if (err instanceof ConditionFailedError) return;
    if (isNimbusError(err) && err.retryable && (await index.get(item, { consistent: true })) !== undefined) return;
    throw err;
  }
}
