/**
 * Example: a subscriber function, the handler of infra/example-app/sst.config.ts's `NimbusSubscription`. Nimbus's
 * Dispatch function invokes it with a batch (`NimbusEvent`, SQS's shape); the ids it answers in
 * `batchItemFailures` are delivered again (after the backoff, then to `%DLQ%<group>`), the rest are acked.
 * A thrown error redelivers the whole batch.
 */
import type { NimbusBatchResponse, NimbusEvent, NimbusHandler } from "../../lib/client/index.js";

export const handler: NimbusHandler = async (event: NimbusEvent): Promise<NimbusBatchResponse> => {
  const failed: string[] = [];
  for (const record of event.Records) {
    const order = JSON.parse(Buffer.from(record.body, "base64").toString("utf8")) as { id?: string };
    if (order.id === undefined) failed.push(record.messageId);
    else console.log(`order ${order.id} from queue ${record.queueId} at ${record.queueOffset}`);
  }
  return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
};
