import assert from "node:assert/strict";
import { describe, it } from "node:test";
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
import { assertIllegal, batch, fields, message, record, roundTrip, utf8 } from "./message-codec-fixtures.js";

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
