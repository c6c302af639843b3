/**
 * @module RocketMQ's `AllocateMessageQueueByConfig` ("CONFIG"): each consumer reads a fixed list of queues
 * that its operator configured, whatever the other consumers do.
 */
import type { MessageQueue } from "../../core/message-queue.js";
import type { AllocateMessageQueueStrategy } from "./strategy.js";

/**
 * A fixed assignment. Like RocketMQ's, it checks nothing and ignores its arguments: the configured list
 * is the answer, even for queues outside `mqAll`. Until `setMessageQueueList` is called it allocates
 * nothing (RocketMQ returns null, which its rebalance reads as nothing).
 *
 * @example
 * const strategy = new AllocateMessageQueueByConfig();
 * strategy.setMessageQueueList([new MessageQueue("T", "broker-a", 0)]);
 */
export class AllocateMessageQueueByConfig implements AllocateMessageQueueStrategy {
  private messageQueueList: MessageQueue[] = [];

  getName(): string {
    return "CONFIG";
  }

  allocate(_consumerGroup: string, _currentCID: string, _mqAll: MessageQueue[], _cidAll: string[]): MessageQueue[] {
    return [...this.messageQueueList];
  }

  getMessageQueueList(): MessageQueue[] {
    return [...this.messageQueueList];
  }

  setMessageQueueList(messageQueueList: readonly MessageQueue[]): void {
    this.messageQueueList = [...messageQueueList];
  }
}
