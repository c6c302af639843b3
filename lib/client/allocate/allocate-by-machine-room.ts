/**
 * @module RocketMQ's `AllocateMessageQueueByMachineRoom` ("MACHINE_ROOM"): brokers are named
 * `<room>@<broker>`; only queues of brokers in the configured rooms are shared out, in blocks, among all
 * consumers of the group.
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { MessageQueue } from "../../core/message-queue.js";
import { type AllocateMessageQueueStrategy, checkAllocateArgs } from "./strategy.js";

/** Java's `String.split("@")`: like JS `split`, but trailing empty parts are dropped. */
function splitLikeJava(value: string, separator: string): string[] {
  const parts = value.split(separator);
  while (parts.length > 0 && parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/**
 * Queues of the rooms in `consumeridcs` (a broker name of exactly two `@` parts whose first part is a
 * listed room), split into `cidAll.length` blocks of equal size; the leftover queues go one each to the
 * first consumers. Brokers named otherwise are never allocated.
 *
 * @example
 * const strategy = new AllocateMessageQueueByMachineRoom();
 * strategy.setConsumeridcs(["room1"]);
 * strategy.allocate("g", "c1", [new MessageQueue("T", "room1@broker-a", 0)], ["c1"]); // that queue
 */
export class AllocateMessageQueueByMachineRoom implements AllocateMessageQueueStrategy {
  private consumeridcs: Set<string> | undefined;

  getName(): string {
    return "MACHINE_ROOM";
  }

  allocate(consumerGroup: string, currentCID: string, mqAll: MessageQueue[], cidAll: string[]): MessageQueue[] {
    if (!checkAllocateArgs(consumerGroup, currentCID, mqAll, cidAll)) return [];
    const rooms = this.consumeridcs;
    // RocketMQ fails with a NullPointerException here, which its rebalance logs; say what is missing.
    if (rooms === undefined) {
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "consumeridcs is not set: call setConsumeridcs first");
    }
    const currentIndex = cidAll.indexOf(currentCID);
    const premqAll = mqAll.filter((mq) => {
      const parts = splitLikeJava(mq.brokerName, "@");
      return parts.length === 2 && rooms.has(parts[0]!);
    });
    const consumers = cidAll.length;
    const mod = Math.trunc(premqAll.length / consumers);
    const rem = premqAll.length % consumers;
    const result = premqAll.slice(mod * currentIndex, mod * currentIndex + mod);
    if (rem > currentIndex) result.push(premqAll[currentIndex + mod * consumers]!);
    return result;
  }

  getConsumeridcs(): Set<string> | undefined {
    return this.consumeridcs === undefined ? undefined : new Set(this.consumeridcs);
  }

  /** The machine rooms (IDCs) whose brokers this group consumes. */
  setConsumeridcs(consumeridcs: Iterable<string>): void {
    this.consumeridcs = new Set(consumeridcs);
  }
}
