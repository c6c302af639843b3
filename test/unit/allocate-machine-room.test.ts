import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AllocateMessageQueueAveragely } from "../../lib/client/allocate/allocate-averagely.js";
import { AllocateMessageQueueAveragelyByCircle } from "../../lib/client/allocate/allocate-averagely-by-circle.js";
import { AllocateMessageQueueByConfig } from "../../lib/client/allocate/allocate-by-config.js";
import { AllocateMessageQueueByMachineRoom } from "../../lib/client/allocate/allocate-by-machine-room.js";
import {
  AllocateMachineRoomNearby,
  type MachineRoomResolver,
} from "../../lib/client/allocate/allocate-machine-room-nearby.js";
import type { AllocateMessageQueueStrategy } from "../../lib/client/allocate/strategy.js";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { MessageQueue } from "../../lib/core/message-queue.js";

const mq = (brokerName: string, queueId: number, topic = "topic") => new MessageQueue(topic, brokerName, queueId);
const ids = (queues: readonly MessageQueue[]) => queues.map((q) => q.queueId);
const keys = (queues: readonly MessageQueue[]) => queues.map((q) => q.key()).sort();

function assertIllegal(fn: () => unknown, message: string): void {
  assert.throws(fn, (err) => isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL) && err.message === message);
}

describe("AllocateMessageQueueByConfig", () => {
  it('is named "CONFIG" and returns the configured queues whatever it is asked', () => {
    const strategy = new AllocateMessageQueueByConfig();
    assert.equal(strategy.getName(), "CONFIG");
    assert.deepEqual(strategy.allocate("g", "c1", [mq("b", 0)], ["c1"]), []);
    const configured = [mq("broker-a", 1), mq("broker-b", 7)];
    strategy.setMessageQueueList(configured);
    configured.pop(); // the strategy keeps its own copy
    assert.deepEqual(keys(strategy.allocate("g", "other", [mq("b", 0)], ["c1"])), [
      "topic#broker-a#1",
      "topic#broker-b#7",
    ]);
    assert.equal(strategy.getMessageQueueList().length, 2);
  });
});

describe("AllocateMessageQueueByMachineRoom", () => {
  const strategy = new AllocateMessageQueueByMachineRoom();
  strategy.setConsumeridcs(["room1"]);

  it('is named "MACHINE_ROOM"', () => assert.equal(strategy.getName(), "MACHINE_ROOM"));

  it("shares only the listed rooms' queues, in blocks plus one leftover each (RocketMQ's test)", () => {
    const queues = Array.from({ length: 10 }, (_, i) => mq(i < 5 ? "room1@broker-a" : "room2@broker-b", i));
    const cids = ["CID_PREFIX0", "CID_PREFIX1"];
    assert.deepEqual(ids(strategy.allocate("", "CID_PREFIX0", queues, cids)), [0, 1, 4]);
    assert.deepEqual(ids(strategy.allocate("", "CID_PREFIX1", queues, cids)), [2, 3]);
    assertIllegal(() => strategy.allocate("", "CID_PREFIX0", [], cids), "mqAll is null or mqAll empty");
  });

  it("reads broker names as Java's split('@') does: exactly two parts, trailing empty parts dropped", () => {
    const queues = [
      mq("room1@broker-a", 0), // room1
      mq("room1@", 1), // one part: skipped
      mq("room1@broker@", 2), // Java drops the trailing "": two parts, room1
      mq("room1@x@y", 3), // three parts: skipped
      mq("broker-c", 4), // no room: skipped
    ];
    assert.deepEqual(ids(strategy.allocate("g", "c", queues, ["c"])), [0, 2]);
  });

  it("gives consumers beyond the queues nothing, and an unknown consumer nothing", () => {
    const queues = [mq("room1@a", 0), mq("room1@a", 1)];
    const cids = ["c1", "c2", "c3"];
    assert.deepEqual(
      cids.map((cid) => ids(strategy.allocate("g", cid, queues, cids))),
      [[0], [1], []],
    );
    assert.deepEqual(strategy.allocate("g", "x", queues, cids), []);
  });

  it("says so when no rooms were set", () => {
    assertIllegal(
      () => new AllocateMessageQueueByMachineRoom().allocate("g", "c", [mq("room1@a", 0)], ["c"]),
      "consumeridcs is not set: call setConsumeridcs first",
    );
  });
});

