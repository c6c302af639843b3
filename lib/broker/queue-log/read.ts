/**
 * @module Reading a queue by offset, as RocketMQ's pull does: find the batch that holds the offset, read
 * forward along the chain, fetch payloads (inline, or ranged object reads in parallel), check each batch's frame,
 * decode its records from the offset on (those below it are never parsed), filter, and stop at `maxMessages` (the
 * records after the one it stops at are not parsed either). Filtered-out messages are skipped for good:
 * `nextBeginOffset` moves past them.
 */

import { ErrorCode, isNimbusError, NimbusError } from "../../core/errors.js";
import type { MessageRecord } from "../../core/message.js";
import { BatchRecords } from "../../core/message-codec.js";
import type { RecordView } from "../../core/record-view.js";
import { DEFAULT_PULL_MESSAGES, MAX_PULL_MESSAGES, type PullStatus } from "../../protocol/index.js";
import type { ObjectStore } from "../../storage/object-store.js";
import type { Item } from "../../storage/table.js";
import { chainFrom, findAtOrBefore, followChain, holds, PAGE_ITEMS, takeCovering } from "./chain.js";
import type { AfterPage, IndexView } from "./layout.js";
import { end, fromItem, type IndexEntry } from "./queue-index.js";
import { sealOffset } from "./ranges.js";

export type { PullStatus };

export interface ReadOptions {
  /** At most this many messages (RocketMQ's maxMsgNums). Default 32, at most `MAX_READ_MESSAGES`. */
  maxMessages?: number | undefined;
  /** Keep only the messages this accepts (a tag subscription); the others are skipped for good. */
  filter?: (message: MessageRecord) => boolean;
  /** Stop after examining this many messages even if fewer matched. Default 4096. */
  maxScanMessages?: number;
  /** At most this many bytes of messages as JSON (`RecordView.wireSize`) per read; at least one message is always returned. Default 5.5 MB. */
  maxWireBytes?: number;
}

export interface StoredMessage extends MessageRecord {
  queueOffset: number;
  storeTimestamp: number;
}

/** A stored message as read: its record checked (CRC, fields), its strings not made until asked. */
export interface StoredRecord {
  record: RecordView;
  queueOffset: number;
  storeTimestamp: number;
}

/** A read's answer; its messages are `StoredMessage`s, or `StoredRecord`s from `readRecords`. */
export interface ReadResult<M = StoredMessage> {
  status: PullStatus;
  messages: M[];
  /** Where the next read should start. */
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
}

/** The most messages one read answers: a pull's bound. */
export const MAX_READ_MESSAGES = MAX_PULL_MESSAGES;
/** Under Lambda's 6 MB response limit (6,291,456 bytes) with room for the envelope. */
export const DEFAULT_MAX_WIRE_BYTES = 5_500_000;

/** A record read, its strings made: one object of a fixed shape (a spread copies through a generic path). */
export function storedMessage(stored: StoredRecord): StoredMessage {
  const record = stored.record.decode();
  return {
    bornTimestamp: record.bornTimestamp,
    flag: record.flag,
    tags: record.tags,
    keys: record.keys,
    properties: record.properties,
    body: record.body,
    reconsumeTimes: record.reconsumeTimes,
    queueOffset: stored.queueOffset,
    storeTimestamp: stored.storeTimestamp,
  };
}

/** The most index items one round of queries asks for. */
const MAX_PAGE_ITEMS = 256;

/**
 * Items a forward page asks for: as many as the messages still wanted (a page bounded by `upTo` holds no more
 * items than that: each holds at least one offset), at most 256; a one-key queue's 16 under a filter; a spread
 * queue's at least 16 (one round of K parallel queries instead of one round per 16 items).
 */
function pageItems(view: IndexView, wanted: number): number {
  if (view.spread) return Math.min(MAX_PAGE_ITEMS, Math.max(PAGE_ITEMS, wanted));
  return Number.isFinite(wanted) ? Math.min(MAX_PAGE_ITEMS, Math.max(1, wanted)) : PAGE_ITEMS;
}

