/**
 * @module A stored record whose CRC and fields have been checked (message-decode.ts makes it), read where it
 * lies: its numbers, and where in the batch's bytes each text field and the body are. `decode()` makes the
 * `MessageRecord` (strings copied, the body a view), once. A door that re-encodes records byte for byte (the
 * remoting door's pull answer) copies the ranges instead: no string is made of ASCII text, and text beyond ASCII
 * only once, to check its UTF-8 when the view is made.
 *
 * Every text range holds valid UTF-8 and no property name appears twice: both were checked when the view was made.
 */
import type { MessageRecord } from "./message.js";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Text of at most this many bytes that is all ASCII (tags, keys, property names and most values) is read a byte
 * at a time: about half the cost of a call into the UTF-8 decoder for such short strings.
 */
const SHORT_TEXT = 64;

/** True when `bytes[from, to)` is all ASCII. */
export function isAscii(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if ((bytes[i] as number) > 0x7f) return false;
  return true;
}

/** The text of `bytes[at, at + n)`, valid UTF-8 (checked when the view was made). */
export function textAt(bytes: Uint8Array, at: number, n: number): string {
  if (n === 0) return "";
  if (n <= SHORT_TEXT && isAscii(bytes, at, at + n)) {
    let text = "";
    for (let i = at; i < at + n; i++) text += String.fromCharCode(bytes[i] as number);
    return text;
  }
  return utf8.decode(bytes.subarray(at, at + n));
}

/** True when `bytes[a, a + n)` and `bytes[b, b + n)` hold the same bytes. */
export function sameBytes(bytes: Uint8Array, a: number, b: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}

/** What message-decode.ts found in a checked record. */
export interface RecordFields {
  bornTimestamp: number;
  flag: number;
  reconsumeTimes: number;
  tagsAt: number;
  tagsLength: number;
  keyRanges: number[];
  propertyRanges: number[];
  bodyAt: number;
  bodyLength: number;
}

/** One checked record of a batch, its fields read where they lie. */
export class RecordView {
  /** The whole batch the record is in: the ranges below are offsets into it. */
  readonly bytes: Uint8Array;
  readonly bornTimestamp: number;
  readonly flag: number;
  readonly reconsumeTimes: number;
  readonly tagsAt: number;
  /** Bytes of the tags; 0 when the message has none. */
  readonly tagsLength: number;
  /** Each key as two numbers: where it starts and its length in bytes. */
  readonly keyRanges: readonly number[];
  /** Each property as four numbers: its name's start and length, its value's start and length. */
  readonly propertyRanges: readonly number[];
  readonly bodyAt: number;
  readonly bodyLength: number;
  #decoded: MessageRecord | undefined;

  constructor(bytes: Uint8Array, fields: RecordFields) {
    this.bytes = bytes;
    this.bornTimestamp = fields.bornTimestamp;
    this.flag = fields.flag;
    this.reconsumeTimes = fields.reconsumeTimes;
    this.tagsAt = fields.tagsAt;
    this.tagsLength = fields.tagsLength;
    this.keyRanges = fields.keyRanges;
    this.propertyRanges = fields.propertyRanges;
    this.bodyAt = fields.bodyAt;
    this.bodyLength = fields.bodyLength;
  }

  /** The body: a view into the batch's bytes, not a copy. */
  get body(): Uint8Array {
    return new Uint8Array(this.bytes.buffer, this.bytes.byteOffset + this.bodyAt, this.bodyLength);
  }

  /** How many keys the message has. */
  get keyCount(): number {
    return this.keyRanges.length / 2;
  }

  /** The message with its strings made, made once (the same object every call). */
  decode(): MessageRecord {
    if (this.#decoded !== undefined) return this.#decoded;
    const { bytes, keyRanges: k, propertyRanges: p } = this;
    const keys: string[] = [];
    for (let i = 0; i < k.length; i += 2) keys.push(textAt(bytes, k[i] as number, k[i + 1] as number));
    const properties: Record<string, string> = {};
    for (let i = 0; i < p.length; i += 4) {
      const name = textAt(bytes, p[i] as number, p[i + 1] as number);
      const value = textAt(bytes, p[i + 2] as number, p[i + 3] as number);
      // Assigning "__proto__" would set the prototype: define it as a plain entry instead.
      if (name === "__proto__") {
        Object.defineProperty(properties, name, { value, enumerable: true, writable: true, configurable: true });
      } else {
        properties[name] = value;
      }
    }
    this.#decoded = {
      bornTimestamp: this.bornTimestamp,
      flag: this.flag,
      tags: textAt(bytes, this.tagsAt, this.tagsLength),
      keys,
      properties,
      body: this.body,
      reconsumeTimes: this.reconsumeTimes,
    };
    return this.#decoded;
  }

  /**
   * About what the message takes in a JSON pull answer (a read's bound, lib/broker/queue-log): base64 body, strings
   * counted by their UTF-8 bytes (never fewer than their UTF-16 code units), and ~300 bytes of names and numbers.
   */
  wireSize(): number {
    let strings = this.tagsLength;
    const { keyRanges: k, propertyRanges: p } = this;
    for (let i = 1; i < k.length; i += 2) strings += (k[i] as number) + 3;
    for (let i = 1; i < p.length; i += 4) strings += (p[i] as number) + (p[i + 2] as number) + 6;
    return Math.ceil(this.bodyLength / 3) * 4 + strings * 2 + 300;
  }
}
