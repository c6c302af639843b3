import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AllocateMessageQueueConsistentHash } from "../../lib/client/allocate/allocate-consistent-hash.js";
import { ConsistentHashRouter, type HashNode, MD5Hash } from "../../lib/client/allocate/consistent-hash-router.js";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { MessageQueue } from "../../lib/core/message-queue.js";

const mq = (brokerName: string, queueId: number, topic = "TopicTest") => new MessageQueue(topic, brokerName, queueId);
const EIGHT = [0, 1, 2, 3].map((i) => mq("broker-a", i)).concat([0, 1, 2, 3].map((i) => mq("broker-b", i)));
const CIDS = ["10.83.2.15@13674", "10.200.110.172@12864", "10.200.110.184@20131"].sort();
const TEN = Array.from({ length: 10 }, (_, i) => mq("brokerName", i, "topic_test"));
const CID4 = ["CID-0", "CID-1", "CID-2", "CID-3"];

/** Queue -> owner over every consumer of the group. */
function owners(strategy: AllocateMessageQueueConsistentHash, mqAll: MessageQueue[], cidAll: string[]) {
  const owner = new Map<string, string>();
  for (const cid of cidAll) {
    for (const q of strategy.allocate("g", cid, mqAll, cidAll)) {
      assert.equal(owner.has(q.key()), false, `${q.key()} allocated twice`);
      owner.set(q.key(), cid);
    }
  }
  return owner;
}

function byOwner(strategy: AllocateMessageQueueConsistentHash, mqAll: MessageQueue[], cidAll: string[]) {
  return Object.fromEntries(
    cidAll.map((cid) => [cid, strategy.allocate("g", cid, mqAll, cidAll).map((q) => q.queueId)]),
  );
}

describe("MD5Hash", () => {
  it("reads the first 4 digest bytes big-endian, unsigned, as Java's MD5Hash does", () => {
    const md5 = new MD5Hash();
    // MD5("") = d41d8cd9..., MD5("abc") = 900150983cd24fb0...; values as the JVM computes them.
    assert.equal(md5.hash(""), 3558706393);
    assert.equal(md5.hash(""), 0xd41d8cd9);
    assert.equal(md5.hash("abc"), 2416005272);
  });

  it("hashes the UTF-8 bytes of the key (the JVM's default charset)", () => {
    const md5 = new MD5Hash();
    assert.equal(md5.hash("\u00e9"), 1725812119);
    assert.equal(md5.hash("\u8ba2\u5355"), 1276215072);
    assert.equal(md5.hash("CID-0-0"), 1900518137);
  });
});

describe("ConsistentHashRouter", () => {
  const node = (key: string): HashNode => ({ getKey: () => key });

  it("routes to undefined on an empty ring", () => {
    assert.equal(new ConsistentHashRouter([], 10).routeNode("x"), undefined);
  });

  it("routes to the first point at or after the key's hash, wrapping around", () => {
    // Virtual points at fixed places: "a-0" at 10, "b-0" at 20, "a-1" at 30; a key "k-<n>" hashes to n.
    const points = new Map([
      ["a-0", 10],
      ["b-0", 20],
      ["a-1", 30],
    ]);
    const ring = new ConsistentHashRouter<HashNode>([], 0, {
      hash: (key) => points.get(key) ?? Number(key.slice(2)),
    });
    ring.addNode(node("a"), 1);
    ring.addNode(node("b"), 1);
    ring.addNode(node("a"), 1); // numbered after the replica "a" has: "a-1"
    assert.equal(ring.getExistingReplicas(node("a")), 2);
    const route = (h: number) => ring.routeNode(`k-${h}`)?.getKey();
    assert.deepEqual([5, 10, 11, 20, 25, 30, 31].map(route), ["a", "a", "b", "b", "a", "a", "a"]);
    ring.removeNode(node("a"));
    assert.equal(ring.getExistingReplicas(node("a")), 0);
    assert.equal(route(31), "b");
  });

  it("lets a later point with the same hash replace the earlier one, as Java's TreeMap.put", () => {
    const ring = new ConsistentHashRouter<HashNode>([node("a"), node("b")], 1, { hash: () => 7 });
    assert.equal(ring.routeNode("anything")?.getKey(), "b");
  });

  it("refuses a negative virtual node count", () => {
    assert.throws(
      () => new ConsistentHashRouter([node("a")], -1),
      (err) => isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL) && err.message === "illegal virtual node counts :-1",
    );
  });
});

