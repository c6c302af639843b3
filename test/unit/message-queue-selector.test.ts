import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Message } from "../../lib/client/message.js";
import {
  isMessageQueueSelector,
  javaHashCode,
  SelectMessageQueueByHash,
  SelectMessageQueueByRandom,
  selectMessageQueue,
} from "../../lib/client/producer/message-queue-selector.js";
import { isNimbusError } from "../../lib/core/errors.js";
import { MessageQueue } from "../../lib/core/message-queue.js";

const T = "TopicTest";
const mqs = [
  ...[0, 1, 2, 3].map((i) => new MessageQueue(T, "broker-a", i)),
  ...[0, 1, 2, 3].map((i) => new MessageQueue(T, "broker-b", i)),
];
const msg = new Message(T, "hello");

describe("javaHashCode", () => {
  it("hashes strings as Java's String.hashCode", () => {
    assert.equal(javaHashCode(""), 0);
    assert.equal(javaHashCode("hello"), 99162322);
    assert.equal(javaHashCode("Aa"), javaHashCode("BB"));
    assert.equal(javaHashCode("polygenelubricants"), -0x80000000);
    assert.equal(javaHashCode("订单"), 0x8ba2 * 31 + 0x5355);
  });

  it("hashes numbers, bigints and booleans as Integer, Long, Double and Boolean do", () => {
    assert.equal(javaHashCode(42), 42);
    assert.equal(javaHashCode(-7), -7);
    assert.equal(javaHashCode(2 ** 40), 256); // Long: (int)(v ^ v >>> 32)
    assert.equal(javaHashCode(2n ** 40n), 256);
    assert.equal(javaHashCode(-1n), 0);
    assert.equal(javaHashCode(1.5), 0x3ff80000); // Double: bits 0x3FF8000000000000
    assert.equal(javaHashCode(true), 1231);
    assert.equal(javaHashCode(false), 1237);
  });

  it("uses an object's own hashCode(), else the hash of its JSON", () => {
    assert.equal(javaHashCode({ hashCode: () => 17 }), 17);
    assert.equal(javaHashCode({ orderId: 7 }), javaHashCode('{"orderId":7}'));
  });

  it("refuses null and undefined as PARAMETER_ILLEGAL", () => {
    assert.throws(
      () => javaHashCode(null),
      (e) => isNimbusError(e, "PARAMETER_ILLEGAL"),
    );
    assert.throws(
      () => javaHashCode(undefined),
      (e) => isNimbusError(e, "PARAMETER_ILLEGAL"),
    );
  });
});

describe("SelectMessageQueueByHash", () => {
  const byHash = new SelectMessageQueueByHash();

  it("always picks the same queue for the same argument", () => {
    for (const key of ["order-1", "order-2", "x", 12345, 2n ** 50n, { id: 3 }]) {
      const first = byHash.select(mqs, msg, key);
      for (let i = 0; i < 50; i++) assert.equal(byHash.select([...mqs], msg, key), first);
    }
  });

  it("picks index abs(hashCode % n), as RocketMQ", () => {
    assert.equal(byHash.select(mqs, msg, 13), mqs[5]);
    assert.equal(byHash.select(mqs, msg, -13), mqs[5]);
    // Integer.MIN_VALUE % 8 is 0; % 5 is -3, whose abs is 3.
    assert.equal(byHash.select(mqs, msg, "polygenelubricants"), mqs[0]);
    assert.equal(byHash.select(mqs.slice(0, 5), msg, "polygenelubricants"), mqs[3]);
  });

  it("spreads many keys over every queue", () => {
    const used = new Set(Array.from({ length: 200 }, (_, i) => byHash.select(mqs, msg, `key-${i}`)?.key()));
    assert.equal(used.size, mqs.length);
  });

  it("selects nothing from no queues", () => {
    assert.equal(byHash.select([], msg, "k"), undefined);
  });
});

describe("SelectMessageQueueByRandom", () => {
  it("picks one of the queues and reaches all of them", () => {
    const byRandom = new SelectMessageQueueByRandom();
    const used = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const mq = byRandom.select(mqs);
      assert.ok(mq && mqs.includes(mq));
      used.add(mq.key());
    }
    assert.equal(used.size, mqs.length);
  });
});

describe("selectMessageQueue", () => {
  it("runs a function selector and an object selector with (mqs, msg, arg)", () => {
    const fn = (list: readonly MessageQueue[], m: Message, n: number) => {
      assert.equal(m, msg);
      return list[n % list.length];
    };
    assert.equal(selectMessageQueue(fn, mqs, msg, 10), mqs[2]);
    assert.equal(selectMessageQueue({ select: (list) => list[7] }, mqs, msg, null), mqs[7]);
  });

  it("refuses a selector that returns nothing, or a queue of another topic", () => {
    const none = () => undefined;
    assert.throws(
      () => selectMessageQueue(none, mqs, msg, 1),
      (e) => isNimbusError(e, "PARAMETER_ILLEGAL"),
    );
    const other = () => new MessageQueue("Other", "broker-a", 0);
    assert.throws(
      () => selectMessageQueue(other, mqs, msg, 1),
      (e) => isNimbusError(e, "PARAMETER_ILLEGAL"),
    );
  });

  it("tells selectors from queues, numbers and plain objects", () => {
    assert.equal(
      isMessageQueueSelector(() => undefined),
      true,
    );
    assert.equal(isMessageQueueSelector(new SelectMessageQueueByHash()), true);
    assert.equal(isMessageQueueSelector(mqs[0]), false);
    assert.equal(isMessageQueueSelector(3000), false);
    assert.equal(isMessageQueueSelector({ select: 1 }), false);
    assert.equal(isMessageQueueSelector(null), false);
  });
});
