/**
 * @module A pull answer's body made from the stored records' bytes: RocketMQ's stored-message encoding
 * (`MessageDecoder.decodes`, wire-message.ts) with each record's property names, values, tags, keys and body copied
 * from where they lie in its batch, no string made. The properties string is the one `encodeStoredMessages` writes
 * for the decoded message: the record's properties in order, TAGS and KEYS in their place when it holds them (with
 * the record's tags and keys), else last. The order is the record's: `encodeBatch` stores properties in
 * `Object.keys` order (names that read as integers first), the order the string encoder meets them in too.
 */
import { crc32 } from "node:zlib";
import { physicalOffsetHigh } from "../core/offset-message-id.js";
import type { RecordView } from "../core/record-view.js";
import { FIXED_BEFORE_BODY, type StoredEncoding, writeStoredHead } from "./wire-message.js";

/** A record read from a queue, at its offset (lib/broker's `StoredRecord`). */
export interface QueueRecord {
  record: RecordView;
  queueOffset: number;
  storeTimestamp: number;
}

const NAME_VALUE = 0x01;
const SEPARATOR = 0x02;
const KEY_SEPARATOR = 0x20;
const TAGS = Uint8Array.from([0x54, 0x41, 0x47, 0x53]);
const KEYS = Uint8Array.from([0x4b, 0x45, 0x59, 0x53]);
/** Ranges up to this many bytes are copied a byte at a time: cheaper than making a subarray to `set`. */
const SHORT_COPY = 48;

/** True when `bytes[at, at + n)` is `name`. */
function isName(bytes: Uint8Array, at: number, n: number, name: Uint8Array): boolean {
  if (n !== name.length) return false;
  for (let i = 0; i < n; i++) if (bytes[at + i] !== name[i]) return false;
  return true;
}

function copy(out: Buffer, to: number, from: Uint8Array, at: number, n: number): number {
  if (n > SHORT_COPY) out.set(from.subarray(at, at + n), to);
  else for (let i = 0; i < n; i++) out[to + i] = from[at + i] as number;
  return to + n;
}

/** Bytes of the record's keys joined by RocketMQ's key separator. */
function keysLength(r: RecordView): number {
  const k = r.keyRanges;
  let n = k.length / 2 - 1;
  for (let i = 1; i < k.length; i += 2) n += k[i] as number;
  return n;
}

function writeKeys(out: Buffer, to: number, r: RecordView): number {
  const k = r.keyRanges;
  for (let i = 0; i < k.length; i += 2) {
    if (i > 0) out[to++] = KEY_SEPARATOR;
    to = copy(out, to, r.bytes, k[i] as number, k[i + 1] as number);
  }
  return to;
}

/**
 * The record's wire properties string, in bytes: written at `to` when `out` is given, else only measured. Answers
 * its length (measuring) or where it ends (writing).
 */
function wireProperties(r: RecordView, out?: Buffer, to = 0): number {
  const { bytes, propertyRanges: p } = r;
  let tags = r.tagsLength > 0;
  let keys = r.keyRanges.length > 0;
  const start = to;
  for (let i = 0; i < p.length; i += 4) {
    const nameAt = p[i] as number;
    const nameLength = p[i + 1] as number;
    // Every pair has its NAME_VALUE: only the first one has no separator before it.
    if (out === undefined) to += (i === 0 ? 0 : 1) + nameLength + 1;
    else {
      if (i > 0) out[to++] = SEPARATOR;
      to = copy(out, to, bytes, nameAt, nameLength);
      out[to++] = NAME_VALUE;
    }
    if (tags && isName(bytes, nameAt, nameLength, TAGS)) {
      tags = false;
      to = out === undefined ? to + r.tagsLength : copy(out, to, bytes, r.tagsAt, r.tagsLength);
    } else if (keys && isName(bytes, nameAt, nameLength, KEYS)) {
      keys = false;
      to = out === undefined ? to + keysLength(r) : writeKeys(out, to, r);
    } else {
      to = out === undefined ? to + (p[i + 3] as number) : copy(out, to, bytes, p[i + 2] as number, p[i + 3] as number);
    }
  }
  if (tags) {
    if (out === undefined) to += (to === start ? 0 : 1) + 5 + r.tagsLength;
    else {
      if (to > start) out[to++] = SEPARATOR;
      to = copy(out, to, TAGS, 0, 4);
      out[to++] = NAME_VALUE;
      to = copy(out, to, bytes, r.tagsAt, r.tagsLength);
    }
  }
  if (keys) {
    if (out === undefined) to += (to === start ? 0 : 1) + 5 + keysLength(r);
    else {
      if (to > start) out[to++] = SEPARATOR;
      to = copy(out, to, KEYS, 0, 4);
      out[to++] = NAME_VALUE;
      to = writeKeys(out, to, r);
    }
  }
  return out === undefined ? to - start : to;
}

/**
 * Records of one queue back to back in the stored-message encoding, in one buffer: the first `count` of them, those
 * that fit `maxBytes` (the first always, however large). The same bytes `encodeStoredMessages` makes of them decoded.
 */
export function encodeStoredRecords(
  queue: { topic: string; brokerName: string; queueId: number },
  records: readonly QueueRecord[],
  hosts: StoredEncoding,
  maxBytes: number,
): { body: Buffer; count: number } {
  if (records.length === 0) return { body: Buffer.alloc(0), count: 0 };
  const topic = Buffer.from(queue.topic, "utf8");
  const high = physicalOffsetHigh(queue.topic, queue.brokerName, queue.queueId);
  const propertyLengths: number[] = [];
  let bytes = 0;
  for (const { record } of records) {
    const props = wireProperties(record);
    const size = FIXED_BEFORE_BODY + record.bodyLength + 1 + topic.byteLength + 2 + props;
    if (propertyLengths.length > 0 && bytes + size > maxBytes) break;
    propertyLengths.push(props);
    bytes += size;
  }
  const out = Buffer.allocUnsafe(bytes);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let at = 0;
  for (const [i, props] of propertyLengths.entries()) {
    const { record: r, queueOffset, storeTimestamp } = records[i] as QueueRecord;
    const body = r.bytes.subarray(r.bodyAt, r.bodyAt + r.bodyLength);
    at = writeStoredHead(
      view,
      at,
      {
        size: FIXED_BEFORE_BODY + r.bodyLength + 1 + topic.byteLength + 2 + props,
        bodyCrc: crc32(body),
        queueId: queue.queueId,
        flag: r.flag,
        queueOffset,
        high,
        bornTimestamp: r.bornTimestamp,
        storeTimestamp,
        reconsumeTimes: r.reconsumeTimes,
        bodyLength: r.bodyLength,
      },
      hosts,
    );
    out.set(body, at);
    at += r.bodyLength;
    at = out.writeUInt8(topic.byteLength, at);
    at += topic.copy(out, at);
    at = out.writeUInt16BE(props, at);
    at = wireProperties(r, out, at);
  }
  return { body: out, count: propertyLengths.length };
}
