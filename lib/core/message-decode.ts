/**
 * @module Decoding the queue log's binary batches (the format is laid out in message-codec.ts). `decodeBatch`
 * decodes every record, in byte order. `BatchRecords` checks a batch's frame whole when it is made (header, every
 * record's length, the count, nothing after the last record) and decodes a record only when asked, its CRC and
 * fields checked then: a read that hands out part of a batch (a pull that starts inside it, or stops before its end)
 * parses that part only. Anything that does not hold throws `DATA_CORRUPTED`, saying what and where.
 */
import { BATCH_HEADER_SIZE, BATCH_MAGIC, BATCH_VERSION, corrupted, RECORD_OVERHEAD, TWO_32 } from "./batch-format.js";
import { crc32c } from "./crc32c.js";
import type { NimbusError } from "./errors.js";
import type { MessageRecord } from "./message.js";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Text of at most this many bytes that is all ASCII (tags, keys, property names and most values) is read a byte
 * at a time: about half the cost of a call into the UTF-8 decoder for such short strings.
 */
const SHORT_TEXT = 64;

/** The ASCII text of `bytes[from, to)`, or undefined when a byte is not ASCII (then UTF-8 decodes it). */
function asciiText(bytes: Uint8Array, from: number, to: number): string | undefined {
  let text = "";
  for (let i = from; i < to; i++) {
    const c = bytes[i] as number;
    if (c > 0x7f) return undefined;
    text += String.fromCharCode(c);
  }
  return text;
}

/**
 * A batch whose frame has been checked, its records decoded on demand. Made from bytes that are not a batch, it
 * throws; `record(i)` throws for a record whose CRC or fields do not hold.
 */
export class BatchRecords {
  /** How many messages the batch holds. */
  readonly count: number;
  readonly #records: RecordReader[] = [];

  constructor(bytes: Uint8Array) {
    const { view, count } = batchHeader(bytes);
    let pos = BATCH_HEADER_SIZE;
    for (let i = 0; i < count; i++) {
      const record = new RecordReader(bytes, view, i, pos);
      this.#records.push(record);
      pos = record.recordEnd;
    }
    checkBatchEnd(bytes, pos, count);
    this.count = count;
  }

  /** Message `i` of the batch (0 ≤ i < count), decoded now: DATA_CORRUPTED when its CRC or fields do not hold. */
  record(i: number): MessageRecord {
    const record = this.#records[i];
    if (record === undefined) throw new RangeError(`message ${i} is not in a batch of ${this.count}`);
    return record.read();
  }
}

/**
 * Decodes and checks a whole batch, record after record (so the first fault in byte order is the one reported); see
 * the module comment of message-codec.ts for what throws `DATA_CORRUPTED`.
 */
export function decodeBatch(bytes: Uint8Array): MessageRecord[] {
  const { view, count } = batchHeader(bytes);
  const messages: MessageRecord[] = [];
  let pos = BATCH_HEADER_SIZE;
  for (let i = 0; i < count; i++) {
    const record = new RecordReader(bytes, view, i, pos);
    messages.push(record.read());
    pos = record.recordEnd;
  }
  checkBatchEnd(bytes, pos, count);
  return messages;
}

/** A batch's header checked (magic, version, a count its bytes can hold): a view of the batch and its count. */
function batchHeader(bytes: Uint8Array): { view: DataView; count: number } {
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
  return { view, count };
}

/** Throws unless the last record (of `count`) ended at `pos`, the batch's end. */
function checkBatchEnd(bytes: Uint8Array, pos: number, count: number): void {
  const len = bytes.length;
  if (pos !== len) throw corrupted(`batch has ${len - pos} bytes after its last message (${count}), at byte ${pos}`);
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
    this.pos = this.start + 4;
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
    if (n <= SHORT_TEXT) {
      const ascii = asciiText(this.bytes, at, at + n);
      if (ascii !== undefined) return ascii;
    }
    try {
      return utf8.decode(this.bytes.subarray(at, at + n));
    } catch {
      throw this.fail(`${fieldName(label, index)} (${n} bytes at byte ${at}) is not valid UTF-8`);
    }
  }
}
