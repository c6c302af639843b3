/** @module Builders of batch bytes by hand, field by field, for the codec's tests (the layout of docs/queue-log.md). */
import assert from "node:assert/strict";
import { crc32c } from "../../lib/core/crc32c.js";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import type { MessageRecord } from "../../lib/core/message.js";
import { decodeBatch, encodeBatch, encodedSize } from "../../lib/core/message-codec.js";

export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

export function message(overrides: Partial<MessageRecord> = {}): MessageRecord {
  return {
    bornTimestamp: 1_700_000_000_123,
    flag: 0,
    tags: "TagA",
    keys: ["order-1"],
    properties: { UNIQ_KEY: "7F0000010001", WAIT: "true" },
    body: utf8("hello"),
    reconsumeTimes: 0,
    ...overrides,
  };
}

/** A byte writer that follows the layout table of the codec's module comment, independently of the codec. */
export class Bytes {
  readonly out: number[] = [];
  u8(...values: number[]): this {
    this.out.push(...values);
    return this;
  }
  u16(v: number): this {
    return this.u8(v & 0xff, v >>> 8);
  }
  u32(v: number): this {
    return this.u8(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24);
  }
  i64(v: bigint): this {
    for (let k = 0n; k < 8n; k++) this.u8(Number((BigInt.asUintN(64, v) >> (8n * k)) & 0xffn));
    return this;
  }
  text(s: string | Uint8Array): this {
    const bytes = typeof s === "string" ? utf8(s) : s;
    return this.u16(bytes.length).u8(...bytes);
  }
  raw(bytes: Uint8Array): this {
    return this.u8(...bytes);
  }
  bytes(): Uint8Array {
    return Uint8Array.from(this.out);
  }
}

/** A record: its length first and its CRC32C last, around `fields` (everything in between). */
export function record(fields: Bytes): Uint8Array {
  const length = 4 + fields.out.length + 4;
  const body = new Bytes().u32(length).raw(fields.bytes()).bytes();
  return new Bytes().raw(body).u32(crc32c(body)).bytes();
}

export function batch(records: Uint8Array[], count = records.length, version = 1): Uint8Array {
  const b = new Bytes().u8(0x4e, 0x4d, 0x42, 0x54, version).u32(count);
  for (const r of records) b.raw(r);
  return b.bytes();
}

/** The fields of a record for `message()`-like data, as the layout table says. */
export function fields(m: MessageRecord, extra?: (b: Bytes) => void): Bytes {
  const b = new Bytes()
    .i64(BigInt(m.bornTimestamp))
    .u32(m.flag >>> 0)
    .u32(m.reconsumeTimes)
    .text(m.tags);
  b.u16(m.keys.length);
  for (const k of m.keys) b.text(k);
  const entries = Object.entries(m.properties);
  b.u16(entries.length);
  for (const [name, value] of entries) b.text(name).text(value);
  b.u32(m.body.length).raw(m.body);
  extra?.(b);
  return b;
}

export function assertCorrupted(bytes: Uint8Array, pattern?: RegExp, label?: string): void {
  assert.throws(
    () => decodeBatch(bytes),
    (err) => isNimbusError(err, ErrorCode.DATA_CORRUPTED) && (pattern === undefined || pattern.test(err.message)),
    label,
  );
}

export function assertIllegal(messages: unknown[], pattern: RegExp): void {
  const records = messages as MessageRecord[];
  for (const fn of [() => encodeBatch(records), () => encodedSize(records)]) {
    assert.throws(fn, (err) => isNimbusError(err, ErrorCode.MESSAGE_ILLEGAL) && pattern.test(err.message));
  }
}

export function roundTrip(messages: MessageRecord[]): MessageRecord[] {
  const bytes = encodeBatch(messages);
  assert.equal(bytes.length, encodedSize(messages));
  const decoded = decodeBatch(bytes);
  assert.deepStrictEqual(decoded, messages);
  return decoded;
}

/** The fields of a message with nothing in it but its born time. */
export function emptyFields(bornTimestamp: bigint): Bytes {
  return new Bytes().i64(bornTimestamp).u32(0).u32(0).text("").u16(0).u16(0).u32(0);
}
