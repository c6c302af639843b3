import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { crc32c } from "../../lib/core/crc32c.js";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import type { MessageRecord } from "../../lib/core/message.js";
import {
  BATCH_HEADER_SIZE,
  BATCH_VERSION,
  decodeBatch,
  encodeBatch,
  encodedSize,
  RECORD_OVERHEAD,
} from "../../lib/core/message-codec.js";

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

function message(overrides: Partial<MessageRecord> = {}): MessageRecord {
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
class Bytes {
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
function record(fields: Bytes): Uint8Array {
  const length = 4 + fields.out.length + 4;
  const body = new Bytes().u32(length).raw(fields.bytes()).bytes();
  return new Bytes().raw(body).u32(crc32c(body)).bytes();
}

function batch(records: Uint8Array[], count = records.length, version = 1): Uint8Array {
  const b = new Bytes().u8(0x4e, 0x4d, 0x42, 0x54, version).u32(count);
  for (const r of records) b.raw(r);
  return b.bytes();
}

/** The fields of a record for `message()`-like data, as the layout table says. */
function fields(m: MessageRecord, extra?: (b: Bytes) => void): Bytes {
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

function assertCorrupted(bytes: Uint8Array, pattern?: RegExp, label?: string): void {
  assert.throws(
    () => decodeBatch(bytes),
    (err) => isNimbusError(err, ErrorCode.DATA_CORRUPTED) && (pattern === undefined || pattern.test(err.message)),
    label,
  );
}

function assertIllegal(messages: unknown[], pattern: RegExp): void {
  const records = messages as MessageRecord[];
  for (const fn of [() => encodeBatch(records), () => encodedSize(records)]) {
    assert.throws(fn, (err) => isNimbusError(err, ErrorCode.MESSAGE_ILLEGAL) && pattern.test(err.message));
  }
}

function roundTrip(messages: MessageRecord[]): MessageRecord[] {
  const bytes = encodeBatch(messages);
  assert.equal(bytes.length, encodedSize(messages));
  const decoded = decodeBatch(bytes);
  assert.deepStrictEqual(decoded, messages);
  return decoded;
}

describe("message codec: layout", () => {
  it("writes exactly the documented bytes", () => {
    const m = message({ flag: -2, reconsumeTimes: 3, keys: ["k1", "k2"], bornTimestamp: 1_700_000_000_123 });
    const expected = batch([record(fields(m))]);
    assert.deepStrictEqual(encodeBatch([m]), expected);
    assert.deepStrictEqual(decodeBatch(expected), [m]);
  });

  it("has a 9-byte header with magic NMBT and version 1", () => {
    const bytes = encodeBatch([]);
    assert.deepStrictEqual(bytes, Uint8Array.of(0x4e, 0x4d, 0x42, 0x54, 1, 0, 0, 0, 0));
    assert.equal(BATCH_HEADER_SIZE, 9);
    assert.equal(BATCH_VERSION, 1);
  });

  it("an empty message costs RECORD_OVERHEAD bytes", () => {
    const empty = message({ tags: "", keys: [], properties: {}, body: new Uint8Array(0) });
    assert.equal(RECORD_OVERHEAD, 34);
    assert.equal(encodedSize([empty]), BATCH_HEADER_SIZE + RECORD_OVERHEAD);
  });
});

describe("message codec: round trips", () => {
  it("an empty batch", () => {
    assert.deepStrictEqual(roundTrip([]), []);
  });

  it("one message", () => {
    roundTrip([message()]);
  });

  it("1000 messages, each different", () => {
    const messages = Array.from({ length: 1000 }, (_, i) =>
      message({
        bornTimestamp: 1_700_000_000_000 + i,
        flag: i,
        tags: i % 3 === 0 ? "" : `Tag${i % 7}`,
        keys: Array.from({ length: i % 4 }, (_, k) => `key-${i}-${k}`),
        properties: { UNIQ_KEY: `ID${i}`, ...(i % 2 ? { DELAY: String(i % 18) } : {}) },
        body: utf8("x".repeat(i % 300)),
        reconsumeTimes: i % 17,
      }),
    );
    roundTrip(messages);
  });

  it("a 4 MiB body", () => {
    const body = new Uint8Array(4 << 20);
    for (let i = 0; i < body.length; i++) body[i] = (i * 2654435761) >>> 24;
    const [decoded] = roundTrip([message({ body }), message()]);
    assert.equal(decoded!.body.length, 4 << 20);
  });

  it("unicode tags, keys, property names and values", () => {
    roundTrip([
      message({
        tags: "标签-😀",
        keys: ["ключ", "キー", "🔑 with space", "", "\u0000nul\u0001\u0002"],
        properties: {
          名前: "値",
          "ümlaut ß": "€ 𝄞",
          "": "empty name",
          BOM: "\uFEFFleading BOM",
          "\uFFFF": "\u07FF\u0800",
        },
      }),
    ]);
    roundTrip([message({ tags: "\uFEFF" })]); // a leading BOM is kept, not eaten by the decoder
  });

  it("an empty body, no tags, no keys, no properties", () => {
    roundTrip([message({ tags: "", keys: [], properties: {}, body: new Uint8Array(0) })]);
  });

  it("keeps property order, and a property named __proto__ as a plain entry", () => {
    const properties = JSON.parse('{"z":"1","a":"2","__proto__":"3","m":"4"}') as Record<string, string>;
    const [decoded] = roundTrip([message({ properties })]);
    assert.deepEqual(Object.keys(decoded!.properties), ["z", "a", "__proto__", "m"]);
    assert.equal(Object.getPrototypeOf(decoded!.properties), Object.prototype);
  });

  it("the extreme values of every number field and of string lengths", () => {
    roundTrip([
      message({ bornTimestamp: Number.MAX_SAFE_INTEGER, flag: 2 ** 31 - 1, reconsumeTimes: 2 ** 31 - 1 }),
      message({ bornTimestamp: Number.MIN_SAFE_INTEGER, flag: -(2 ** 31), reconsumeTimes: 0 }),
      message({ bornTimestamp: 0 }),
      message({ bornTimestamp: -1 }),
      message({ bornTimestamp: 2 ** 32 }),
      message({ bornTimestamp: 2 ** 32 - 1 }),
      message({ tags: "t".repeat(65535), keys: ["€".repeat(21845)], properties: { p: "😀".repeat(16383) } }),
    ]);
  });

  it("returns bodies as plain Uint8Array views on the input, even from a Buffer at an offset", () => {
    const encoded = encodeBatch([message({ body: utf8("abc") }), message({ body: utf8("defg") })]);
    const host = Buffer.alloc(encoded.length + 10);
    host.set(encoded, 5);
    const input = host.subarray(5, 5 + encoded.length);
    const decoded = decodeBatch(input);
    assert.equal(decoded[1]!.body.constructor, Uint8Array);
    assert.equal(decoded[1]!.body.buffer, host.buffer);
    assert.deepStrictEqual(decoded[1]!.body, utf8("defg"));
    input[input.length - 5] = 0x58; // the last body byte: the view sees the change
    assert.equal(decoded[1]!.body[3], 0x58);
  });

  it("accepts a Buffer as a body", () => {
    const bytes = encodeBatch([message({ body: Buffer.from("buffer body") })]);
    assert.deepStrictEqual(decodeBatch(bytes)[0]!.body, utf8("buffer body"));
  });
});

describe("message codec: encode refuses what it cannot carry", () => {
  it("numbers out of range or not integers", () => {
    assertIllegal([message({ bornTimestamp: 1.5 })], /^message\[0\]\.bornTimestamp must be an integer/);
    assertIllegal([message({ bornTimestamp: 2 ** 53 })], /bornTimestamp/);
    assertIllegal([message({ bornTimestamp: Number.NaN })], /bornTimestamp/);
    assertIllegal([message(), message({ flag: 2 ** 31 })], /^message\[1\]\.flag/);
    assertIllegal([message({ flag: -(2 ** 31) - 1 })], /flag/);
    assertIllegal([message({ reconsumeTimes: -1 })], /reconsumeTimes/);
    assertIllegal([message({ reconsumeTimes: "1" as unknown as number })], /reconsumeTimes/);
  });

  it("strings too long, not strings, or not well-formed UTF-16", () => {
    assertIllegal(
      [message({ tags: "t".repeat(65536) })],
      /^message\[0\]\.tags is 65536 bytes in UTF-8, more than 65535$/,
    );
    assertIllegal([message({ tags: "€".repeat(21846) })], /tags is 65538 bytes/);
    assertIllegal([message({ keys: ["ok", "\uD800"] })], /^message\[0\]\.keys\[1\] is not well-formed UTF-16/);
    assertIllegal([message({ keys: ["\uDC00x"] })], /keys\[0\] is not well-formed/);
    assertIllegal([message({ keys: ["x\uD83D"] })], /keys\[0\] is not well-formed/);
    assertIllegal([message({ keys: [1 as unknown as string] })], /keys\[0\] is not a string/);
    assertIllegal([message({ tags: undefined as unknown as string })], /tags is not a string/);
    assertIllegal([message({ properties: { a: "\uDFFF" } })], /properties\["a"\] is not well-formed/);
    assertIllegal([message({ properties: { "\uD800": "v" } })], /properties name\["\\ud800"\] is not well-formed/);
    assertIllegal([message({ properties: { a: 1 as unknown as string } })], /properties\["a"\] is not a string/);
    assertIllegal([message({ properties: { p: "v".repeat(65536) } })], /properties\["p"\] is 65536 bytes/);
  });

  it("wrong shapes", () => {
    assertIllegal([null], /^message\[0\] is not an object/);
    assertIllegal([message({ keys: "k" as unknown as string[] })], /keys is not an array/);
    assertIllegal([message({ keys: new Array(65536).fill("") })], /keys has 65536 keys/);
    assertIllegal([message({ properties: null as unknown as Record<string, string> })], /properties is not an object/);
    assertIllegal([message({ properties: [] as unknown as Record<string, string> })], /properties is not an object/);
    assertIllegal([message({ body: "text" as unknown as Uint8Array })], /body is not a Uint8Array/);
    assertIllegal([message({ body: [1, 2] as unknown as Uint8Array })], /body is not a Uint8Array/);
    assert.throws(
      () => encodeBatch("x" as unknown as MessageRecord[]),
      (err) => isNimbusError(err, ErrorCode.MESSAGE_ILLEGAL),
    );
  });
});

describe("message codec: decode refuses corrupt input", () => {
  const sample = encodeBatch([
    message({ tags: "T", keys: ["k"], properties: { P: "v" }, body: utf8("body") }),
    message({ tags: "", keys: [], properties: {}, body: new Uint8Array(0) }),
  ]);

  it("any changed byte, at every position", () => {
    for (let i = 0; i < sample.length; i++) {
      for (const mask of [0x01, 0x80, 0xff]) {
        const bad = sample.slice();
        bad[i]! ^= mask;
        assertCorrupted(bad, undefined, `byte ${i} ^ ${mask}`);
      }
    }
  });

  it("truncation at every length", () => {
    for (let n = 0; n < sample.length; n++) assertCorrupted(sample.subarray(0, n), undefined, `length ${n}`);
    assertCorrupted(new Uint8Array(0), /shorter than its 9-byte header/);
  });

  it("bytes after the last record", () => {
    const longer = new Uint8Array(sample.length + 1);
    longer.set(sample);
    assertCorrupted(longer, /1 bytes after its last message/);
    assertCorrupted(batch([record(fields(message())), record(fields(message()))], 1), /after its last message/);
  });

  it("a wrong magic or an unknown version", () => {
    assertCorrupted(Uint8Array.of(0x4e, 0x4d, 0x42, 0x55, 1, 0, 0, 0, 0), /wrong magic at bytes 0-3: 4e 4d 42 55/);
    assertCorrupted(batch([], 0, 2), /version 2 at byte 4/);
    assertCorrupted(batch([], 0, 0), /version 0 at byte 4/);
  });

  it("a count that does not match the records, or cannot fit", () => {
    assertCorrupted(batch([record(fields(message()))], 2), /message 1 \(record at byte \d+\): only 0 bytes are left/);
    assertCorrupted(batch([], 1), /declares 1 messages/);
    assertCorrupted(batch([new Uint8Array(100)], 0xffffffff), /declares 4294967295 messages/);
  });

  it("a record length that is absurd or runs past the end", () => {
    const r = record(fields(message()));
    const withLength = (length: number): Uint8Array => {
      const copy = r.slice();
      new DataView(copy.buffer).setUint32(0, length, true);
      return batch([copy]);
    };
    assertCorrupted(withLength(0), /record length 0 is less than the minimum of 34/);
    assertCorrupted(withLength(33), /record length 33 is less/);
    assertCorrupted(withLength(r.length + 1), /runs past the end of the batch/);
    assertCorrupted(withLength(0xffffffff), /record length 4294967295 runs past the end/);
  });

  it("a CRC mismatch", () => {
    const r = record(fields(message()));
    r[r.length - 1]! ^= 1;
    assertCorrupted(batch([r]), /message 0 \(record at byte 9\): CRC32C mismatch/);
  });

  // The cases below carry a correct CRC: only a faulty or hostile writer makes them, and they must still throw.
  const base = message({ tags: "", keys: [], properties: {}, body: new Uint8Array(0) });

  it("invalid UTF-8 in tags, keys, property names and values", () => {
    const invalid = [
      Uint8Array.of(0xff),
      Uint8Array.of(0xc3),
      Uint8Array.of(0xed, 0xa0, 0x80),
      Uint8Array.of(0xc0, 0x80),
    ];
    for (const bad of invalid) {
      const start = () => new Bytes().i64(0n).u32(0).u32(0);
      assertCorrupted(
        batch([record(start().text(bad).u16(0).u16(0).u32(0))]),
        /tags \(\d+ bytes at byte \d+\) is not valid UTF-8/,
      );
      assertCorrupted(batch([record(start().text("").u16(1).text(bad).u16(0).u32(0))]), /key 0 .* is not valid UTF-8/);
      assertCorrupted(batch([record(start().text("").u16(0).u16(1).text(bad).text("v").u32(0))]), /property name 0/);
      assertCorrupted(batch([record(start().text("").u16(0).u16(1).text("n").text(bad).u32(0))]), /property value 0/);
    }
  });

  it("fields that run past their record, or do not fill it", () => {
    const start = () => new Bytes().i64(0n).u32(0).u32(0);
    assertCorrupted(
      batch([
        record(
          start()
            .u16(100)
            .raw(utf8("t".repeat(30))),
        ),
      ]),
      /tags \(100 bytes at byte 31\) runs past the record's end at byte 61/,
    );
    assertCorrupted(batch([record(start().text("").u16(0).u16(0).u32(10).u8(1, 2))]), /body \(10 bytes/);
    assertCorrupted(batch([record(start().text("t".repeat(20)).u16(3))]), /key 0 length \(2 bytes/);
    assertCorrupted(batch([record(new Bytes().i64(0n).u32(0)), new Uint8Array(20)], 1), /record length 20 is less/);
    assertCorrupted(
      batch([record(fields(base, (b) => b.u8(0)))]),
      /fields end at byte \d+, but the record's CRC is at byte \d+/,
    );
  });

  it("numbers the encoder never writes", () => {
    assertCorrupted(
      batch([record(fields({ ...base, reconsumeTimes: 2 ** 32 - 1 }))]),
      /reconsumeTimes is negative \(-1\)/,
    );
    assertCorrupted(
      batch([
        record(
          new Bytes()
            .i64(2n ** 53n)
            .u32(0)
            .u32(0)
            .text("")
            .u16(0)
            .u16(0)
            .u32(0),
        ),
      ]),
      /bornTimestamp/,
    );
    assertCorrupted(
      batch([
        record(
          new Bytes()
            .i64(-(2n ** 53n))
            .u32(0)
            .u32(0)
            .text("")
            .u16(0)
            .u16(0)
            .u32(0),
        ),
      ]),
      /bornTimestamp/,
    );
    assertCorrupted(
      batch([
        record(
          new Bytes()
            .i64(-(2n ** 63n))
            .u32(0)
            .u32(0)
            .text("")
            .u16(0)
            .u16(0)
            .u32(0),
        ),
      ]),
      /bornTimestamp/,
    );
    // the largest magnitudes that are safe still decode
    for (const t of [2n ** 53n - 1n, -(2n ** 53n) + 1n]) {
      const ok = batch([record(new Bytes().i64(t).u32(0).u32(0).text("").u16(0).u16(0).u32(0))]);
      assert.equal(decodeBatch(ok)[0]!.bornTimestamp, Number(t));
    }
  });

  it("a property name that appears twice", () => {
    const twice = new Bytes()
      .i64(0n)
      .u32(0)
      .u32(0)
      .text("")
      .u16(0)
      .u16(2)
      .text("A")
      .text("1")
      .text("A")
      .text("2")
      .u32(0);
    assertCorrupted(batch([record(twice)]), /property "A" appears twice/);
  });

  it("input that is not bytes", () => {
    assertCorrupted("NMBT" as unknown as Uint8Array, /not a Uint8Array/);
  });
});
