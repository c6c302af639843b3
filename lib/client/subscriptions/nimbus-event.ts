/**
 * @module The typed handler of a subscriber function (docs/subscriptions.md): the event a Lambda target receives
 * (and the body an HTTPS target is POSTed), `{Records: [...]}` like SQS's event, and the answer that fails just
 * some messages (`batchItemFailures`, SQS's partial batch response).
 *
 * @example
 * export const handler: NimbusHandler = async (event) => {
 *   const failed = event.Records.filter((r) => !processOrder(recordBody(r)));
 *   return { batchItemFailures: failed.map((r) => ({ itemIdentifier: r.messageId })) };
 * };
 */
import type { DeliveryRecord } from "../../core/delivery-record.js";

/** One delivered message (`recordBody` decodes its body). */
export type NimbusRecord = DeliveryRecord;

export interface NimbusEvent {
  Records: NimbusRecord[];
}

/** What a handler may answer: nothing (every message done), or the messages that failed. */
export interface NimbusBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

export type NimbusHandler = (
  event: NimbusEvent,
  context?: unknown,
) => Promise<NimbusBatchResponse | undefined> | NimbusBatchResponse | undefined;

/** A record's body as bytes. */
export const recordBytes = (record: NimbusRecord): Uint8Array => new Uint8Array(Buffer.from(record.body, "base64"));
/** A record's body as UTF-8 text. */
export const recordBody = (record: NimbusRecord): string => Buffer.from(record.body, "base64").toString("utf8");
