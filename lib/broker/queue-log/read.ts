/**
 * @module Reading a queue by offset, as RocketMQ's pull does: find the batch that holds the offset, read
 * forward along the chain, fetch payloads (inline, or ranged object reads in parallel), decode, skip what
 * is below the offset, filter, and stop at `maxMessages`. Filtered-out messages are skipped for good:
 * `nextBeginOffset` moves past them.
 */

import { ErrorCode, isNimbusError, NimbusError } from "../../core/errors.js";
import type { MessageRecord } from "../../core/message.js";
import { decodeBatch } from "../../core/message-codec.js";
import { DEFAULT_PULL_MESSAGES, MAX_PULL_MESSAGES, type PullStatus } from "../../protocol/index.js";
import type { ObjectStore } from "../../storage/object-store.js";
import type { Table } from "../../storage/table.js";
import { end, fromItem, type IndexEntry } from "./queue-index.js";

export type { PullStatus };

export interface ReadOptions {
  /** At most this many messages (RocketMQ's maxMsgNums). Default 32, at most `MAX_READ_MESSAGES`. */
  maxMessages?: number | undefined;
  /** Keep only the messages this accepts (a tag subscription); the others are skipped for good. */
  filter?: (message: MessageRecord) => boolean;
  /** Stop after examining this many messages even if fewer matched. Default 4096. */
  maxScanMessages?: number;
  /** At most this many bytes of messages as JSON (`wireSize`) per read; at least one message is always returned. Default 5.5 MB. */
  maxWireBytes?: number;
}

export interface StoredMessage extends MessageRecord {
  queueOffset: number;
  storeTimestamp: number;
}

export interface ReadResult {
  status: PullStatus;
  messages: StoredMessage[];
  /** Where the next read should start. */
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
}

/** The most messages one read answers: a pull's bound. */
export const MAX_READ_MESSAGES = MAX_PULL_MESSAGES;
/** Under Lambda's 6 MB response limit (6,291,456 bytes) with room for the envelope. */
export const DEFAULT_MAX_WIRE_BYTES = 5_500_000;

/** About what a message takes in a JSON pull answer: base64 body, strings, and ~300 bytes of field names and numbers. */
export function wireSize(m: MessageRecord): number {
  let strings = m.tags.length;
  for (const k of m.keys) strings += k.length + 3;
  for (const [k, v] of Object.entries(m.properties)) strings += k.length + v.length + 6;
  return Math.ceil(m.body.byteLength / 3) * 4 + strings * 2 + 300;
}

/** Index items per forward query page. */
const PAGE_ITEMS = 16;

export interface ReadContext {
  index: Table;
  objects: ObjectStore;
  /** Batches stored before this time (ms) may have lost their object to the bucket's lifecycle rule. */
  expiredBefore?: number;
  /** The wall clock, to tell a young batch whose object has not replicated yet. */
  now?: () => number;
  /** On a replica: how long a batch's object may lag its index item (0: never, the default). */
  replicationGraceMs?: number;
  /** The queue's min offset (cached unless `fresh`). */
  minOffset(fresh: boolean): Promise<number>;
}