export interface ReadContext {
  /** The queue's index, as its layout lays it out. */
  view: IndexView;
  objects: ObjectStore;
  /** Batches stored before this time (ms) may have lost their object to the bucket's lifecycle rule. */
  expiredBefore?: number;
  /** The wall clock, to tell a young batch whose object has not replicated yet. */
  now?: () => number;
  /** On a replica: how long a batch's object may lag its index item (0: never, the default). */
  replicationGraceMs?: number;
  /** The queue's min offset (cached unless `fresh`). */
  minOffset(fresh: boolean): Promise<number>;
  /**
   * Sealing of ranges left unfilled longer than `leaseMs` (wall clock `now`); absent on a replica, which
   * only waits for the master's seals (a seal written to a replica could win over the master's fill when
   * the regions' writes meet: global tables resolve by last writer, not by condition).
   */
  seal?: { leaseMs: number; now: () => number };
  /** An item known to end at the read's offset (the last one a read of this process walked): not asked again. */
  endingAt?: IndexEntry | undefined;
  /**
   * An item known to hold the read's offset past its start (one an earlier read of this process stopped inside):
   * not asked again.
   */
  holding?: IndexEntry | undefined;
  /** Told of the item a read walked last when the read's next offset is its end, or is inside it. */
  walked?: (entry: IndexEntry) => void;
}

/** Refuses an offset or a `maxMessages` a read cannot take (PARAMETER_ILLEGAL); answers `maxMessages`. */
export function checkReadArguments(offset: number, options: ReadOptions): number {
  const maxMessages = options.maxMessages ?? DEFAULT_PULL_MESSAGES;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `queueOffset must be a non-negative integer, got ${offset}`);
  }
  if (!Number.isInteger(maxMessages) || maxMessages < 1 || maxMessages > MAX_READ_MESSAGES) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `maxMsgNums must be 1..${MAX_READ_MESSAGES}`);
  }
  return maxMessages;
}

