import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MessageRecord } from "../../lib/core/message.js";
import { BatchRecords, encodeBatch } from "../../lib/core/message-codec.js";
import type { PulledMessage } from "../../lib/protocol/index.js";
import { encodeStoredRecords, type QueueRecord } from "../../lib/remoting/stored-records.js";
import {
  encodeStoredMessages,
  FIXED_BEFORE_BODY,
  hostAddress,
  parseProperties,
} from "../../lib/remoting/wire-message.js";

const hosts = { storeHost: hostAddress("10.1.2.3", 10911), bornHost: hostAddress("192.168.7.9", 54321) };
const queue = { topic: "TopicÄ", brokerName: "broker-a", queueId: 3 };

function record(overrides: Partial<MessageRecord> = {}): MessageRecord {
  return {
    bornTimestamp: 1_796_400_000_123,
    flag: 7,
    tags: "TagA",
    keys: ["k1", "k2"],
    properties: { UNIQ_KEY: "U1", näme: "välue" },
    body: Uint8Array.from([1, 2, 3, 250]),
    reconsumeTimes: 2,
    ...overrides,
  };
}

/** The records stored as one batch and read back as checked records, at offsets from 100 on. */
function stored(records: readonly MessageRecord[]): QueueRecord[] {
  const batch = new BatchRecords(encodeBatch(records));
  return records.map((_, i) => ({
    record: batch.view(i),
    queueOffset: 100 + i,
    storeTimestamp: 1_796_400_001_000 + i,
  }));
}

/** The records as a pull's messages, made from the records sent (not from what the read decoded). */
function pulled(records: readonly MessageRecord[], read: readonly QueueRecord[]): PulledMessage[] {
  return records.map((m, i) => {
    const { queueOffset, storeTimestamp } = read[i] as QueueRecord;
    return { msgId: `ID${queueOffset}`, ...queue, queueOffset, storeTimestamp, ...m };
  });
}

describe("encodeStoredRecords: a pull answer copied from the stored records' bytes", () => {
  const cases: Array<[string, MessageRecord[]]> = [
    ["tags and keys not among the properties: written last", [record()]],
    [
      "TAGS and KEYS among the properties: the record's own, in their place",
      [record({ properties: { KEYS: "stale", a: "1", TAGS: "stale", b: "2" } })],
    ],
    ["no tags, no keys, no properties", [record({ tags: "", keys: [], properties: {} })]],
    ["tags only, no properties", [record({ keys: [], properties: {} })]],
    ["keys only", [record({ tags: "", properties: { x: "y" } })]],
    [
      "an empty key among others, and an empty property value",
      [record({ keys: ["", "k"], properties: { e: "", TAGS: "t" } })],
    ],
    [
      "Unicode everywhere, a long value and a large body",
      [
        record({
          tags: "日本語のタグ",
          keys: ["ключ", "🎉"],
          // JSON.parse makes "__proto__" an own property (a literal would set the prototype).
          properties: JSON.parse(`{"näme": "${"v".repeat(300)}", "__proto__": "p", "名前": "値"}`),
          body: new Uint8Array(70_000).fill(9),
        }),
      ],
    ],
    [
      "a TAGS property without tags, a KEYS property without keys: the properties' own values",
      [record({ tags: "", keys: [], properties: { TAGS: "own", KEYS: "own keys" } })],
    ],
    [
      "names that read as integers (stored first, in numeric order, as Object.keys orders them)",
      [record({ properties: { b: "1", 7: "seven", a: "2", 42: "x" } })],
    ],
    [
      "several records, flags and timestamps of all kinds",
      [
        record({ flag: -1, bornTimestamp: -1 }),
        record({ reconsumeTimes: 16, bornTimestamp: 2 ** 40 + 5, body: new Uint8Array(0) }),
        record({ tags: "B", keys: [] }),
      ],
    ],
  ];
  for (const [name, records] of cases) {
    it(`makes the bytes encodeStoredMessages makes of the decoded messages: ${name}`, () => {
      const read = stored(records);
      const fromRecords = encodeStoredRecords(queue, read, hosts, Number.POSITIVE_INFINITY);
      const fromMessages = encodeStoredMessages(pulled(records, read), hosts, Number.POSITIVE_INFINITY);
      assert.equal(fromRecords.count, records.length);
      assert.deepEqual(fromRecords, fromMessages);
      for (const m of records) assert.equal(Object.getPrototypeOf(m.properties), Object.prototype);
    });
  }

  it("writes the record's tags and keys into TAGS and KEYS, as RocketMQ's client reads them", () => {
    const [one] = stored([record({ properties: { TAGS: "stale", a: "1" } })]);
    const { body } = encodeStoredRecords(queue, [one as QueueRecord], hosts, Number.POSITIVE_INFINITY);
    // After the body (its length just before it): the topic (u8 length), then the properties (u16 length).
    const bodyAt = FIXED_BEFORE_BODY;
    const topicAt = bodyAt + body.readInt32BE(bodyAt - 4) + 1;
    const propsAt = topicAt + (body[topicAt - 1] as number) + 2;
    const text = body.toString("utf8", propsAt, propsAt + body.readUInt16BE(propsAt - 2));
    assert.equal(text, "TAGS\u0001TagA\u0002a\u00011\u0002KEYS\u0001k1 k2");
    const props = parseProperties(text);
    assert.equal(props.TAGS, "TagA");
    assert.equal(props.a, "1");
    assert.equal(props.KEYS, "k1 k2");
  });

  it("stops before the record that would pass maxBytes, and always answers the first", () => {
    const read = stored([record(), record(), record({ body: new Uint8Array(1000) })]);
    const sizes = read.map((r) => encodeStoredRecords(queue, [r], hosts, Number.POSITIVE_INFINITY).body.byteLength);
    const [s0 = 0, s1 = 0, s2 = 0] = sizes;
    const cut = encodeStoredRecords(queue, read, hosts, s0 + s1 + s2 - 1);
    assert.equal(cut.count, 2);
    assert.equal(cut.body.byteLength, s0 + s1);
    assert.equal(encodeStoredRecords(queue, read, hosts, s0 + s1 + s2).count, 3);
    assert.equal(encodeStoredRecords(queue, read.slice(2), hosts, 10).count, 1, "one larger than the bound, alone");
    assert.deepEqual(encodeStoredRecords(queue, [], hosts, 10), { body: Buffer.alloc(0), count: 0 });
  });
});
