/** @module What the POP service is asked and answers, and what it works with beyond its storage. */
import type { FilterExpression } from "../../core/filter/index.js";
import type { PulledMessage } from "../../protocol/index.js";
import type { AppendInterest } from "../queue-log/index.js";

export interface PopReceiveRequest {
  group: string;
  topic: string;
  filter: FilterExpression;
  /** 1..32 */
  maxMessages: number;
  invisibleMs: number;
  /** 0..20000 */
  longPollMs: number;
  clientId?: string;
  /** Only this broker's queues (what a broker process serves); absent: every broker's. */
  brokerName?: string | undefined;
  /**
   * Runs the long poll's wait: a door whose requests hold work slots passes one that frees the slot meanwhile
   * (lib/http/load-shedder.ts `parkWhile`), so waiting receives never hold what sends need.
   */
  whileWaiting?: (<T>(wait: () => Promise<T>) => Promise<T>) | undefined;
}

/** The stored message as a pull answers it, plus its receipt handle, delivery attempt and invisible time. */
export interface PoppedMessage extends PulledMessage {
  receiptHandle: string;
  deliveryAttempt: number;
  invisibleUntil: number;
}

/** How a group's messages are handed out, as a RocketMQ 5 consumer is told in its Settings. */
export interface PopGroupPolicy {
  /** One message of each message group in flight at a time (RocketMQ: `consumeMessageOrderly`). */
  fifo: boolean;
  /** Deliveries of a message before it goes to `%DLQ%<group>` (RocketMQ: `retryMaxTimes` + 1). */
  maxDeliveryAttempts: number;
  /** The longest a receive is held here. */
  maxLongPollMs: number;
}

/**
 * What a group's subscription group says (lib/broker/groups): `maxDeliveryAttempts` (its retryMaxTimes + 1)
 * when configured, and whether it is FIFO. For a receive (`receiving`) it also throws NO_PERMISSION when
 * consuming is disabled.
 */
export type PopGroupConfig = (
  group: string,
  receiving: boolean,
) => Promise<{ maxDeliveryAttempts?: number | undefined; fifo: boolean }>;

/** What a PopService works with beyond its storage, both optional. */
export interface PopCollaborators {
  /** The group's subscription group (default: not FIFO, the options' max delivery attempts). */
  groupConfig?: PopGroupConfig;
  /**
   * Where a receive that may wait holds its topic, from before its first read until it answers (the broker's queue
   * log's `interest`), so the other worker processes of a deployment tell this one of their appends to the topic.
   */
  interest?: AppendInterest;
}
