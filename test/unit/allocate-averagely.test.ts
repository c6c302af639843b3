import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AllocateMessageQueueAveragely } from "../../lib/client/allocate/allocate-averagely.js";
import { AllocateMessageQueueAveragelyByCircle } from "../../lib/client/allocate/allocate-averagely-by-circle.js";
import { AllocateMessageQueueByConfig } from "../../lib/client/allocate/allocate-by-config.js";
import { AllocateMessageQueueByMachineRoom } from "../../lib/client/allocate/allocate-by-machine-room.js";
import { AllocateMessageQueueConsistentHash } from "../../lib/client/allocate/allocate-consistent-hash.js";
import { AllocateMachineRoomNearby } from "../../lib/client/allocate/allocate-machine-room-nearby.js";
import { type AllocateMessageQueueStrategy, checkAllocateArgs } from "../../lib/client/allocate/strategy.js";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import { MessageQueue } from "../../lib/core/message-queue.js";

const mq = (brokerName: string, queueId: number, topic = "TopicTest") => new MessageQueue(topic, brokerName, queueId);
const names = (queues: readonly MessageQueue[]) => queues.map((q) => `${q.brokerName}:${q.queueId}`);

/** 8 queues, broker-a 0-3 then broker-b 0-3: already in `MessageQueue.compare` order. */
const EIGHT = [0, 1, 2, 3].map((i) => mq("broker-a", i)).concat([0, 1, 2, 3].map((i) => mq("broker-b", i)));
/** The three consumer ids of the brief, sorted as strings: "10.2..." < "10.8...". */
const CIDS = ["10.83.2.15@13674", "10.200.110.172@12864", "10.200.110.184@20131"].sort();

function allocateAll(strategy: AllocateMessageQueueStrategy, mqAll: MessageQueue[], cidAll: string[]) {
  return new Map(cidAll.map((cid) => [cid, strategy.allocate("group", cid, mqAll, cidAll)]));
}

function byMachineRoom(rooms: string[]): AllocateMessageQueueByMachineRoom {
  const strategy = new AllocateMessageQueueByMachineRoom();
  strategy.setConsumeridcs(rooms);
  return strategy;
}

function assertIllegal(fn: () => unknown, message: string): void {
  assert.throws(fn, (err) => isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL) && err.message === message);
}

describe("checkAllocateArgs", () => {
  it("throws RocketMQ's messages on empty arguments, in RocketMQ's order", () => {
    assertIllegal(() => checkAllocateArgs("g", "", [], []), "currentCID is empty");
    assertIllegal(() => checkAllocateArgs("g", "c", [], []), "mqAll is null or mqAll empty");
    assertIllegal(() => checkAllocateArgs("g", "c", EIGHT, []), "cidAll is null or cidAll empty");
  });

  it("is false when the current consumer is not in the list", () => {
    assert.equal(checkAllocateArgs("g", "x", EIGHT, ["c"]), false);
    assert.equal(checkAllocateArgs("g", "c", EIGHT, ["c"]), true);
  });

  const checked: AllocateMessageQueueStrategy[] = [
    new AllocateMessageQueueAveragely(),
    new AllocateMessageQueueAveragelyByCircle(),
    new AllocateMessageQueueConsistentHash(),
    byMachineRoom(["room1"]),
    new AllocateMachineRoomNearby(new AllocateMessageQueueAveragely(), {
      brokerDeployIn: () => "room",
      consumerDeployIn: () => "room",
    }),
  ];
  for (const strategy of checked) {
    it(`${strategy.getName()} checks its arguments and gives an unknown consumer nothing`, () => {
      assertIllegal(() => strategy.allocate("g", "", EIGHT, CIDS), "currentCID is empty");
      assertIllegal(() => strategy.allocate("g", CIDS[0]!, [], CIDS), "mqAll is null or mqAll empty");
      assertIllegal(() => strategy.allocate("g", CIDS[0]!, EIGHT, []), "cidAll is null or cidAll empty");
      assert.deepEqual(strategy.allocate("g", "10.0.0.1@1", EIGHT, CIDS), []);
    });
  }

  it("CONFIG checks nothing, as in RocketMQ", () => {
    assert.deepEqual(new AllocateMessageQueueByConfig().allocate("g", "", [], []), []);
  });
});

