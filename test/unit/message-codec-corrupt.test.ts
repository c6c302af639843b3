import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeBatch, encodeBatch } from "../../lib/core/message-codec.js";
import { assertCorrupted, Bytes, batch, emptyFields, fields, message, record, utf8 } from "./message-codec-fixtures.js";

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
    // a born time past what a JavaScript number holds exactly
    for (const t of [2n ** 53n, -(2n ** 53n), -(2n ** 63n)])
      assertCorrupted(batch([record(emptyFields(t))]), /bornTimestamp/);
    // the largest magnitudes that are safe still decode
    for (const t of [2n ** 53n - 1n, -(2n ** 53n) + 1n]) {
      const ok = batch([record(emptyFields(t))]);
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

  it("a property name that appears twice among many (looked up in a set past 16), ASCII or not", () => {
    for (const [count, name] of [
      [17, "p3"],
      [40, "p39"],
      [300, "näme"],
      [16, "näme"],
    ] as const) {
      const b = new Bytes()
        .i64(0n)
        .u32(0)
        .u32(0)
        .text("")
        .u16(0)
        .u16(count + 1);
      for (let i = 0; i < count; i++) b.text(i === count - 1 && name === "näme" ? "näme" : `p${i}`).text("v");
      const twice = b.text(name).text("again").u32(0);
      assertCorrupted(batch([record(twice)]), new RegExp(`property "${name}" appears twice`));
    }
  });

  it("input that is not bytes", () => {
    assertCorrupted("NMBT" as unknown as Uint8Array, /not a Uint8Array/);
  });
});
