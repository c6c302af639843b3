import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { MessageQueue } from "../../lib/core/message-queue.js";

const mq = (topic: string, brokerName: string, queueId: number) => new MessageQueue(topic, brokerName, queueId);

/** Deterministic Fisher-Yates shuffle (a linear congruential generator), so failures reproduce. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let x = seed;
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe("MessageQueue", () => {
  it("keeps its fields", () => {
    const q = mq("TopicTest", "broker-a", 3);
    assert.equal(q.topic, "TopicTest");
    assert.equal(q.brokerName, "broker-a");
    assert.equal(q.queueId, 3);
    assert.deepEqual(JSON.parse(JSON.stringify(q)), { topic: "TopicTest", brokerName: "broker-a", queueId: 3 });
  });

  it("sorts as RocketMQ does: topic, then broker by UTF-16 code unit, then queue id as a number", () => {
    const expected: MessageQueue[] = [];
    // "broker-B" < "broker-a" < "broker-b": 'B' is 0x42, 'a' 0x61, as in Java's String.compareTo.
    for (const topic of ["A", "B"]) {
      for (const broker of ["broker-B", "broker-a", "broker-b"]) {
        for (const id of [0, 2, 10]) expected.push(mq(topic, broker, id));
      }
    }
    for (let seed = 1; seed <= 20; seed++) {
      const sorted = shuffled(expected, seed).sort(MessageQueue.compare);
      assert.deepEqual(
        sorted.map((q) => q.toString()),
        expected.map((q) => q.toString()),
        `seed ${seed}`,
      );
    }
    assert.deepEqual(
      [mq("A", "b", 10), mq("A", "b", 2), mq("A", "b", 0)].sort(MessageQueue.compare).map((q) => q.queueId),
      [0, 2, 10],
    );
  });

  it("compares strings by UTF-16 code unit, not by code point or locale", () => {
    // U+1F600 is the surrogate pair D83D DE00: it sorts before U+FF61 by code unit, after it by code point.
    assert.ok(mq("\u{1F600}", "b", 0).compareTo(mq("\uFF61", "b", 0)) < 0);
    assert.ok(mq("T", "a", 0).compareTo(mq("T", "B", 0)) > 0); // localeCompare would say otherwise
    assert.ok(mq("T", "broker", 0).compareTo(mq("T", "broker-a", 0)) < 0); // a prefix sorts first
  });

  it("compareTo is negative, zero or positive, and antisymmetric", () => {
    const a = mq("T", "broker-a", 1);
    const b = mq("T", "broker-a", 2);
    assert.ok(a.compareTo(b) < 0);
    assert.ok(b.compareTo(a) > 0);
    assert.equal(a.compareTo(mq("T", "broker-a", 1)), 0);
    assert.ok(mq("A", "z", 99).compareTo(mq("B", "a", 0)) < 0); // topic decides first
    assert.ok(mq("T", "a", 99).compareTo(mq("T", "b", 0)) < 0); // then broker
  });

  it("equals compares all three fields", () => {
    const q = mq("T", "broker-a", 1);
    assert.equal(q.equals(mq("T", "broker-a", 1)), true);
    assert.equal(q.equals(mq("U", "broker-a", 1)), false);
    assert.equal(q.equals(mq("T", "broker-b", 1)), false);
    assert.equal(q.equals(mq("T", "broker-a", 2)), false);
    assert.equal(q.equals({ topic: "T", brokerName: "broker-a", queueId: 1 }), false);
    assert.equal(q.equals(null), false);
  });

  it("prints like RocketMQ", () => {
    assert.equal(mq("T", "B", 0).toString(), "MessageQueue [topic=T, brokerName=B, queueId=0]");
    assert.equal(`${mq("TopicTest", "broker-a", 7)}`, "MessageQueue [topic=TopicTest, brokerName=broker-a, queueId=7]");
  });

  it("has a stable key that parses back", () => {
    const q = mq("%RETRY%group", "broker-a", 12);
    assert.equal(q.key(), "%RETRY%group#broker-a#12");
    assert.ok(MessageQueue.fromKey(q.key()).equals(q));
    assert.ok(MessageQueue.fromKey("T#b#0").equals(mq("T", "b", 0)));
    assert.ok(MessageQueue.fromKey(`T#b#${2 ** 31 - 1}`).equals(mq("T", "b", 2 ** 31 - 1)));
  });

  it("fromKey refuses what key() cannot produce", () => {
    for (const key of [
      "",
      "T#b",
      "T#b#0#1",
      "T#b#",
      "T#b#01",
      "T#b#-1",
      "T#b#1.5",
      "T#b#x",
      `T#b#${2 ** 31}`,
      "T#b# 1",
    ]) {
      assert.throws(
        () => MessageQueue.fromKey(key),
        (err) => isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL),
        key,
      );
    }
  });

  it("refuses '#' in names and queue ids that are not Java ints >= 0", () => {
    const bad: [string, string, number][] = [
      ["T#x", "b", 0],
      ["T", "b#x", 0],
      ["T", "b", -1],
      ["T", "b", 1.5],
      ["T", "b", Number.NaN],
      ["T", "b", 2 ** 31],
    ];
    for (const [topic, broker, id] of bad) {
      assert.throws(
        () => mq(topic, broker, id),
        (err) => isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL),
        `${topic} ${broker} ${id}`,
      );
    }
  });
});
