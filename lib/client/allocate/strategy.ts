/**
 * @module The contract of a queue allocation strategy (RocketMQ's `AllocateMessageQueueStrategy`) and
 * the argument check every built-in strategy shares (`AbstractAllocateMessageQueueStrategy.check`).
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { MessageQueue } from "../../core/message-queue.js";

/**
 * Decides which queues of a topic one consumer of a group reads. Every consumer of the group runs the
 * same strategy on the same inputs, so the results must depend on the inputs only: the rebalance sorts
 * `mqAll` with `MessageQueue.compare` and `cidAll` in string order before calling, and strategies do not
 * sort again.
 *
 * @example
 * const strategy: AllocateMessageQueueStrategy = new AllocateMessageQueueAveragely();
 * const mine = strategy.allocate("orders-group", myClientId, mqAll, cidAll);
 */
export interface AllocateMessageQueueStrategy {
  /** The strategy's name as RocketMQ reports it ("AVG", "CONSISTENT_HASH", ...). */
  getName(): string;
  /** The queues of `mqAll` that `currentCID` should consume; [] when it is not among `cidAll`. */
  allocate(consumerGroup: string, currentCID: string, mqAll: MessageQueue[], cidAll: string[]): MessageQueue[];
}

function illegal(message: string): NimbusError {
  return new NimbusError(ErrorCode.PARAMETER_ILLEGAL, message);
}

/**
 * RocketMQ's shared check: throws `PARAMETER_ILLEGAL` (with RocketMQ's messages) on an empty consumer id,
 * queue list or consumer list, and returns false when `currentCID` is not in `cidAll`. RocketMQ logs that
 * case as a bug and allocates nothing; a consumer whose heartbeat has not reached the broker yet sees it
 * for one rebalance round, so it is not an error.
 *
 * @example
 * if (!checkAllocateArgs(group, currentCID, mqAll, cidAll)) return [];
 */
export function checkAllocateArgs(
  _consumerGroup: string,
  currentCID: string,
  mqAll: readonly MessageQueue[] | null | undefined,
  cidAll: readonly string[] | null | undefined,
): boolean {
  if (currentCID === undefined || currentCID === null || currentCID.length === 0) {
    throw illegal("currentCID is empty");
  }
  if (mqAll === undefined || mqAll === null || mqAll.length === 0) throw illegal("mqAll is null or mqAll empty");
  if (cidAll === undefined || cidAll === null || cidAll.length === 0) throw illegal("cidAll is null or cidAll empty");
  return cidAll.includes(currentCID);
}
