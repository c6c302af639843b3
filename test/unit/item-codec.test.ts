/**
 * @module The embedded store's item codec: binary attributes come back as plain Uint8Arrays of their own (a
 * large one as a view of its decoded buffer, never part of Buffer's shared pool), and map keys stay data.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeItem, encodeAttributes } from "../../lib/storage/local/item-codec.js";

const roundTrip = (attributes: Record<string, unknown>) => {
  const stored = encodeAttributes({ pk: "p", sk: 1, ...(attributes as Record<string, never>) });
  return decodeItem("p", 1, stored.json, stored.bytes);
};

describe("item codec (local store)", () => {
  it("binary of every size comes back exact, as a plain Uint8Array owning its whole buffer", () => {
    for (const size of [0, 1, 100, 3000, 5000, 64 * 1024]) {
      const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 31) & 0xff);
      const back = roundTrip({ d: bytes }).d;
      assert.ok(back instanceof Uint8Array && !Buffer.isBuffer(back), `${size}: a plain Uint8Array`);
      assert.deepEqual(back, bytes);
      assert.equal(back.byteOffset, 0, `${size}: not a slice of a shared pool`);
      assert.equal(back.buffer.byteLength, size, `${size}: its buffer holds nothing else`);
    }
  });

  it("a map key named __proto__ stays an entry, and $-keys are escaped both ways", () => {
    const map = JSON.parse('{"__proto__": "data", "$b": "tag-like", "$": "dollar"}') as Record<string, unknown>;
    const back = roundTrip({ m: map }).m as Record<string, unknown>;
    assert.deepEqual(Object.keys(back), ["__proto__", "$b", "$"]);
    assert.equal(Object.getPrototypeOf(back), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(back, "__proto__")?.value, "data");
  });

  it("several binary values share the row's bytes and come back apart, each owning its buffer", () => {
    const a = new Uint8Array([1, 2, 3]);
    const b = Uint8Array.from({ length: 5000 }, (_, i) => i & 0xff);
    const stored = encodeAttributes({ pk: "p", sk: 1, a, list: [b, { c: new Uint8Array(0) }] });
    assert.equal(stored.bytes?.length, 5003);
    assert.ok(!stored.json.includes("AQID"), "no base64 in the JSON");
    const back = decodeItem("p", 1, stored.json, stored.bytes);
    assert.deepEqual(back, { pk: "p", sk: 1, a, list: [b, { c: new Uint8Array(0) }] });
    const list = back.list as [Uint8Array, { c: Uint8Array }];
    for (const value of [back.a as Uint8Array, list[0], list[1].c]) {
      assert.equal(value.byteOffset, 0);
      assert.equal(value.buffer.byteLength, value.byteLength);
    }
  });

  it("reads base64 attributes (rows written before the BLOB column), and refuses a range outside the bytes", () => {
    assert.deepEqual(decodeItem("p", 1, '{"d":{"$b":"AQID"}}').d, new Uint8Array([1, 2, 3]));
    assert.throws(() => decodeItem("p", 1, '{"d":{"$r":[0,4]}}', Buffer.from([1, 2])), /outside its row's bytes/);
    assert.throws(() => decodeItem("p", 1, '{"d":{"$r":[0,1]}}'), /outside its row's bytes/);
  });
});