export async function readQueue(
  ctx: ReadContext,
  pk: string,
  offset: number,
  options: ReadOptions,
): Promise<ReadResult> {
  const maxMessages = options.maxMessages ?? DEFAULT_PULL_MESSAGES;
  const maxScan = options.maxScanMessages ?? 4096;
  const maxBytes = options.maxWireBytes ?? DEFAULT_MAX_WIRE_BYTES;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `queueOffset must be a non-negative integer, got ${offset}`);
  }
  if (!Number.isInteger(maxMessages) || maxMessages < 1 || maxMessages > MAX_READ_MESSAGES) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `maxMsgNums must be 1..${MAX_READ_MESSAGES}`);
  }

  // One consistent query answers an idle poll: the newest batch gives maxOffset.
  const newest = (await ctx.index.query(pk, { descending: true, limit: 1, consistent: true })).items[0];
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

  const holder = offset >= tail.start ? tail : await findHolder(ctx.index, pk, offset);
  if (!holder) {
    const minOffset = await ctx.minOffset(true);
    return { status: "OFFSET_ILLEGAL", messages: [], nextBeginOffset: minOffset, minOffset, maxOffset };
  }

  const messages: StoredMessage[] = [];
  let examined = 0;
  let bytes = 0;
  let nextBeginOffset = offset;
  let entries: IndexEntry[] = [holder];
  while (entries.length > 0) {
    const want = options.filter ? Number.POSITIVE_INFINITY : maxMessages - messages.length;
    const batch = takeCovering(entries, nextBeginOffset, want);
    const payloads = await Promise.all(batch.map((e) => payload(ctx, e)));
    for (const [i, entry] of batch.entries()) {
      const batchBytes = payloads[i];
      if (batchBytes === undefined) {
        // Past retention the bucket's lifecycle rule may have removed the object of a queue's newest batch
        // (retention never deletes that index item): its messages are gone, as expired ones are.
        examined += end(entry) - Math.max(nextBeginOffset, entry.start);
        nextBeginOffset = end(entry);
        continue;
      }
      const records = decodeBatch(batchBytes);
      if (records.length !== entry.count) {
        throw new NimbusError(
          ErrorCode.DATA_CORRUPTED,
          `batch ${pk}@${entry.start} holds ${records.length} messages, index says ${entry.count}`,
        );
      }
      for (let j = Math.max(0, nextBeginOffset - entry.start); j < records.length; j++) {
        const record = records[j] as MessageRecord;
        const matches = !options.filter || options.filter(record);
        // The answer must fit a Lambda response (6 MB, bodies travel as base64): stop before a message that
        // would overflow it, but always hand out at least one, so a queue never sticks.
        const size = wireSize(record);
        if (matches && messages.length > 0 && bytes + size > maxBytes) return done();
        examined++;
        nextBeginOffset = entry.start + j + 1;
        if (matches) {
          messages.push({ ...record, queueOffset: entry.start + j, storeTimestamp: entry.storeTimestamp });
          bytes += size;
        }
        if (messages.length >= maxMessages || examined >= maxScan) return done();
      }
    }
    const last = batch[batch.length - 1] as IndexEntry;
    if (last.start >= tail.start) break;
    const rest = entries.slice(batch.length);
    // Batches appended after we read the tail wait for the next pull, so maxOffset stays true.
    entries = rest.length > 0 ? rest : (await followChain(ctx.index, pk, last)).filter((e) => e.start <= tail.start);
  }
  return done();

  async function done(): Promise<ReadResult> {
    const minOffset = await ctx.minOffset(false);
    const status: PullStatus = messages.length > 0 ? "FOUND" : "NO_MATCHED_MSG";
    return { status, messages, nextBeginOffset, minOffset, maxOffset };
  }
}

/** The batch holding `offset`: the newest item starting at or before it. */
async function findHolder(index: Table, pk: string, offset: number): Promise<IndexEntry | undefined> {
  const page = await index.query(pk, { sk: { lte: offset }, descending: true, limit: 1, consistent: true });
  const item = page.items[0] && fromItem(page.items[0]);
  return item && end(item) > offset ? item : undefined;
}

/** The next items of the chain after `last`, cut at the first gap (a batch not yet visible). */
async function followChain(index: Table, pk: string, last: IndexEntry): Promise<IndexEntry[]> {
  const page = await index.query(pk, { sk: { gt: last.start }, limit: PAGE_ITEMS, consistent: true });
  const out: IndexEntry[] = [];
  let expected = end(last);
  for (const item of page.items) {
    const entry = fromItem(item);
    if (entry.start !== expected) break;
    out.push(entry);
    expected = end(entry);
  }
  return out;
}

/** The leading entries that hold at least `want` messages at or after `from` (all of them if fewer). */
function takeCovering(entries: IndexEntry[], from: number, want: number): IndexEntry[] {
  let have = 0;
  let n = 0;
  while (n < entries.length && have < want) {
    const e = entries[n] as IndexEntry;
    have += end(e) - Math.max(from, e.start);
    n++;
  }
  return entries.slice(0, n);
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
async function payload(ctx: ReadContext, entry: IndexEntry): Promise<Uint8Array | undefined> {
  const loc = entry.loc;
  if (loc.kind === "inline") return loc.bytes;
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
