/**
 * @module What a target receives and answers (docs/subscriptions.md): a delivery is
 * `{"Records": [...]}`, one record per message, the body in base64; any 2xx (or a Lambda result without a
 * function error) is success, and `{"batchItemFailures": [{"itemIdentifier": "<messageId>"}]}` (or, for HTTPS,
 * a JSON list of message ids) fails just those. An identifier that names no message of the batch fails the
 * whole batch, as SQS's event source mapping treats it.
 */
import type { DeliveryRecord } from "../../core/delivery-record.js";

export type { DeliveryRecord };

/** A message as the dispatcher has it from a POP receive (the fields a record needs). */
export interface DeliverableMessage {
  msgId: string;
  topic: string;
  brokerName: string;
  queueId: number;
  queueOffset: number;
  tags?: string | undefined;
  keys?: string | readonly string[] | undefined;
  properties: Readonly<Record<string, string>>;
  body: Uint8Array;
  reconsumeTimes: number;
}

export interface DeliveryBody {
  Records: DeliveryRecord[];
}

export function deliveryBody(messages: readonly DeliverableMessage[]): string {
  const body: DeliveryBody = {
    Records: messages.map((m) => ({
      messageId: m.msgId,
      topic: m.topic,
      tags: m.tags ?? null,
      keys: (Array.isArray(m.keys) ? m.keys.join(" ") : (m.keys as string | undefined)) || null,
      properties: { ...m.properties },
      body: Buffer.from(m.body).toString("base64"),
      brokerName: m.brokerName,
      queueId: m.queueId,
      queueOffset: m.queueOffset,
      reconsumeTimes: m.reconsumeTimes,
    })),
  };
  return JSON.stringify(body);
}

/** A target's verdict on one batch: every message done but `failedIds`, or the whole batch failed. */
export type DeliveryOutcome = { kind: "success"; failedIds: readonly string[] } | { kind: "failure"; reason: string };

/** The port both targets implement: deliver one body, within the signal's deadline. */
export interface DeliveryTarget {
  deliver(body: string, signal: AbortSignal): Promise<DeliveryOutcome>;
}

const MAX_REASON_LENGTH = 200;
export const failure = (reason: string): DeliveryOutcome => ({
  kind: "failure",
  reason: reason.slice(0, MAX_REASON_LENGTH),
});

/**
 * The failed ids a successful answer names. Empty text, JSON that is neither shape, or `null`: none failed.
 * `acceptIdList`: an HTTPS target may also answer a plain JSON list of ids.
 */
export function readPartialFailures(
  text: string,
  batchIds: ReadonlySet<string>,
  acceptIdList: boolean,
): DeliveryOutcome {
  if (text.trim() === "") return { kind: "success", failedIds: [] };
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return { kind: "success", failedIds: [] };
  }
  let ids: unknown[] | undefined;
  if (acceptIdList && Array.isArray(answer)) ids = answer;
  else if (typeof answer === "object" && answer !== null && "batchItemFailures" in answer) {
    const list = (answer as { batchItemFailures: unknown }).batchItemFailures;
    if (list === null || list === undefined) return { kind: "success", failedIds: [] };
    if (!Array.isArray(list)) return failure("batchItemFailures is not a list");
    ids = list.map((entry: unknown) =>
      typeof entry === "object" && entry !== null ? (entry as { itemIdentifier?: unknown }).itemIdentifier : entry,
    );
  }
  if (ids === undefined) return { kind: "success", failedIds: [] };
  const failedIds: string[] = [];
  for (const id of ids) {
    if (typeof id !== "string" || !batchIds.has(id))
      return failure(`a batch item failure names no message of the batch: ${JSON.stringify(id)?.slice(0, 80)}`);
    failedIds.push(id);
  }
  return { kind: "success", failedIds };
}
