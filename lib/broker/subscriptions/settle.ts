/**
 * @module What happens to a delivered batch: acked, retried after the backoff (its receipt made invisible that
 * long, so POP redelivers it), or, past `maxReconsumeTimes`, forwarded to `%DLQ%<group>`. Shared by the
 * unordered workers and the ordered ones (which retry in place and settle only at the end).
 */

import type { DeliveryOutcome } from "./delivery.js";
import { DELIVERY_ERROR_PROPERTY, deliveryErrorText } from "./delivery-errors.js";
import type { PopPort, PoppedMessage } from "./pop-port.js";
import type { Subscription } from "./subscription-store.js";

/** How long a failed message waits before its next delivery: `initialMs · 2^(attempt-1)`, at most `maxMs`. */
export function backoffMs(subscription: Subscription, deliveryAttempt: number): number {
  const { initialMs, maxMs } = subscription.retryBackoff;
  return Math.min(maxMs, initialMs * 2 ** Math.min(30, Math.max(0, deliveryAttempt - 1)));
}

/** The messages of a batch the outcome failed. */
export function failedOf(batch: readonly PoppedMessage[], outcome: DeliveryOutcome): PoppedMessage[] {
  if (outcome.kind === "failure") return [...batch];
  const failed = new Set(outcome.failedIds);
  return batch.filter((m) => failed.has(m.msgId));
}

/** Why a delivery failed: the target's reason, or, for messages it named as failed, that it named them. */
export function reasonOf(outcome: DeliveryOutcome): string {
  return outcome.kind === "failure"
    ? outcome.reason
    : `the target answered that ${outcome.failedIds.length} message(s) of the batch failed (batchItemFailures)`;
}

/** What a dead-lettered subscription message carries: why its last delivery failed (`DELIVERY_ERROR`). */
export const deadLetterProperties = (outcome: DeliveryOutcome): Record<string, string> => ({
  [DELIVERY_ERROR_PROPERTY]: deliveryErrorText(reasonOf(outcome)),
});

/** Whether a failed message has had its last attempt (its reconsume times reached the maximum). */
export const exhausted = (subscription: Subscription, m: PoppedMessage): boolean =>
  m.deliveryAttempt - 1 >= subscription.maxReconsumeTimes;

/**
 * Acks `done` and answers how many POP took: a handle no longer current (its invisible time ended while the
 * target took longer) is not counted, and POP delivers that message again (at least once).
 */
export async function ackCount(
  pop: PopPort,
  subscription: Subscription,
  done: readonly PoppedMessage[],
): Promise<number> {
  const answer = await pop.ack(
    subscription.group,
    subscription.topic,
    done.map((m) => m.receiptHandle),
  );
  return answer.entries.filter((e) => e.code === "OK").length;
}

export interface SettleReport {
  acked: number;
  retried: number;
  deadLettered: number;
  /** The earliest time a retried message is visible again (when to wake), or undefined. */
  retryAt: number | undefined;
}

export async function settle(
  pop: PopPort,
  subscription: Subscription,
  batch: readonly PoppedMessage[],
  outcome: DeliveryOutcome,
  now: () => number,
): Promise<SettleReport> {
  const failed = new Set(failedOf(batch, outcome));
  const done = batch.filter((m) => !failed.has(m));
  const report: SettleReport = { acked: 0, retried: 0, deadLettered: 0, retryAt: undefined };
  const { group, topic } = subscription;
  if (done.length > 0) report.acked = await ackCount(pop, subscription, done);
  for (const m of failed) {
    if (exhausted(subscription, m)) {
      await pop.forwardToDeadLetter(group, topic, m.receiptHandle, deadLetterProperties(outcome));
      report.deadLettered++;
      continue;
    }
    const waitMs = backoffMs(subscription, m.deliveryAttempt);
    await pop.changeInvisibleDuration(group, topic, m.receiptHandle, waitMs);
    report.retried++;
    const at = now() + waitMs;
    report.retryAt = report.retryAt === undefined ? at : Math.min(report.retryAt, at);
  }
  return report;
}
