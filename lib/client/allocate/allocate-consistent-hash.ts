/**
 * @module RocketMQ's `AllocateMessageQueueConsistentHash` ("CONSISTENT_HASH"): consumers sit on a hash
 * ring and each queue goes to the consumer after its hash, so a consumer joining or leaving moves only
 * the queues next to it.
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { MessageQueue } from "../../core/message-queue.js";
import { ConsistentHashRouter, type HashFunction, type HashNode } from "./consistent-hash-router.js";
import { type AllocateMessageQueueStrategy, checkAllocateArgs } from "./strategy.js";

class ClientNode implements HashNode {
  constructor(private readonly clientID: string) {}

  getKey(): string {
    return this.clientID;
  }
}

/**
 * Consistent hashing over `virtualNodeCnt` points per consumer (10 by default), with RocketMQ's MD5 ring
 * hash unless `customHashFunction` is given. Queues are hashed by `MessageQueue.toString()`, as in Java,
 * so a Nimbus consumer and a RocketMQ consumer of one group agree on who reads what.
 *
 * @example
 * const strategy = new AllocateMessageQueueConsistentHash();
 * strategy.allocate("g", "10.0.0.1@1#2", mqAll, cidAll);
 */
export class AllocateMessageQueueConsistentHash implements AllocateMessageQueueStrategy {
  private readonly virtualNodeCnt: number;
  private readonly customHashFunction: HashFunction | undefined;

  constructor(virtualNodeCnt = 10, customHashFunction?: HashFunction) {
    if (!Number.isInteger(virtualNodeCnt) || virtualNodeCnt < 0) {
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `illegal virtualNodeCnt :${virtualNodeCnt}`);
    }
    this.virtualNodeCnt = virtualNodeCnt;
    this.customHashFunction = customHashFunction;
  }

  getName(): string {
    return "CONSISTENT_HASH";
  }

  allocate(consumerGroup: string, currentCID: string, mqAll: MessageQueue[], cidAll: string[]): MessageQueue[] {
    if (!checkAllocateArgs(consumerGroup, currentCID, mqAll, cidAll)) return [];
    const nodes = cidAll.map((cid) => new ClientNode(cid));
    const router = new ConsistentHashRouter(nodes, this.virtualNodeCnt, this.customHashFunction);
    return mqAll.filter((mq) => router.routeNode(mq.toString())?.getKey() === currentCID);
  }
}
