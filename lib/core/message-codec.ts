/**
 * @module The binary batch format of the queue log: what an index item holds inline or points at in S3.
 * Little-endian throughout.
 *
 * Batch (version 1):
 *
 * | offset | size | field                                                        |
 * | ------ | ---- | ------------------------------------------------------------ |
 * | 0      | 4    | magic `4E 4D 42 54` ("NMBT")                                 |
 * | 4      | 1    | version, 1                                                   |
 * | 5      | 4    | u32 message count                                            |
 * | 9      | ...  | that many records, back to back; nothing after the last one |
 *
 * Record (one per message; strings are UTF-8, each preceded by its u16 byte length):
 *
 * | size      | field                                                                  |
 * | --------- | ---------------------------------------------------------------------- |
 * | 4         | u32 record length: every byte of the record, this field and CRC included |
 * | 8         | i64 bornTimestamp, ms since the epoch (a JS safe integer)             |
 * | 4         | i32 flag                                                               |
 * | 4         | i32 reconsumeTimes, >= 0                                               |
 * | 2 + n     | tags ("" when none)                                                    |
 * | 2         | u16 key count, then per key: 2 + n                                     |
 * | 2         | u16 property count, then per property: name 2 + n, value 2 + n        |
 * | 4 + n     | u32 body length, body bytes                                            |
 * | 4         | u32 CRC32C of every byte of the record before this field              |
 *
 * A record with no tags, keys, properties or body is `RECORD_OVERHEAD` (34) bytes. The record length
 * lets a reader check a record's CRC before it parses the record, and step over records unparsed.
 * Property order is kept (the encoder writes `Object.keys` order). There are no separator characters:
 * tags, keys and properties may hold any well-formed UTF-16 text.
 *
 * Decoding checks everything and never returns what the encoder did not write: a bad magic or version,
 * a truncated batch, a length past the end, a count that does not match the records, bytes after the
 * last record, a CRC mismatch, fields that do not fill their record exactly, invalid UTF-8, a repeated
 * property name or an out-of-range number all throw `DATA_CORRUPTED`, saying what and where. The decoder is in
 * message-decode.ts: `decodeBatch` decodes every record; `BatchRecords` checks the batch's frame (header, lengths,
 * count, end) at once and a record's CRC and fields when that record is read.
 *
 * Decoded bodies are **views** into the input (plain `Uint8Array`s on the same `ArrayBuffer`, never
 * copies): cheap, but they change if the caller overwrites the input; `body.slice()` to keep one apart.
 * Strings are always copies.
 */
import { BATCH_HEADER_SIZE, BATCH_MAGIC, BATCH_VERSION, corrupted, RECORD_OVERHEAD, TWO_32 } from "./batch-format.js";
import { crc32c } from "./crc32c.js";
import { ErrorCode, NimbusError } from "./errors.js";
import type { MessageRecord } from "./message.js";

export { BATCH_HEADER_SIZE, BATCH_VERSION, RECORD_OVERHEAD } from "./batch-format.js";
export { BatchRecords, decodeBatch } from "./message-decode.js";

const MAX_U16 = 0xffff;
const MAX_U32 = 0xffffffff;
const MAX_I32 = 0x7fffffff;

/** The exact size `encodeBatch(messages)` will have. Validates as `encodeBatch` does. */
export function encodedSize(messages: readonly MessageRecord[]): number {
  if (!Array.isArray(messages)) throw new NimbusError(ErrorCode.MESSAGE_ILLEGAL, "messages is not an array");
  let size = BATCH_HEADER_SIZE;
  for (let i = 0; i < messages.length; i++) size += recordSize(messages[i], i);
  return size;
}

/**
 * Encodes `messages` as one batch, in one allocation of the exact size. Throws `MESSAGE_ILLEGAL` (naming
 * the message and field) on a value the format cannot carry.
 *
 * @example
 * const bytes = encodeBatch([{ bornTimestamp: Date.now(), flag: 0, tags: "TagA", keys: ["order-1"],
 *   properties: { UNIQ_KEY: "7F000001..." }, body: new TextEncoder().encode("hi"), reconsumeTimes: 0 }]);
 */