describe("AllocateMessageQueueAveragely", () => {
  const strategy = new AllocateMessageQueueAveragely();

  it('is named "AVG"', () => assert.equal(strategy.getName(), "AVG"));

  it("gives 8 queues over 3 consumers as blocks of 3, 3 and 2; the last id gets broker-b 2 and 3", () => {
    assert.deepEqual(CIDS, ["10.200.110.172@12864", "10.200.110.184@20131", "10.83.2.15@13674"]);
    const result = allocateAll(strategy, EIGHT, CIDS);
    assert.deepEqual(names(result.get("10.200.110.172@12864")!), ["broker-a:0", "broker-a:1", "broker-a:2"]);
    assert.deepEqual(names(result.get("10.200.110.184@20131")!), ["broker-a:3", "broker-b:0", "broker-b:1"]);
    assert.deepEqual(names(result.get("10.83.2.15@13674")!), ["broker-b:2", "broker-b:3"]);
  });

  it("gives 5 queues over 2 consumers as 3 and 2", () => {
    const five = EIGHT.slice(0, 5);
    const result = allocateAll(strategy, five, ["c1", "c2"]);
    assert.deepEqual(names(result.get("c1")!), ["broker-a:0", "broker-a:1", "broker-a:2"]);
    assert.deepEqual(names(result.get("c2")!), ["broker-a:3", "broker-b:0"]);
  });

  it("gives 10 queues over 4 consumers 3, 3, 2, 2 (RocketMQ's test)", () => {
    const ten = Array.from({ length: 10 }, (_, i) => mq("brokerName", i, "topic"));
    const cids = ["CID_PREFIX0", "CID_PREFIX1", "CID_PREFIX2", "CID_PREFIX3"];
    assert.deepEqual(
      cids.map((cid) => strategy.allocate("", cid, ten, cids).length),
      [3, 3, 2, 2],
    );
  });

  it("leaves consumers beyond the number of queues with nothing", () => {
    const cids = ["c1", "c2", "c3", "c4", "c5"];
    const result = allocateAll(strategy, EIGHT.slice(0, 3), cids);
    assert.deepEqual(
      cids.map((cid) => names(result.get(cid)!)),
      [["broker-a:0"], ["broker-a:1"], ["broker-a:2"], [], []],
    );
  });

  it("does not sort: it follows the order it is given", () => {
    const reversed = [...EIGHT].reverse();
    assert.deepEqual(names(strategy.allocate("g", "c1", reversed, ["c1", "c2"])), [
      "broker-b:3",
      "broker-b:2",
      "broker-b:1",
      "broker-b:0",
    ]);
  });
});

describe("AllocateMessageQueueAveragelyByCircle", () => {
  const strategy = new AllocateMessageQueueAveragelyByCircle();

  it('is named "AVG_BY_CIRCLE"', () => assert.equal(strategy.getName(), "AVG_BY_CIRCLE"));

  it("deals the i-th queue to consumer i mod n", () => {
    const result = allocateAll(strategy, EIGHT, CIDS);
    assert.deepEqual(names(result.get(CIDS[0]!)!), ["broker-a:0", "broker-a:3", "broker-b:2"]);
    assert.deepEqual(names(result.get(CIDS[1]!)!), ["broker-a:1", "broker-b:0", "broker-b:3"]);
    assert.deepEqual(names(result.get(CIDS[2]!)!), ["broker-a:2", "broker-b:1"]);
  });

  it("leaves consumers beyond the number of queues with nothing", () => {
    assert.deepEqual(strategy.allocate("g", "c3", EIGHT.slice(0, 2), ["c1", "c2", "c3"]), []);
  });
});
