/**
 * @module Decoding the queue log's binary batches (the format is laid out in message-codec.ts). `decodeBatch`
 * decodes every record, in byte order. `BatchRecords` checks a batch's frame whole when it is made (header, every
 * record's length, the count, nothing after the last record) and decodes a record only when asked, its CRC and
 * fields checked then: a read that hands out part of a batch (a pull that starts inside it, or stops before its end)
 * parses that part only. Anything that does not hold throws `DATA_CORRUPTED`, saying what and where. A record is
 * checked whole into a `RecordView` (record-view.ts: where its fields lie, no strings made); `decode()` then makes
 * its strings and cannot fail.
 */
import { BATCH_HEADER_SIZE, BATCH_MAGIC, BATCH_VERSION, corrupted, RECORD_OVERHEAD, TWO_32 } from "./batch-format.js";
import { crc32c } from "./crc32c.js";
import type { NimbusError } from "./errors.js";
import type { MessageRecord } from "./message.js";
import { isAscii, type RecordFields, RecordView, sameBytes, textAt } from "./record-view.js";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Up to this many properties a name is compared with those before it; past it, looked up in a set of them. */
const FEW_PROPERTIES = 16;

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
    return this.view(i).decode();
  }

  /**
   * Message `i` of the batch (0 ≤ i < count), checked now (its CRC, its fields' bounds and numbers, its text's
   * UTF-8, its property names unique: DATA_CORRUPTED when one does not hold), its strings not made.
   */
  view(i: number): RecordView {
    const record = this.#records[i];
    if (record === undefined) throw new RangeError(`message ${i} is not in a batch of ${this.count}`);
    return record.check();
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
    messages.push(record.check().decode());
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

  /** The record checked in byte order (the first fault found is the one reported): its view. */
  check(): RecordView {
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

    const tagsLength = this.text("tags");
    const tagsAt = this.pos - tagsLength;
    const keyRanges: number[] = [];
    for (let k = 0, n = this.u16("key count"); k < n; k++) {
      const length = this.text("key", k);
      keyRanges.push(this.pos - length, length);
    }
    const propertyRanges: number[] = [];
    const count = this.u16("property count");
    // Many properties: their names are checked against a set, not each against those before it.
    const names = count > FEW_PROPERTIES ? new Set<string>() : undefined;
    for (let p = 0; p < count; p++) {
      const nameLength = this.text("property name", p);
      const nameAt = this.pos - nameLength;
      this.checkUnique(propertyRanges, names, nameAt, nameLength);
      const valueLength = this.text("property value", p);
      propertyRanges.push(nameAt, nameLength, this.pos - valueLength, valueLength);
    }
    const bodyLength = this.u32("body length");
    this.need(bodyLength, "body");
    const bodyAt = this.pos;
    this.pos += bodyLength;
    if (this.pos !== this.fieldsEnd) {
      throw this.fail(`fields end at byte ${this.pos}, but the record's CRC is at byte ${this.fieldsEnd}`);
    }
    const fields: RecordFields = {
      bornTimestamp,
      flag,
      reconsumeTimes,
      tagsAt,
      tagsLength,
      keyRanges,
      propertyRanges,
      bodyAt,
      bodyLength,
    };
    return new RecordView(this.bytes, fields);
  }

  /**
   * Throws when the property name at `bytes[at, at + n)` is one of those before it: in `names` when given (each
   * name added), else compared byte for byte with each of `ranges`.
   */
  private checkUnique(ranges: readonly number[], names: Set<string> | undefined, at: number, n: number): void {
    let twice = false;
    if (names !== undefined) {
      const name = textAt(this.bytes, at, n);
      twice = names.has(name);
      names.add(name);
    } else {
      for (let i = 0; i < ranges.length && !twice; i += 4) {
        twice = ranges[i + 1] === n && sameBytes(this.bytes, ranges[i] as number, at, n);
      }
    }
    if (twice) throw this.fail(`property ${JSON.stringify(textAt(this.bytes, at, n))} appears twice`);
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

  /**
   * A u16-prefixed UTF-8 string stepped over, its UTF-8 checked: its length in bytes (it ends at `pos`). `label`
   * and `index` (of a key or property) name it in errors.
   */
  private text(label: string, index = -1): number {
    this.need(2, label, index, " length");
    const n = this.view.getUint16(this.pos, true);
    this.pos += 2;
    if (n === 0) return 0;
    this.need(n, label, index);
    const at = this.pos;
    this.pos += n;
    // ASCII is checked byte by byte; other text is decoded to check it (this module is bundled for the browser too,
    // where Node's isUtf8 is not), and its string dropped.
    if (isAscii(this.bytes, at, at + n)) return n;
    try {
      utf8.decode(this.bytes.subarray(at, at + n));
    } catch {
      throw this.fail(`${fieldName(label, index)} (${n} bytes at byte ${at}) is not valid UTF-8`);
    }
    return n;
  }
}
