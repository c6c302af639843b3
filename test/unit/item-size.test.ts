/**
 * Item sizes as DynamoDB counts them (both DynamoDB Local and dynalite agree, and the contract suite checks
 * the 400 KB limit against both): a number takes one byte per pair of digits, pairs aligned on the
 * decimal point, plus one, plus one more when negative; zero is one byte.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { itemSize, valueSize } from "../../lib/storage/item-size.js";

describe("item size", () => {
  it("counts numbers by digit pairs aligned on the decimal point, plus a byte for negatives", () => {
    const cases: [number, number][] = [
      [0, 1],
      [-0, 1],
      [1, 2],
      [12, 2],
      [120, 3],
      [123, 3],
      [1234, 3],
      [1.5, 3],
      [0.5, 2],
      [0.05, 2],
      [0.12, 2],
      [0.012, 3],
      [55.5, 3],
      [-1, 3],
      [-120, 4],
      [-1.5, 4],
      [1e21, 2],
      [1e-100, 2],
      [1.5e-7, 2],
      [Number.MAX_SAFE_INTEGER, 9], // 9007199254740991: 16 digits, pairs 90|07|...|91
      [Math.PI, 10], // 3.141592653589793: 03|14|15|...|93
    ];
    for (const [n, size] of cases) assert.equal(valueSize(n), size, `size of ${n}`);
  });

  it("counts names, strings, binary, lists and maps", () => {
    assert.equal(itemSize({ pk: "p", sk: 1 }), 2 + 1 + 2 + 2);
    assert.equal(valueSize("héllo"), 6);
    assert.equal(valueSize(new Uint8Array(7)), 7);
    assert.equal(valueSize([1, -1]), 3 + (1 + 2) + (1 + 3));
    assert.equal(valueSize({ ab: null, c: true }), 3 + (1 + 2 + 1) + (1 + 1 + 1));
  });
});
