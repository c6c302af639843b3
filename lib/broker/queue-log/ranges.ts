/**
 * @module Offset ranges of a queue: reserved from the queue's counter item by one atomic `ADD` (no
 * conflicts, however many writers), and sealed by an empty item when their writer never filled them.
 * See docs/queue-log.md ("Append: reserve, then fill").
 */
import { ErrorCode, isNimbusError, NimbusError } from "../../core/errors.js";
import { ConditionFailedError, type Item, type Table } from "../../storage/table.js";
import type { IndexView } from "./layout.js";
import { layoutKeys } from "./layout.js";
import { LayoutMovedError } from "./layouts.js";
import { COUNTER_ATTRIBUTE, end, fromItem, type IndexEntry, toItem } from "./queue-index.js";

/**
 * Reserves `count` consecutive offsets of the queue and answers the first: one `ADD` on the counter item,
 * which DynamoDB serializes, so concurrent writers get disjoint ranges and none of them conflicts. The
 * first reservation of a queue creates its counter (`initCounter`). A reply lost after the add landed
 * loses that range: nobody fills it, and a reader seals it after the lease.
 */
export async function reserveRange(view: IndexView, count: number): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      // Condition `attribute_exists(pk)`: the counter was created on purpose from the queue's index (never
      // implicitly at 0 by the add, which would hand out offsets the queue already holds).
      const next = await view.table.add(view.counter, COUNTER_ATTRIBUTE, count, { condition: { exists: true } });
      return next - count;
    } catch (err) {
      if (!(err instanceof ConditionFailedError) || attempt > 0) throw err;
      await initCounter(view);
    }
  }
}

/**
 * `reserveRange` and the fill's conditional put of `item(start)` in ONE transaction and one commit, on a store that
 * has them (`Table.addThenPut`: the embedded store; the caller checks). Answers the range's first offset, or
 * undefined when an item already held it: a reader's seal (a range reserved inside the put's own transaction is
 * never taken for a dead writer's, so only a seal of the old chain rule's era can be there); the add stays, as
 * the two steps would leave it, and the caller reserves again. Any other item there is an error.
 */
export async function reserveAndPut(
  view: IndexView,
  count: number,
  item: (start: number) => Item,
): Promise<number | undefined> {
  const addThenPut = view.table.addThenPut?.bind(view.table);
  if (addThenPut === undefined) throw new Error("reserveAndPut: the store has no addThenPut");
  for (let attempt = 0; ; attempt++) {
    // Conditions: the add's `attribute_exists(pk)` (the counter was created on purpose, as in reserveRange) and
    // the put's `attribute_not_exists(pk)` (never two batches at one offset), checked inside one transaction.
    const done = await addThenPut({
      counter: view.counter,
      attribute: COUNTER_ATTRIBUTE,
      delta: count,
      item: (added) => item(added - count),
    });
    if (done.outcome === "stored") return done.added - count;
    if (done.outcome === "taken") {
      if (fromItem(done.existing).loc.kind === "sealed") return undefined;
      throw new NimbusError(
        ErrorCode.SYSTEM_ERROR,
        `queue ${view.pk}: offset ${done.added - count}, reserved from its counter, holds another batch (is a writer of the old chain rule still running?)`,
      );
    }
    if (attempt > 0) throw new ConditionFailedError(`queue ${view.pk}: its counter is missing after it was created`);
    await initCounter(view);
  }
}

/**
 * Creates the counter of a queue at the end of its index: 0 for a new queue; for a queue written before
 * counters (by the chain rule: gap-free), the end of its newest batch, with a trimmed marker under its
 * oldest batch when retention had deleted the ones before it (so that the bottom is not taken for an
 * unfilled range). The first initializer wins; the others find the counter there. A one-key view that finds
 * the queue spread (its layout item on the base key) throws `LayoutMovedError`.
 *
 * The counter is read after the index: when it is still absent then, nobody had reserved anything while the
 * index was read (batches of reserved ranges come after the counter), so what was read is all from the chain
 * rule, and a marker under its oldest batch lies in space retention emptied, which no range can cover.
 */
export async function initCounter(view: IndexView): Promise<void> {
  const { table: index, pk } = view;
  const newest = view.spread
    ? await view.newest()
    : (await index.query(pk, { descending: true, limit: 1, consistent: true })).items[0];
  const moved = view.spread ? undefined : layoutKeys(newest);
  if (moved !== undefined) throw new LayoutMovedError(moved);
  const next = newest === undefined ? 0 : end(fromItem(newest));
  if (newest !== undefined) {
    const oldest = fromItem((await view.oldest()) ?? newest);
    if ((await index.get(view.counter, { consistent: true })) !== undefined) return;
    if (oldest.start > 0 && oldest.loc.kind !== "trimmed") {
      const marker: IndexEntry = { start: oldest.start - 1, count: 1, storeTimestamp: 0, loc: { kind: "trimmed" } };
      await createIfAbsent(index, toItem(view.keyOf(marker.start), marker));
    }
  }
  await createIfAbsent(index, { ...view.counter, [COUNTER_ATTRIBUTE]: next });
}

/**
 * Seals offset `offset` of the queue with an empty item and answers what holds the offset now: the seal,
 * or the item that was there first (its writer filled it in time: first writer wins). Only ever called at
 * the end of an item (or the queue's bottom) that is followed by a later item older than the lease, so the
 * offset was reserved longer ago than the lease.
 */
export function sealOffset(view: IndexView, offset: number, now: number): Promise<IndexEntry> {
  return sealRun(view, offset, 1, now);
}

/**
 * Seals `count` offsets from `offset` with one empty item. Only the owner of a reserved range may seal more than
 * one offset at a time (the unused tail of its range: nobody else was handed those offsets); a reader seals one.
 */
export async function sealRun(view: IndexView, offset: number, count: number, now: number): Promise<IndexEntry> {
  const seal: IndexEntry = { start: offset, count, storeTimestamp: now, loc: { kind: "sealed" } };
  try {
    // Condition `attribute_not_exists(pk)` on (queue, sk = offset): a seal never replaces a batch. A writer
    // whose fill lands first keeps its batch; one that comes later finds the seal and reserves again.
    await view.table.put(toItem(view.keyOf(offset), seal), {
      condition: { exists: false },
      returnExistingOnFailure: true,
    });
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
