/**
 * @module RocketMQ's default strategy, `AllocateMessageQueueAveragely` ("AVG"): each consumer takes one
 * contiguous block of the sorted queues; the first `mqAll.length % cidAll.length` consumers take one more.
 */
import type { MessageQueue } from "../../core/message-queue.js";
import { type AllocateMessageQueueStrategy, checkAllocateArgs } from "./strategy.js";

/**
 * Contiguous blocks: with 8 queues and 3 consumers, the consumers get 3, 3 and 2 queues in that order.
 * Blocks keep a consumer's queues on as few brokers as possible.
 *
 * @example
 * new AllocateMessageQueueAveragely().allocate("g", "c2", eightQueues, ["c1", "c2", "c3"]); // queues 3, 4, 5
 */
export class AllocateMessageQueueAveragely implements AllocateMessageQueueStrategy {
  getName(): string {
    return "AVG";
  }

  allocate(consumerGroup: string, currentCID: string, mqAll: MessageQueue[], cidAll: string[]): MessageQueue[] {
    if (!checkAllocateArgs(consumerGroup, currentCID, mqAll, cidAll)) return [];
    const index = cidAll.indexOf(currentCID);
    const queues = mqAll.length;
    const consumers = cidAll.length;
    const mod = queues % consumers;
    const getsOneMore = mod > 0 && index < mod;
    const base = Math.trunc(queues / consumers);
    const averageSize = queues <= consumers ? 1 : getsOneMore ? base + 1 : base;
    const startIndex = getsOneMore ? index * averageSize : index * averageSize + mod;
    // With more consumers than queues, startIndex passes the end and the range is empty.
    const range = Math.min(averageSize, queues - startIndex);
    const result: MessageQueue[] = [];
    for (let i = 0; i < range; i++) result.push(mqAll[(startIndex + i) % queues]!);
    return result;
  }
}
