/** @module The POP service's settings and RocketMQ 5's defaults for them. */
import { MAX_LONG_POLL_MS } from "../../protocol/index.js";
import type { PopSettings } from "./queue-pop.js";

export interface PopOptions extends PopSettings {
  /** Groups whose receives are FIFO (one message of a message group in flight at a time). */
  fifoGroups: readonly string[];
  /** The longest wait a receive may ask for here (on Lambda a held receive is billed: docs/pop.md). */
  maxLongPollMs: number;
  /** Receives waiting at once in this process; more answer empty at once. */
  maxWaiters: number;
}

/** RocketMQ 5's default: 16 retries after the first delivery. */
export const DEFAULT_POP_MAX_DELIVERY_ATTEMPTS = 17;

export const DEFAULT_POP_OPTIONS: PopOptions = {
  maxDeliveryAttempts: DEFAULT_POP_MAX_DELIVERY_ATTEMPTS,
  redeliveryGraceMs: 1000,
  reviveScanMs: 1000,
  deadLetterMoveMs: 30_000,
  fifoGroups: [],
  maxLongPollMs: MAX_LONG_POLL_MS,
  maxWaiters: 1024,
  retentionMs: 72 * 3600_000,
};
