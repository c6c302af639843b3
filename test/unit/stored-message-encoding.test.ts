import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { crc32 } from "node:zlib";
import type { PulledMessage } from "../../lib/protocol/index.js";
import {
  encodeStored,
  encodeStoredMessages,
  hostAddress,
  parseProperties,
  physicalOffset,
} from "../../lib/remoting/wire-message.js";

const hosts = { storeHost: hostAddress("10.1.2.3", 10911), bornHost: hostAddress("192.168.7.9", 54321) };

/** RocketMQ-side reading of the commit-log offset Nimbus names a message by: FNV-1a hashes, written out here. */
function expectedPhysicalOffset(topic: string, brokerName: string, queueId: number, queueOffset: number): bigint {
  const fnv = (s: string) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    return BigInt(h >>> 0);
  };
  return (
    ((fnv(topic) & 0xffffn) << 47n) |
    ((fnv(brokerName) & 0x1fn) << 42n) |
    (BigInt(queueId & 0x3ff) << 32n) |
    BigInt(queueOffset >>> 0)
  );
}

function message(queueOffset: number, body: Uint8Array, overrides: Partial<PulledMessage> = {}): PulledMessage {
  return {
    msgId: `ID${queueOffset}`,
    topic: "TopicÄ",
    brokerName: "broker-a",
    queueId: 3,
    queueOffset,
    tags: "TagA",
    keys: ["k1", "k2"],
    properties: { UNIQ_KEY: `U${queueOffset}`, näme: "välue" },
    body,
    flag: 7,
    bornTimestamp: 1_796_400_000_123,
    storeTimestamp: 1_796_400_000_456,
    reconsumeTimes: 2,
    ...overrides,
  };
}

/** RocketMQ's MessageDecoder.decode, field by field (IPv4 hosts, no compression), written from its layout. */
function decodeAll(b: Buffer): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  let at = 0;
  while (at < b.byteLength) {
    const start = at;
    const total = b.readInt32BE(at);
    const m: Record<string, unknown> = { total };
    m.magic = b.readInt32BE(at + 4);
    m.bodyCrc = b.readInt32BE(at + 8);
    m.queueId = b.readInt32BE(at + 12);
    m.flag = b.readInt32BE(at + 16);
    m.queueOffset = b.readBigInt64BE(at + 20);
    m.physicalOffset = b.readBigInt64BE(at + 28);
    m.sysFlag = b.readInt32BE(at + 36);
    m.bornTimestamp = b.readBigInt64BE(at + 40);
    m.bornHost = `${[...b.subarray(at + 48, at + 52)].join(".")}:${b.readInt32BE(at + 52)}`;
    m.storeTimestamp = b.readBigInt64BE(at + 56);
    m.storeHost = `${[...b.subarray(at + 64, at + 68)].join(".")}:${b.readInt32BE(at + 68)}`;
    m.reconsumeTimes = b.readInt32BE(at + 72);
    m.preparedOffset = b.readBigInt64BE(at + 76);
    const bodyLength = b.readInt32BE(at + 84);
    at += 88;
    m.body = b.subarray(at, at + bodyLength);
    at += bodyLength;
    const topicLength = b.readUInt8(at);
    m.topic = b.toString("utf8", at + 1, at + 1 + topicLength);
    at += 1 + topicLength;
    const propsLength = b.readUInt16BE(at);
    m.properties = parseProperties(b.toString("utf8", at + 2, at + 2 + propsLength));
    at += 2 + propsLength;
    assert.equal(at - start, total, "TOTALSIZE is the record's length");
    out.push(m);
  }
  return out;
}

describe("the stored-message encoding of a pull answer", () => {
  const bodies = [0, 1, 1024, 3000].map((n) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + n) & 0xff));
  const messages = bodies.map((body, i) => message(2 ** 33 + i, body));

  it("writes every field as RocketMQ's MessageDecoder reads it", () => {
    const { body, count } = encodeStoredMessages(messages, hosts, Number.POSITIVE_INFINITY);
    assert.equal(count, messages.length);
    const decoded = decodeAll(body);
    assert.equal(decoded.length, messages.length);
    for (const [i, d] of decoded.entries()) {
      const m = messages[i] as PulledMessage;
      assert.equal(d.magic, -626843481);
      assert.equal(d.bodyCrc, crc32(m.body) & 0x7fffffff);
      assert.equal(d.queueId, 3);
      assert.equal(d.flag, 7);
      assert.equal(d.queueOffset, BigInt(m.queueOffset));
      assert.equal(d.physicalOffset, expectedPhysicalOffset(m.topic, m.brokerName, m.queueId, m.queueOffset));
      assert.equal(d.physicalOffset, physicalOffset(m.topic, m.brokerName, m.queueId, m.queueOffset));
      assert.equal(d.sysFlag, 0);
      assert.equal(d.bornTimestamp, BigInt(m.bornTimestamp));
      assert.equal(d.storeTimestamp, BigInt(m.storeTimestamp));
      assert.equal(d.bornHost, "192.168.7.9:54321");
      assert.equal(d.storeHost, "10.1.2.3:10911");
      assert.equal(d.reconsumeTimes, 2);
      assert.equal(d.preparedOffset, 0n);
      assert.deepEqual(new Uint8Array(d.body as Buffer), m.body);
      assert.equal(d.topic, "TopicÄ");
      assert.deepEqual(
        { ...(d.properties as Record<string, string>) },
        { ...m.properties, TAGS: "TagA", KEYS: "k1 k2" },
      );
    }
  });

  it("is the messages encoded one by one, back to back", () => {
    const whole = encodeStoredMessages(messages, hosts, Number.POSITIVE_INFINITY).body;
    assert.deepEqual(whole, Buffer.concat(messages.map((m) => encodeStored(m, hosts))));
  });

  it("keeps a timestamp before 1970 and one past 2^32 ms as two's-complement int64s", () => {
    const early = message(0, new Uint8Array(4), { bornTimestamp: -1, storeTimestamp: 2 ** 40 + 5 });
    const [d] = decodeAll(encodeStored(early, hosts));
    assert.equal(d?.bornTimestamp, -1n);
    assert.equal(d?.storeTimestamp, BigInt(2 ** 40 + 5));
  });

  it("stops before the message that would pass maxBytes, and always answers the first", () => {
    const sizes = messages.map((m) => encodeStored(m, hosts).byteLength);
    const [s0 = 0, s1 = 0, s2 = 0] = sizes;
    const cut = encodeStoredMessages(messages, hosts, s0 + s1 + s2 - 1);
    assert.equal(cut.count, 2);
    assert.equal(cut.body.byteLength, s0 + s1);
    const exact = encodeStoredMessages(messages, hosts, s0 + s1 + s2);
    assert.equal(exact.count, 3);
    const alone = encodeStoredMessages(messages.slice(3), hosts, 10);
    assert.equal(alone.count, 1, "a message larger than the bound is answered alone");
    assert.deepEqual(encodeStoredMessages([], hosts, 10), { body: Buffer.alloc(0), count: 0 });
  });

  it("refuses messages of more than one queue", () => {
    const other = message(9, new Uint8Array(1), { queueId: 4 });
    assert.throws(() => encodeStoredMessages([messages[0] as PulledMessage, other], hosts, 1e9), /one queue/);
  });
});
