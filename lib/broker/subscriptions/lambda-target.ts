/**
 * @module A Lambda target: a synchronous `Invoke` (RequestResponse) through the AWS SDK's Lambda client with the
 * delivery body as the event. A function error (`X-Amz-Function-Error`: the handler threw, or timed out) fails
 * the batch; a result `{"batchItemFailures": [...]}` fails just those messages, as SQS's event source mapping.
 * The stage's role may invoke only functions whose resource policy grants it (docs/subscriptions.md).
 */
import { InvokeCommand, type LambdaClient } from "@aws-sdk/client-lambda";
import { type DeliveryOutcome, type DeliveryTarget, failure, readPartialFailures } from "./delivery.js";

export class LambdaTarget implements DeliveryTarget {
  constructor(
    private readonly client: LambdaClient,
    private readonly functionArn: string,
    private readonly timeoutMs: number,
  ) {}

  async deliver(body: string, signal: AbortSignal): Promise<DeliveryOutcome> {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.timeoutMs)]);
    const ids = new Set((JSON.parse(body) as { Records: { messageId: string }[] }).Records.map((r) => r.messageId));
    try {
      const result = await this.client.send(
        new InvokeCommand({
          FunctionName: this.functionArn,
          InvocationType: "RequestResponse",
          Payload: Buffer.from(body, "utf8"),
        }),
        { abortSignal: deadline },
      );
      const payload = result.Payload ? Buffer.from(result.Payload).toString("utf8") : "";
      if (result.FunctionError !== undefined)
        return failure(`the function failed (${result.FunctionError}): ${payload}`);
      return readPartialFailures(payload, ids, false);
    } catch (err) {
      if (deadline.aborted && !signal.aborted) return failure(`no answer within ${this.timeoutMs} ms`);
      return failure(`the invoke failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
