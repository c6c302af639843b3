import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AllocateMessageQueueAveragely } from "../../lib/client/allocate/allocate-averagely.js";
import { AllocateMessageQueueAveragelyByCircle } from "../../lib/client/allocate/allocate-averagely-by-circle.js";
import { AllocateMessageQueueByMachineRoom } from "../../lib/client/allocate/allocate-by-machine-room.js";
import { AllocateMessageQueueConsistentHash } from "../../lib/client/allocate/allocate-consistent-hash.js";
import { AllocateMachineRoomNearby } from "../../lib/client/allocate/allocate-machine-room-nearby.js";
import type { AllocateMessageQueueStrategy } from "../../lib/client/allocate/strategy.js";
import { MessageQueue } from "../../lib/core/message-queue.js";

/** A deterministic generator (a linear congruential one), so a failure names a seed that reproduces it. */
function random(seed: number): (n: number) => number {
  let x = seed;
  return (n) => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x % n;
  };
}

const ROOMS = ["room1", "room2", "room3"];

/** Every partitioning strategy (CONFIG is a fixed list per consumer, not a partition). */
function strategies(): AllocateMessageQueueStrategy[] {
  const byRoom = new AllocateMessageQueueByMachineRoom();
  byRoom.setConsumeridcs(ROOMS); // every broker's room is listed, so every queue is shared out
  const resolver = {
    brokerDeployIn: (q: MessageQueue) => q.brokerName.split("@")[0]!,
    consumerDeployIn: (cid: string) => cid.split("@")[0]!,
  };
  return [
    new AllocateMessageQueueAveragely(),
    new AllocateMessageQueueAveragelyByCircle(),
    new AllocateMessageQueueConsistentHash(),
    new AllocateMessageQueueConsistentHash(1),
    byRoom,
    new AllocateMachineRoomNearby(new AllocateMessageQueueAveragely(), resolver),
    new AllocateMachineRoomNearby(new AllocateMessageQueueConsistentHash(), resolver),
  ];
}

describe("every strategy partitions the queues", () => {
  for (const strategy of strategies()) {
    it(`${strategy.getName()}: the consumers' shares are disjoint and cover mqAll (1..20 queues x 1..10 consumers)`, () => {
      for (let seed = 1; seed <= 200; seed++) {
        const next = random(seed);
        const queueCount = 1 + next(20);
        const consumerCount = 1 + next(10);
        const mqAll = Array.from(
          { length: queueCount },
          (_, i) => new MessageQueue("T", `${ROOMS[next(ROOMS.length)]}@broker-${next(4)}`, i),
        ).sort(MessageQueue.compare);
        const cidAll = Array.from(
          { length: consumerCount },
          (_, i) => `${ROOMS[next(ROOMS.length)]}@10.0.${next(3)}.${i}@${1000 + i}`,
        ).sort();
        const seen = new Set<string>();
        for (const cid of cidAll) {
          for (const q of strategy.allocate("group", cid, mqAll, cidAll)) {
            assert.equal(seen.has(q.key()), false, `seed ${seed}: ${q.key()} went to two consumers`);
            seen.add(q.key());
          }
        }
        assert.deepEqual(
          [...seen].sort(),
          mqAll.map((q) => q.key()).sort(),
          `seed ${seed}: ${queueCount} queues, ${consumerCount} consumers`,
        );
      }
    });
  }
});
