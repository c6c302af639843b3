import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PermName } from "../../lib/core/perm-name.js";

describe("PermName", () => {
  it("has RocketMQ's bit values", () => {
    assert.equal(PermName.PERM_PRIORITY, 8);
    assert.equal(PermName.PERM_READ, 4);
    assert.equal(PermName.PERM_WRITE, 2);
    assert.equal(PermName.PERM_INHERIT, 1);
  });

  it("tests each bit on its own, whatever the other bits are", () => {
    for (let perm = 0; perm < 16; perm++) {
      assert.equal(PermName.isReadable(perm), (perm & 4) !== 0, `read ${perm}`);
      assert.equal(PermName.isWriteable(perm), (perm & 2) !== 0, `write ${perm}`);
      assert.equal(PermName.isInherited(perm), (perm & 1) !== 0, `inherit ${perm}`);
      assert.equal(PermName.isPriority(perm), (perm & 8) !== 0, `priority ${perm}`);
    }
    assert.equal(PermName.isReadable(6) && PermName.isWriteable(6), true);
    assert.equal(PermName.isWriteable(4), false);
    assert.equal(PermName.isReadable(2), false);
  });

  it("prints RocketMQ's RWX form, without the priority bit", () => {
    const expected = ["---", "--X", "-W-", "-WX", "R--", "R-X", "RW-", "RWX"];
    for (let perm = 0; perm < 16; perm++) assert.equal(PermName.perm2String(perm), expected[perm & 7], `perm ${perm}`);
    assert.equal(PermName.perm2String(6), "RW-");
    assert.equal(PermName.perm2String(14), "RW-");
    assert.equal(PermName.perm2String(7), "RWX");
  });

  it("accepts integers 0 to 15 only", () => {
    for (let perm = 0; perm < 16; perm++) assert.equal(PermName.isValid(perm), true, `perm ${perm}`);
    for (const perm of [-1, 16, 255, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.equal(PermName.isValid(perm), false, `perm ${perm}`);
    }
  });
});
