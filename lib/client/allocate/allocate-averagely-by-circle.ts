/**
 * @module RocketMQ's `AllocateMessageQueueAveragelyByCircle` ("AVG_BY_CIRCLE"): queues are dealt to the
 * consumers like cards, so consumer i takes queues i, i + n, i + 2n, ...
 */
import type { MessageQueue } from "../../core/message-queue.js";
import { type AllocateMessageQueueStrategy, checkAllocateArgs } from "./strategy.js";

/**
 * Round robin: spreads each consumer's queues over every broker, so losing one broker costs every
 * consumer a little rather than one consumer everything.
 *
 * @example
 * new AllocateMessageQueueAveragelyByCircle().allocate("g", "c2", eightQueues, ["c1", "c2", "c3"]); // queues 1, 4, 7
 */
export class AllocateMessageQueueAveragelyByCircle implements AllocateMessageQueueStrategy {
  getName(): string {
    return "AVG_BY_CIRCLE";
  }

  allocate(consumerGroup: string, currentCID: string, mqAll: MessageQueue[], cidAll: string[]): MessageQueue[] {
    if (!checkAllocateArgs(consumerGroup, currentCID, mqAll, cidAll)) return [];
    const index = cidAll.indexOf(currentCID);
    const result: MessageQueue[] = [];
    for (let i = index; i < mqAll.length; i += cidAll.length) result.push(mqAll[i]!);
    return result;
  }
}
