import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { crc32c } from "../../lib/core/crc32c.js";

/** Bit-at-a-time CRC32C, straight from the definition: the reference the table-driven code must match. */
function reference(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const b of bytes) {
    crc ^= b;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return ~crc >>> 0;
}

/** Deterministic pseudo-random bytes (xorshift32), so failures reproduce. */
function randomBytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

describe("crc32c", () => {
  it("matches the standard check value and the RFC 3720 (iSCSI) vectors", () => {
    assert.equal(crc32c(new TextEncoder().encode("123456789")), 0xe3069283);
    assert.equal(crc32c(new Uint8Array(0)), 0);
    assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa);
    assert.equal(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43);
    assert.equal(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i)), 0x46dd794e);
    assert.equal(crc32c(Uint8Array.from({ length: 32 }, (_, i) => 31 - i)), 0x113fdb5c);
    const iscsiReadPdu = Uint8Array.from([
      0x01, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x14, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0x14, 0, 0, 0, 0x18,
      0x28, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0,
    ]);
    assert.equal(crc32c(iscsiReadPdu), 0xd9963a56);
  });

  it("returns an unsigned 32-bit integer", () => {
    for (let n = 0; n < 50; n++) {
      const crc = crc32c(randomBytes(n, n + 7));
      assert.ok(Number.isInteger(crc) && crc >= 0 && crc <= 0xffffffff, `crc ${crc}`);
    }
  });

  it("agrees with the bitwise reference on every length around the 8-byte stride, at unaligned offsets", () => {
    const data = randomBytes(300, 42);
    for (let offset = 0; offset < 9; offset++) {
      for (let n = 0; n + offset <= 120; n++) {
        const slice = data.subarray(offset, offset + n);
        assert.equal(crc32c(slice), reference(slice), `offset ${offset}, length ${n}`);
      }
    }
    const big = randomBytes(100_003, 9);
    assert.equal(crc32c(big), reference(big));
  });

  it("continues from an earlier CRC: crc32c(b, crc32c(a)) == crc32c(a ++ b)", () => {
    const data = randomBytes(1000, 3);
    const whole = crc32c(data);
    for (const cut of [0, 1, 7, 8, 9, 500, 999, 1000]) {
      assert.equal(crc32c(data.subarray(cut), crc32c(data.subarray(0, cut))), whole, `cut at ${cut}`);
    }
    assert.equal(crc32c(new Uint8Array(0), 0xe3069283), 0xe3069283);
  });

  it("sees any single changed byte", () => {
    const data = randomBytes(64, 5);
    const crc = crc32c(data);
    for (let i = 0; i < data.length; i++) {
      const copy = data.slice();
      copy[i]! ^= 0x01;
      assert.notEqual(crc32c(copy), crc, `byte ${i}`);
    }
  });
});
