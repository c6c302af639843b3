import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { BatchRecords, decodeBatch, encodeBatch } from "../../lib/core/message-codec.js";
import { batch, fields, message, record, utf8 } from "./message-codec-fixtures.js";

const isCorrupted = (pattern: RegExp) => (err: unknown) =>
  isNimbusError(err, ErrorCode.DATA_CORRUPTED) && pattern.test(err.message);

/** `bytes` with the byte at `at` flipped. */
function flipped(bytes: Uint8Array, at: number): Uint8Array {
  const copy = bytes.slice();
  copy[at] = (copy[at] as number) ^ 0xff;
  return copy;
}

describe("BatchRecords: a batch's frame checked at once, its records decoded when read", () => {
  const messages = [
    message({ tags: "A", body: utf8("first") }),
    message({ tags: "B", keys: ["k1", "k2"], body: utf8("second") }),
    message({ tags: "C", properties: {}, body: utf8("third") }),
  ];

  it("reads each record as decodeBatch does, in any order and more than once", () => {
    const bytes = encodeBatch(messages);
    const records = new BatchRecords(bytes);
    assert.equal(records.count, 3);
    for (const i of [2, 0, 1, 2]) assert.deepEqual(records.record(i), messages[i]);
    assert.throws(() => records.record(3), RangeError);
  });

  it("parses only the records it is asked for: a bad CRC elsewhere in the batch is found when that one is read", () => {
    const [first, second, third] = messages.map((m) => record(fields(m)));
    const bad = flipped(second as Uint8Array, 20);
    const bytes = batch([first as Uint8Array, bad, third as Uint8Array]);
    const records = new BatchRecords(bytes);
    assert.equal(records.record(0).tags, "A");
    assert.equal(records.record(2).tags, "C");
    assert.throws(() => records.record(1), isCorrupted(/message 1 \(record at byte \d+\): CRC32C mismatch/));
    assert.throws(() => decodeBatch(bytes), isCorrupted(/message 1 .*CRC32C mismatch/));
  });

  it("decodeBatch reports the first fault in byte order: a record length made shorter fails that record's CRC", () => {
    const [first, second] = messages.map((m) => record(fields(m)));
    const shorter = (first as Uint8Array).slice();
    const view = new DataView(shorter.buffer);
    view.setUint32(0, view.getUint32(0, true) - 4, true);
    const bytes = batch([shorter, second as Uint8Array]);
    assert.throws(() => decodeBatch(bytes), isCorrupted(/^message 0 \(record at byte 9\): CRC32C mismatch/));
    // The frame walk finds the next record's start inside the first one: refused when made.
    assert.throws(() => new BatchRecords(bytes), isCorrupted(/^message 1 /));
  });

  it("refuses a frame that does not hold when it is made, whatever is read after", () => {
    const bytes = encodeBatch(messages);
    const longer = new Uint8Array(bytes.length + 1);
    longer.set(bytes);
    assert.throws(() => new BatchRecords(longer), isCorrupted(/1 bytes after its last message/));
    assert.throws(() => new BatchRecords(bytes.subarray(0, bytes.length - 1)), isCorrupted(/runs past the end/));
    assert.throws(() => new BatchRecords(batch([record(fields(message()))], 2)), isCorrupted(/only 0 bytes are left/));
  });

  it("reads short ASCII text, longer text and any Unicode alike", () => {
    const long = "x".repeat(65);
    const edge = "y".repeat(64);
    // 62 ASCII bytes and a 2-byte "é": 64 bytes, so the short path starts and meets a byte past ASCII at the end.
    const endsPastAscii = `${"z".repeat(62)}é`;
    const texts = [
      "",
      "a",
      "\u0000",
      "\u007f",
      "nul\u0000in",
      edge,
      long,
      "ü",
      "日本語のタグ",
      "emoji 🎉",
      endsPastAscii,
    ];
    const one = message({
      tags: texts.join("|"),
      keys: texts,
      properties: Object.fromEntries(texts.map((t, i) => [`p${i}${t}`, t])),
    });
    const [decoded] = decodeBatch(encodeBatch([one]));
    assert.deepEqual(decoded, one);
  });

  it("still refuses invalid UTF-8 in short text (not ASCII, so the UTF-8 decoder reads it)", () => {
    const bad = record(invalidTagFields(message({ keys: [], properties: {} })));
    assert.throws(
      () => new BatchRecords(batch([bad])).record(0),
      isCorrupted(/tags \(2 bytes at byte \d+\) is not valid UTF-8/),
    );
  });
});

/** The fields of `m` with a 2-byte tag that is not UTF-8 (0xc3 0x28). */
function invalidTagFields(m: ReturnType<typeof message>) {
  const good = fields({ ...m, tags: "ab" });
  const out = good.out;
  // The tag's bytes follow the 16 bytes of numbers and its u16 length.
  out[18] = 0xc3;
  out[19] = 0x28;
  return good;
}