export function encodeBatch(messages: readonly MessageRecord[]): Uint8Array {
  const size = encodedSize(messages);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(BATCH_MAGIC, 0);
  out[4] = BATCH_VERSION;
  view.setUint32(5, messages.length, true);
  let pos = BATCH_HEADER_SIZE;
  for (const m of messages) pos = writeRecord(m, out, view, pos);
  if (pos !== size) {
    throw new NimbusError(ErrorCode.MESSAGE_ILLEGAL, `messages changed while being encoded (${pos} != ${size} bytes)`);
  }
  return out;
}

/**
 * One batch holding the messages of `batches` in order: records are self-contained (length and CRC
 * each), so they are copied as they are under one new header. Each input must be a batch `decodeBatch`
 * accepted; only the headers are looked at here.
 */
export function concatBatches(batches: readonly Uint8Array[]): Uint8Array {
  let size = BATCH_HEADER_SIZE;
  let count = 0;
  for (const batch of batches) {
    if (batch.byteLength < BATCH_HEADER_SIZE || batch[4] !== BATCH_VERSION) throw corrupted("not a batch");
    count += new DataView(batch.buffer, batch.byteOffset, batch.byteLength).getUint32(5, true);
    size += batch.byteLength - BATCH_HEADER_SIZE;
  }
  if (count > MAX_U32) throw new NimbusError(ErrorCode.MESSAGE_ILLEGAL, `${count} messages do not fit one batch`);
  const out = new Uint8Array(size);
  out.set(BATCH_MAGIC, 0);
  out[4] = BATCH_VERSION;
  new DataView(out.buffer).setUint32(5, count, true);
  let pos = BATCH_HEADER_SIZE;
  for (const batch of batches) {
    out.set(batch.subarray(BATCH_HEADER_SIZE), pos);
    pos += batch.byteLength - BATCH_HEADER_SIZE;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------- encode

/** The UTF-8 length of `s`, or -1 if it holds a lone surrogate (which UTF-8 cannot carry). */
function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c < 0xd800 || c > 0xdfff) n += 2;
    else {
      const d = s.charCodeAt(i + 1); // NaN past the end
      if (c > 0xdbff || !(d >= 0xdc00 && d <= 0xdfff)) return -1;
      i++;
      n += 2; // two code units, four bytes
    }
  }
  return n;
}

function illegal(i: number, path: string, problem: string): NimbusError {
  return new NimbusError(ErrorCode.MESSAGE_ILLEGAL, `message[${i}]${path} ${problem}`);
}

/**
 * The UTF-8 byte count of a string field; throws on what the format cannot carry. The field's path is
 * `label` and, if given, `sub` (a key's index, a property's name); built only on failure.
 */
function textBytes(s: unknown, i: number, label: string, sub?: number | string): number {
  const n = typeof s === "string" ? utf8Length(s) : -2;
  if (n >= 0 && n <= MAX_U16) return n;
  const path = sub === undefined ? label : `${label}[${JSON.stringify(sub)}]`;
  if (n === -2) throw illegal(i, path, "is not a string");
  if (n === -1) throw illegal(i, path, "is not well-formed UTF-16 (it has a lone surrogate)");
  throw illegal(i, path, `is ${n} bytes in UTF-8, more than ${MAX_U16}`);
}

function checkInteger(value: unknown, min: number, max: number, i: number, field: string): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw illegal(i, `.${field}`, `must be an integer from ${min} to ${max}, not ${String(value)}`);
  }
}

