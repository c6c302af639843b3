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
 * property name or an out-of-range number all throw `DATA_CORRUPTED`, saying what and where.
 *
 * Decoded bodies are **views** into the input (plain `Uint8Array`s on the same `ArrayBuffer`, never
 * copies): cheap, but they change if the caller overwrites the input; `body.slice()` to keep one apart.
 * Strings are always copies.
 */
import { crc32c } from "./crc32c.js";
import { ErrorCode, NimbusError } from "./errors.js";
import type { MessageRecord } from "./message.js";

const BATCH_MAGIC = [0x4e, 0x4d, 0x42, 0x54] as const; // "NMBT"
export const BATCH_VERSION = 1;
export const BATCH_HEADER_SIZE = 9;
export const RECORD_OVERHEAD = 34;
const MAX_U16 = 0xffff;
const MAX_U32 = 0xffffffff;
const MAX_I32 = 0x7fffffff;
const TWO_32 = 0x1_0000_0000;

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

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

/** Decodes and checks a whole batch; see the module comment for what throws `DATA_CORRUPTED`. */
export function decodeBatch(bytes: Uint8Array): MessageRecord[] {
  if (!(bytes instanceof Uint8Array)) throw corrupted("batch is not a Uint8Array");
  const len = bytes.length;
  if (len < BATCH_HEADER_SIZE) {
    throw corrupted(`batch of ${len} bytes is shorter than its ${BATCH_HEADER_SIZE}-byte header`);
  }
  for (let i = 0; i < BATCH_MAGIC.length; i++) {
    if (bytes[i] !== BATCH_MAGIC[i]) throw corrupted(`batch has a wrong magic at bytes 0-3: ${hex(bytes, 0, 4)}`);
  }
  if (bytes[4] !== BATCH_VERSION) {
    throw corrupted(`batch version ${bytes[4]} at byte 4 is not one this decoder reads (${BATCH_VERSION})`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, len);
  const count = view.getUint32(5, true);
  if (count > (len - BATCH_HEADER_SIZE) / RECORD_OVERHEAD) {
    throw corrupted(`batch header declares ${count} messages, more than its ${len} bytes can hold`);
  }
  const messages: MessageRecord[] = [];
  let pos = BATCH_HEADER_SIZE;
  for (let i = 0; i < count; i++) {
    const reader = new RecordReader(bytes, view, i, pos);
    messages.push(reader.read());
    pos = reader.recordEnd;
  }
  if (pos !== len) throw corrupted(`batch has ${len - pos} bytes after its last message (${count}), at byte ${pos}`);
  return messages;
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

// ---------------------------------------------------------------------------------------------- decode

function corrupted(message: string): NimbusError {
  return new NimbusError(ErrorCode.DATA_CORRUPTED, message);
}

function hex(bytes: Uint8Array, from: number, to: number): string {
  return Array.from(bytes.subarray(from, to), (b) => b.toString(16).padStart(2, "0")).join(" ");
}

function fieldName(label: string, index: number): string {
  return index < 0 ? label : `${label} ${index}`;
}

/** Reads one record: checks its length and CRC first, then parses its fields within its bounds. */
class RecordReader {
  /** Where the record's CRC starts: the fields must end exactly here. */
  private readonly fieldsEnd: number;
  readonly recordEnd: number;
  private pos: number;
  private readonly bytes: Uint8Array;
  private readonly view: DataView;
  private readonly index: number;
  private readonly start: number;

  constructor(bytes: Uint8Array, view: DataView, index: number, start: number) {
    this.bytes = bytes;
    this.view = view;
    this.index = index;
    this.start = start;
    const left = bytes.length - start;
    if (left < RECORD_OVERHEAD) {
      throw this.fail(`only ${left} bytes are left, less than a record's minimum of ${RECORD_OVERHEAD}`);
    }
    const length = view.getUint32(start, true);
    if (length < RECORD_OVERHEAD) {
      throw this.fail(`record length ${length} is less than the minimum of ${RECORD_OVERHEAD}`);
    }
    if (length > left) throw this.fail(`record length ${length} runs past the end of the batch (${left} bytes left)`);
    this.recordEnd = start + length;
    this.fieldsEnd = this.recordEnd - 4;
    this.pos = start + 4;
  }

  private fail(problem: string): NimbusError {
    return corrupted(`message ${this.index} (record at byte ${this.start}): ${problem}`);
  }

  read(): MessageRecord {
    const { view } = this;
    const stored = view.getUint32(this.fieldsEnd, true);
    const actual = crc32c(this.bytes.subarray(this.start, this.fieldsEnd));
    if (stored !== actual) {
      throw this.fail(`CRC32C mismatch: stored ${stored.toString(16)}, computed ${actual.toString(16)}`);
    }

    // The fixed fields fit: a record is at least RECORD_OVERHEAD bytes.
    const bornTimestamp = view.getInt32(this.pos + 4, true) * TWO_32 + view.getUint32(this.pos, true);
    if (!Number.isSafeInteger(bornTimestamp)) throw this.fail("bornTimestamp is outside the safe integer range");
    const flag = view.getInt32(this.pos + 8, true);
    const reconsumeTimes = view.getInt32(this.pos + 12, true);
    if (reconsumeTimes < 0) throw this.fail(`reconsumeTimes is negative (${reconsumeTimes})`);
    this.pos += 16;

    const tags = this.text("tags");
    const keys: string[] = [];
    for (let k = 0, n = this.u16("key count"); k < n; k++) keys.push(this.text("key", k));
    const properties: Record<string, string> = {};
    for (let p = 0, n = this.u16("property count"); p < n; p++) {
      const name = this.text("property name", p);
      if (Object.hasOwn(properties, name)) throw this.fail(`property ${JSON.stringify(name)} appears twice`);
      const value = this.text("property value", p);
      // Assigning "__proto__" would set the prototype: define it as a plain entry instead.
      if (name === "__proto__") {
        Object.defineProperty(properties, name, { value, enumerable: true, writable: true, configurable: true });
      } else {
        properties[name] = value;
      }
    }
    const bodyLength = this.u32("body length");
    this.need(bodyLength, "body");
    const body = new Uint8Array(this.bytes.buffer, this.bytes.byteOffset + this.pos, bodyLength);
    this.pos += bodyLength;
    if (this.pos !== this.fieldsEnd) {
      throw this.fail(`fields end at byte ${this.pos}, but the record's CRC is at byte ${this.fieldsEnd}`);
    }
    return { bornTimestamp, flag, tags, keys, properties, body, reconsumeTimes };
  }

  /** Throws unless `n` more bytes of fields are left; `label` and `index` name the field in the error. */
  private need(n: number, label: string, index = -1, part = ""): void {
    if (n > this.fieldsEnd - this.pos) {
      const what = fieldName(label, index) + part;
      throw this.fail(`${what} (${n} bytes at byte ${this.pos}) runs past the record's end at byte ${this.fieldsEnd}`);
    }
  }

  private u16(what: string): number {
    this.need(2, what);
    const value = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return value;
  }

  private u32(what: string): number {
    this.need(4, what);
    const value = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return value;
  }

  /** A u16-prefixed UTF-8 string; `label` and `index` (of a key or property) name it in errors. */
  private text(label: string, index = -1): string {
    this.need(2, label, index, " length");
    const n = this.view.getUint16(this.pos, true);
    this.pos += 2;
    if (n === 0) return "";
    this.need(n, label, index);
    const at = this.pos;
    this.pos += n;
    try {
      return utf8.decode(this.bytes.subarray(at, at + n));
    } catch {
      throw this.fail(`${fieldName(label, index)} (${n} bytes at byte ${at}) is not valid UTF-8`);
    }
  }
}
