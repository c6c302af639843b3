import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BoundedMap } from "../../lib/core/bounded-map.js";

describe("BoundedMap", () => {
  it("holds at most maxSize keys, forgetting the oldest inserted", () => {
    const m = new BoundedMap<string, number>(3);
    for (const [i, k] of ["a", "b", "c", "d", "e"].entries()) m.set(k, i);
    assert.equal(m.size, 3);
    assert.deepEqual(
      [...m],
      [
        ["c", 2],
        ["d", 3],
        ["e", 4],
      ],
    );
    assert.equal(m.get("a"), undefined);
  });

  it("inserted order: a key set again keeps its place and forgets nothing", () => {
    const m = new BoundedMap<string, number>(2);
    m.set("a", 1).set("b", 2).set("a", 10);
    assert.deepEqual(
      [...m],
      [
        ["a", 10],
        ["b", 2],
      ],
    );
    m.set("c", 3);
    assert.deepEqual([...m.keys()], ["b", "c"]);
  });

  it("written order: a key set again becomes the newest, so the one written longest ago goes", () => {
    const m = new BoundedMap<string, number>(2, { order: "written" });
    m.set("a", 1).set("b", 2).set("a", 10);
    assert.deepEqual([...m.keys()], ["b", "a"]);
    m.set("c", 3);
    assert.deepEqual(
      [...m],
      [
        ["a", 10],
        ["c", 3],
      ],
    );
  });

  it("reads never move a key", () => {
    const m = new BoundedMap<string, number>(2, { order: "written" });
    m.set("a", 1).set("b", 2);
    assert.equal(m.get("a"), 1);
    assert.equal(m.has("a"), true);
    m.set("c", 3);
    assert.deepEqual([...m.keys()], ["b", "c"]);
  });

  it("tells onForget what it forgot to make room, not what delete or clear removed", () => {
    const forgotten: [string, number][] = [];
    const m = new BoundedMap<string, number>(2, { onForget: (k, v) => forgotten.push([k, v]) });
    m.set("a", 1).set("b", 2).set("c", 3);
    m.delete("b");
    m.set("d", 4);
    m.clear();
    assert.deepEqual(forgotten, [["a", 1]]);
  });

  it("refuses a size that is not a positive count", () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => new BoundedMap(bad), RangeError);
    }
  });
});