describe("AllocateMessageQueueConsistentHash", () => {
  it('is named "CONSISTENT_HASH" and refuses a negative virtual node count with RocketMQ\'s message', () => {
    assert.equal(new AllocateMessageQueueConsistentHash().getName(), "CONSISTENT_HASH");
    assert.throws(
      () => new AllocateMessageQueueConsistentHash(-1),
      (err) => isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL) && err.message === "illegal virtualNodeCnt :-1",
    );
  });

  // Expectations computed on the JVM (Java's MessageDigest, String.getBytes and TreeMap) by a transcription of
  // RocketMQ's ConsistentHashRouter, MD5Hash and MessageQueue.toString.
  it("matches RocketMQ's allocation of 8 queues over the 3 consumers, 10 virtual nodes", () => {
    const strategy = new AllocateMessageQueueConsistentHash();
    const result = Object.fromEntries(
      CIDS.map((cid) => [cid, strategy.allocate("g", cid, EIGHT, CIDS).map((q) => `${q.brokerName}:${q.queueId}`)]),
    );
    assert.deepEqual(result, {
      "10.200.110.172@12864": ["broker-a:0", "broker-b:0", "broker-b:2"],
      "10.200.110.184@20131": ["broker-a:3"],
      "10.83.2.15@13674": ["broker-a:1", "broker-a:2", "broker-b:1", "broker-b:3"],
    });
  });

  it("matches RocketMQ's allocation of 10 queues over CID-0..CID-3 with 3 and with 10 virtual nodes", () => {
    assert.deepEqual(byOwner(new AllocateMessageQueueConsistentHash(3), TEN, CID4), {
      "CID-0": [3, 5, 8],
      "CID-1": [2],
      "CID-2": [4],
      "CID-3": [0, 1, 6, 7, 9],
    });
    assert.deepEqual(byOwner(new AllocateMessageQueueConsistentHash(10), TEN, CID4), {
      "CID-0": [1],
      "CID-1": [],
      "CID-2": [0, 3, 4, 5, 8],
      "CID-3": [2, 6, 7, 9],
    });
  });

  it("gives every queue to exactly one consumer", () => {
    for (const [queues, consumers] of [
      [20, 10],
      [10, 20],
      [1, 1],
      [7, 3],
    ] as const) {
      const mqAll = Array.from({ length: queues }, (_, i) => mq("brokerName", i, "topic_test"));
      const cidAll = Array.from({ length: consumers }, (_, i) => `CID-${i}`);
      assert.equal(owners(new AllocateMessageQueueConsistentHash(3), mqAll, cidAll).size, queues);
    }
  });

  it("moves only the queues of a consumer that leaves, and only queues to a consumer that joins", () => {
    const strategy = new AllocateMessageQueueConsistentHash(3);
    const mqAll = Array.from({ length: 20 }, (_, i) => mq("brokerName", i, "topic_test"));
    const cidAll = Array.from({ length: 10 }, (_, i) => `CID-${i}`);
    const before = owners(strategy, mqAll, cidAll);

    const afterRemove = owners(strategy, mqAll, cidAll.slice(1));
    for (const [queue, owner] of before) if (owner !== "CID-0") assert.equal(afterRemove.get(queue), owner);

    const joined = [...cidAll.slice(1), "CID-NEW"];
    const afterAdd = owners(strategy, mqAll, joined);
    let stayed = 0;
    for (const [queue, owner] of afterAdd) {
      if (owner !== "CID-NEW") assert.equal(owner, afterRemove.get(queue));
      if (owner === afterRemove.get(queue)) stayed++;
    }
    assert.ok(stayed >= mqAll.length / 2, `most queues stay (${stayed} of ${mqAll.length})`);
  });

  it("uses a custom hash function when given one", () => {
    // A constant hash puts every point on one spot; the last consumer's last point wins it.
    const strategy = new AllocateMessageQueueConsistentHash(2, { hash: () => 1 });
    assert.equal(strategy.allocate("g", "c2", EIGHT, ["c1", "c2"]).length, 8);
    assert.deepEqual(strategy.allocate("g", "c1", EIGHT, ["c1", "c2"]), []);
  });

  it("allocates nothing with 0 virtual nodes (an empty ring)", () => {
    assert.deepEqual(new AllocateMessageQueueConsistentHash(0).allocate("g", "c1", EIGHT, ["c1"]), []);
  });
});