describe("AllocateMachineRoomNearby", () => {
  // RocketMQ's test resolver: the room is the part before the first "-".
  const resolver: MachineRoomResolver = {
    brokerDeployIn: (q) => q.brokerName.split("-")[0]!,
    consumerDeployIn: (cid) => cid.split("-")[0]!,
  };
  const nearby = new AllocateMachineRoomNearby(new AllocateMessageQueueAveragely(), resolver);
  const queuesOf = (rooms: number, perRoom: number) =>
    Array.from({ length: rooms }, (_, r) =>
      Array.from({ length: perRoom }, (_, i) => mq(`IDC${r + 1}-brokerName`, i, "topic_test")),
    ).flat();
  const consumersOf = (rooms: number, perRoom: number) =>
    Array.from({ length: rooms }, (_, r) => Array.from({ length: perRoom }, (_, i) => `IDC${r + 1}-CID-${i}`)).flat();

  function allocateAll(mqAll: MessageQueue[], cidAll: string[]) {
    return new Map(cidAll.map((cid) => [cid, nearby.allocate("Test-C-G", cid, mqAll, cidAll)]));
  }

  it("is named after its inner strategy", () => {
    assert.equal(nearby.getName(), "MACHINE_ROOM_NEARBY-AVG");
    assert.equal(
      new AllocateMachineRoomNearby(new AllocateMessageQueueAveragelyByCircle(), resolver).getName(),
      "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE",
    );
  });

  it("keeps every room's queues with that room's consumers when every room has consumers", () => {
    const mqAll = queuesOf(5, 20);
    const cidAll = consumersOf(5, 10);
    const result = allocateAll(mqAll, cidAll);
    for (const [cid, queues] of result) {
      for (const q of queues) assert.equal(resolver.brokerDeployIn(q), resolver.consumerDeployIn(cid));
    }
    assert.deepEqual(keys([...result.values()].flat()), keys(mqAll));
  });

  it("shares the queues of a room without consumers among all consumers", () => {
    const mqAll = queuesOf(3, 4); // IDC1..IDC3
    const cidAll = consumersOf(2, 2); // consumers only in IDC1 and IDC2
    const result = allocateAll(mqAll, cidAll);
    // Own room first (4 queues over 2 consumers), then IDC3's 4 queues over all 4 consumers.
    assert.deepEqual(
      result.get("IDC1-CID-0")!.map((q) => `${q.brokerName}:${q.queueId}`),
      ["IDC1-brokerName:0", "IDC1-brokerName:1", "IDC3-brokerName:0"],
    );
    assert.deepEqual(
      result.get("IDC2-CID-1")!.map((q) => `${q.brokerName}:${q.queueId}`),
      ["IDC2-brokerName:2", "IDC2-brokerName:3", "IDC3-brokerName:3"],
    );
    assert.deepEqual(keys([...result.values()].flat()), keys(mqAll));
  });

  it("lets consumers of a room without brokers take only rooms without consumers", () => {
    const mqAll = queuesOf(1, 4); // IDC1 only
    const cidAll = ["IDC1-CID-0", "IDC9-CID-0"];
    const result = allocateAll(mqAll, cidAll);
    assert.equal(result.get("IDC1-CID-0")!.length, 4);
    assert.deepEqual(result.get("IDC9-CID-0"), []);
  });

  it("refuses an empty machine room with RocketMQ's messages", () => {
    const blankBroker: MachineRoomResolver = { brokerDeployIn: () => "", consumerDeployIn: () => "IDC1" };
    assertIllegal(
      () =>
        new AllocateMachineRoomNearby(new AllocateMessageQueueAveragely(), blankBroker).allocate(
          "g",
          "c",
          [mq("b", 3)],
          ["c"],
        ),
      "Machine room is null for mq MessageQueue [topic=topic, brokerName=b, queueId=3]",
    );
    const blankConsumer: MachineRoomResolver = { brokerDeployIn: () => "IDC1", consumerDeployIn: () => "" };
    assertIllegal(
      () =>
        new AllocateMachineRoomNearby(new AllocateMessageQueueAveragely(), blankConsumer).allocate(
          "g",
          "c",
          [mq("b", 3)],
          ["c"],
        ),
      "Machine room is null for consumer id c",
    );
  });

  it("refuses a missing strategy or resolver with RocketMQ's messages", () => {
    const missing = undefined as unknown as AllocateMessageQueueStrategy;
    assertIllegal(() => new AllocateMachineRoomNearby(missing, resolver), "allocateMessageQueueStrategy is null");
    const noResolver = undefined as unknown as MachineRoomResolver;
    assertIllegal(
      () => new AllocateMachineRoomNearby(new AllocateMessageQueueAveragely(), noResolver),
      "machineRoomResolver is null",
    );
  });
});
