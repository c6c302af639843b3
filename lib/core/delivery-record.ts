/**
 * @module One delivered message as a subscription's target receives it (docs/subscriptions.md):
 * the one definition the dispatcher writes (lib/broker/subscriptions) and the SDK's typed handler reads
 * (lib/client/subscriptions).
 */
export interface DeliveryRecord {
  /** The message id (UNIQ_KEY): what `batchItemFailures` names. */
  messageId: string;
  topic: string;
  tags: string | null;
  keys: string | null;
  properties: Record<string, string>;
  /** The body in standard base64. */
  body: string;
  brokerName: string;
  queueId: number;
  queueOffset: number;
  /** 0 on the first delivery. */
  reconsumeTimes: number;
}