function recordSize(m: MessageRecord | undefined, i: number): number {
  if (typeof m !== "object" || m === null) throw illegal(i, "", "is not an object");
  checkInteger(m.bornTimestamp, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, i, "bornTimestamp");
  checkInteger(m.flag, -MAX_I32 - 1, MAX_I32, i, "flag");
  checkInteger(m.reconsumeTimes, 0, MAX_I32, i, "reconsumeTimes");
  let size = RECORD_OVERHEAD + textBytes(m.tags, i, ".tags");
  const { keys, properties, body } = m;
  if (!Array.isArray(keys)) throw illegal(i, ".keys", "is not an array");
  if (keys.length > MAX_U16) throw illegal(i, ".keys", `has ${keys.length} keys, more than ${MAX_U16}`);
  for (let k = 0; k < keys.length; k++) size += 2 + textBytes(keys[k], i, ".keys", k);
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) {
    throw illegal(i, ".properties", "is not an object");
  }
  const names = Object.keys(properties);
  if (names.length > MAX_U16) throw illegal(i, ".properties", `has ${names.length} entries, more than ${MAX_U16}`);
  for (const name of names) {
    size += 4 + textBytes(name, i, ".properties name", name) + textBytes(properties[name], i, ".properties", name);
  }
  if (!(body instanceof Uint8Array)) throw illegal(i, ".body", "is not a Uint8Array");
  size += body.length;
  if (size > MAX_U32) throw illegal(i, "", `is ${size} bytes encoded, more than ${MAX_U32}`);
  return size;
}

/** Writes `s` as UTF-8 at `pos` (already checked by `utf8Length`) and returns the end. */
function writeUtf8(s: string, out: Uint8Array, pos: number): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      out[pos++] = c;
    } else if (c < 0x800) {
      out[pos++] = 0xc0 | (c >> 6);
      out[pos++] = 0x80 | (c & 0x3f);
    } else if (c < 0xd800 || c > 0xdfff) {
      out[pos++] = 0xe0 | (c >> 12);
      out[pos++] = 0x80 | ((c >> 6) & 0x3f);
      out[pos++] = 0x80 | (c & 0x3f);
    } else {
      const cp = 0x10000 + ((c - 0xd800) << 10) + (s.charCodeAt(++i) - 0xdc00);
      out[pos++] = 0xf0 | (cp >> 18);
      out[pos++] = 0x80 | ((cp >> 12) & 0x3f);
      out[pos++] = 0x80 | ((cp >> 6) & 0x3f);
      out[pos++] = 0x80 | (cp & 0x3f);
    }
  }
  return pos;
}

/** A u16 length and the UTF-8 bytes; the length is written after the bytes, from where they ended. */
function writeText(s: string, out: Uint8Array, view: DataView, pos: number): number {
  const end = writeUtf8(s, out, pos + 2);
  view.setUint16(pos, end - pos - 2, true);
  return end;
}

function writeRecord(m: MessageRecord, out: Uint8Array, view: DataView, start: number): number {
  let pos = start + 4; // the record length goes in last
  const high = Math.floor(m.bornTimestamp / TWO_32);
  view.setUint32(pos, m.bornTimestamp - high * TWO_32, true);
  view.setInt32(pos + 4, high, true);
  view.setInt32(pos + 8, m.flag, true);
  view.setInt32(pos + 12, m.reconsumeTimes, true);
  pos = writeText(m.tags, out, view, pos + 16);
  view.setUint16(pos, m.keys.length, true);
  pos += 2;
  for (const key of m.keys) pos = writeText(key, out, view, pos);
  const names = Object.keys(m.properties);
  view.setUint16(pos, names.length, true);
  pos += 2;
  for (const name of names) {
    pos = writeText(name, out, view, pos);
    pos = writeText(m.properties[name]!, out, view, pos);
  }
  view.setUint32(pos, m.body.length, true);
  out.set(m.body, pos + 4);
  pos += 4 + m.body.length;
  view.setUint32(start, pos + 4 - start, true);
  view.setUint32(pos, crc32c(out.subarray(start, pos)), true);
  return pos + 4;
}