/** Reads the queue of `ctx.view` from `offset`; `newest` is its newest item, as just read (consistently). */
export async function readQueue(
  ctx: ReadContext,
  newest: Item | undefined,
  offset: number,
  options: ReadOptions,
): Promise<ReadResult<StoredRecord>> {
  const view = ctx.view;
  const pk = view.pk;
  const maxMessages = checkReadArguments(offset, options);
  const maxScan = options.maxScanMessages ?? 4096;
  const maxBytes = options.maxWireBytes ?? DEFAULT_MAX_WIRE_BYTES;

  // One consistent query (one per key of a spread queue) answers an idle poll: the newest batch gives maxOffset.
  if (!newest) {
    return {
      status: offset === 0 ? "NO_NEW_MSG" : "OFFSET_ILLEGAL",
      messages: [],
      nextBeginOffset: 0,
      minOffset: 0,
      maxOffset: 0,
    };
  }
  const tail = fromItem(newest);
  const maxOffset = end(tail);
  if (offset >= maxOffset) {
    const minOffset = await ctx.minOffset(false);
    if (offset === maxOffset)
      return { status: "NO_NEW_MSG", messages: [], nextBeginOffset: offset, minOffset, maxOffset };
    // As RocketMQ's OFFSET_OVERFLOW_BADLY: restart from 0 on a queue that never lost messages, else from the end.
    const nextBeginOffset = minOffset === 0 ? 0 : maxOffset;
    return { status: "OFFSET_ILLEGAL", messages: [], nextBeginOffset, minOffset, maxOffset };
  }

  const messages: StoredRecord[] = [];
  const wanted = (): number => (options.filter ? Number.POSITIVE_INFINITY : maxMessages - messages.length);
  // The index items a walk from `from` needs: on a one-key queue those starting below `from + wanted` (each holds
  // at least one offset); never past the tail read above. Under a filter, and on a spread queue (whose pages
  // already ask each key for its share of what is wanted, and whose tailing polls mostly stand in a live
  // writer's range: the item past it must come with the first round), up to the tail.
  const upToFor = (from: number): number => (view.spread ? tail.start : Math.min(tail.start, from + wanted() - 1));

  // A consumer's offset is mostly where an item starts (the end of what it read last): one query (one per key of
  // a spread queue) then finds that item and the ones after it that the read needs; else the item at or before
  // the offset is read (unless this process's last read stopped inside it: ctx.holding), and the walk goes on with
  // this page (no item starts between the two). A read of one message from a one-key queue needs only that item.
  let chain: IndexEntry[] | undefined;
  let ahead: { page: AfterPage; upTo: number } | undefined;
  // The item after the gap that ends the entries being walked, as the page that gave them showed it: the walk
  // reaches that gap without querying the keys again.
  let shown: IndexEntry | undefined;
  if (offset < tail.start && (view.spread || wanted() > 1)) {
    const upTo = upToFor(offset);
    const page = await view.after(offset - 1, pageItems(view, wanted()), true, upTo);
    const found = chainFrom(page.items, offset);
    if (found.entries.length > 0) {
      chain = found.entries;
      shown = found.after;
    } else ahead = { page, upTo };
  }
  const known = ctx.endingAt !== undefined && end(ctx.endingAt) === offset ? ctx.endingAt : undefined;
  const held = ctx.holding !== undefined && holds(ctx.holding, offset) ? ctx.holding : undefined;
  const below = offset >= tail.start ? tail : (chain?.[0] ?? known ?? held ?? (await findAtOrBefore(view, offset)));
  if (below?.loc.kind === "trimmed" && offset < end(below)) return offsetIllegal(await ctx.minOffset(true));
  const inside = below !== undefined && end(below) > offset;
  let gapStart = offset;
  if (!inside && below !== undefined) {
    // In a reserved range not filled yet, after an item: never below the min offset (retention deletes the oldest
    // items first and leaves a trimmed marker, whose end is the min offset, under the rest).
    gapStart = end(below);
  } else if (!inside) {
    // Not in any item and none before it: below the min offset (retention), or in a range not filled yet.
    const minOffset = await ctx.minOffset(true);
    if (offset < minOffset) return offsetIllegal(minOffset);
    gapStart = minOffset;
  }

  let examined = 0;
  let bytes = 0;
  let seals = 0;
  let nextBeginOffset = offset;
  let entries: IndexEntry[] = inside ? (chain ?? [below]) : [];
  // The item the walk stands on (the last one read), or where it starts when `offset` is in a gap.
  let last: IndexEntry | undefined = inside ? undefined : below;
  for (;;) {
    while (entries.length > 0) {
      const batch = takeCovering(entries, nextBeginOffset, wanted());
      const payloads = await Promise.all(batch.map((e) => batchBytes(ctx, e)));
      for (const [i, entry] of batch.entries()) {
        const batchBytes = payloads[i];
        if (batchBytes === undefined) {
          // No messages here: a sealed range, a trimmed marker, or (past retention) a batch whose object the
          // bucket's lifecycle rule removed (retention never deletes a queue's newest index item): skipped.
          examined += end(entry) - Math.max(nextBeginOffset, entry.start);
          nextBeginOffset = end(entry);
          continue;
        }
        // Its frame checked whole; a record is decoded (its CRC and fields checked) only when the read reaches it.
        const records = new BatchRecords(batchBytes);
        if (records.count !== entry.count) {
          throw new NimbusError(
            ErrorCode.DATA_CORRUPTED,
            `batch ${pk}@${entry.start} holds ${records.count} messages, index says ${entry.count}`,
          );
        }
        for (let j = Math.max(0, nextBeginOffset - entry.start); j < records.count; j++) {
          // Checked now; its strings are made only for a filter (or when the reader asks).
          const record = records.view(j);
          const matches = !options.filter || options.filter(record.decode());
          // The answer must fit a Lambda response (6 MB, bodies travel as base64): stop before a message that
          // would overflow it, but always hand out at least one, so a queue never sticks.
          const size = record.wireSize();
          if (matches && messages.length > 0 && bytes + size > maxBytes) return done(entry);
          examined++;
          nextBeginOffset = entry.start + j + 1;
          if (matches) {
            messages.push({ record, queueOffset: entry.start + j, storeTimestamp: entry.storeTimestamp });
            bytes += size;
          }
          if (messages.length >= maxMessages || examined >= maxScan) return done(entry);
        }
      }
      last = batch[batch.length - 1] as IndexEntry;
      entries = entries.slice(batch.length);
    }
    // Batches appended after we read the tail wait for the next pull, so maxOffset stays true.
    if (last !== undefined && last.start >= tail.start) break;
    const from = last === undefined ? gapStart : end(last);
    // The walk's first page is the one read before it (no item starts between `last`, the item at or before the
    // offset or none, and the offset): taken once. A gap a page showed is reached without querying again.
    const upTo = ahead?.upTo ?? upToFor(from);
    const page =
      shown !== undefined
        ? { entries: [], after: shown }
        : await followChain(view, last?.start ?? -1, from, pageItems(view, wanted()), upTo, ahead?.page);
    ahead = undefined;
    entries = page.entries.filter((e) => e.start <= tail.start);
    shown = entries.length === page.entries.length ? page.after : undefined;
    if (entries.length > 0 || page.after === undefined) {
      if (entries.length === 0) break;
      continue;
    }
    // A reserved range not filled yet at `from`, with a batch after it. Never passed unfilled: wait (stop
    // here; the next pull looks again) until its writer fills it, or seal it once it is older than the lease.
    if (messages.length > 0 || ctx.seal === undefined || seals >= MAX_SEALS_PER_READ) break;
    const sealed = await sealRange(ctx, from, page.after, MAX_SEALS_PER_READ - seals);
    if (sealed === undefined) break;
    seals += sealed.count;
    if (sealed.last !== undefined) {
      nextBeginOffset = Math.max(nextBeginOffset, end(sealed.last));
      last = sealed.last;
    }
    // The writer of the next offset filled it first: its batch is read like any other.
    shown = undefined;
    if (sealed.landed !== undefined) entries = [sealed.landed];
  }
  return done();

  function offsetIllegal(minOffset: number): ReadResult<StoredRecord> {
    return { status: "OFFSET_ILLEGAL", messages: [], nextBeginOffset: minOffset, minOffset, maxOffset };
  }

  /** The answer; `current`: the item the walk stopped in or at the end of, if it stopped in the middle of a walk. */
  async function done(current?: IndexEntry): Promise<ReadResult<StoredRecord>> {
    const minOffset = await ctx.minOffset(false);
    const moved = nextBeginOffset > offset;
    if (current !== undefined && (holds(current, nextBeginOffset) || end(current) === nextBeginOffset))
      ctx.walked?.(current);
    else if (last !== undefined && end(last) === nextBeginOffset) ctx.walked?.(last);
    const status: PullStatus = messages.length > 0 ? "FOUND" : moved ? "NO_MATCHED_MSG" : "NO_NEW_MSG";
    return { status, messages, nextBeginOffset, minOffset, maxOffset };
  }
}

/** The most seals one read writes (a dead writer's batch of n messages leaves n offsets to seal). */
export const MAX_SEALS_PER_READ = 64;

/**
 * Seals the unfilled offsets `[from, after.start)` once they are older than the lease: every one of them was
 * reserved before `after`'s range, and `after` was stamped after its own reservation, so `after`'s store time
 * bounds their age. One conditional put per offset, in order: each seal starts at the end of an item, so it
 * can never land inside another writer's range (docs/queue-log.md, the proof). Undefined while the range is
 * younger than the lease; else how many seals were written, the last seal, and the batch found instead of a
 * seal (its writer filled it first), if any.
 */
async function sealRange(
  ctx: ReadContext,
  from: number,
  after: IndexEntry,
  most: number,
): Promise<{ count: number; last?: IndexEntry; landed?: IndexEntry } | undefined> {
  const seal = ctx.seal;
  if (seal === undefined || seal.now() - after.storeTimestamp < seal.leaseMs) return undefined;
  let count = 0;
  let last: IndexEntry | undefined;
  for (let at = from; at < after.start && count < most; count++) {
    const holder = await sealOffset(ctx.view, at, seal.now());
    if (holder.loc.kind !== "sealed") return { count, ...(last ? { last } : {}), landed: holder };
    last = holder;
    at = end(holder);
  }
  return { count, ...(last ? { last } : {}) };
}

/**
 * How long a batch's object may lag its index item: S3 Replication Time Control replicates 99.99 % of objects
 * within 15 minutes, while DynamoDB global tables replicate items in about a second. A slave cell reading a
 * replica can see the index item of a young batch before its object.
 */
export const OBJECT_REPLICATION_GRACE_MS = 15 * 60_000;

/**
 * The batch's bytes; undefined when its object has expired (older than `ctx.expiredBefore` and gone). On a
 * replica (`ctx.replicationGraceMs`, a slave cell), a young batch's missing object is one that has not
 * replicated here yet: SYSTEM_BUSY, which the client retries, rather than a loss.
 */
export async function batchBytes(ctx: ReadContext, entry: IndexEntry): Promise<Uint8Array | undefined> {
  const loc = entry.loc;
  if (loc.kind === "inline") return loc.bytes;
  if (loc.kind === "sealed" || loc.kind === "trimmed") return undefined;
  try {
    return await ctx.objects.get(loc.objectKey, { offset: loc.byteOffset, length: loc.byteLength });
  } catch (err) {
    if (!isNimbusError(err, ErrorCode.OBJECT_NOT_FOUND)) throw err;
    if (ctx.expiredBefore !== undefined && entry.storeTimestamp < ctx.expiredBefore) return undefined;
    const grace = ctx.replicationGraceMs ?? 0;
    if (grace > 0 && ctx.now !== undefined && ctx.now() - entry.storeTimestamp < grace) {
      throw new NimbusError(
        ErrorCode.SYSTEM_BUSY,
        `the object of the batch at offset ${entry.start} has not replicated here yet: retry`,
        { cause: err },
      );
    }
    throw err;
  }
}
