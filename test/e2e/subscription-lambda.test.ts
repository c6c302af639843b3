/**
 * @module A Lambda function target end to end, on the embedded store and on the AWS adapters (dynalite + s3rver):
 * `nimbus dev`'s dispatcher invokes the function through the AWS SDK's Lambda client (`@aws-sdk/client-lambda`)
 * against a local endpoint of Lambda's Invoke API (test/support/invoke-api-server.ts, handlers run by
 * lambda-local). The event is `{"Records": [...]}`; an answer `{"batchItemFailures": [...]}` redelivers just
 * those messages, as SQS's event source mapping; a thrown error (`X-Amz-Function-Error`) redelivers the batch.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { NimbusBatchResponse, NimbusEvent } from "../../lib/client/index.js";
import { type InvokeApiServer, startInvokeApiServer } from "../support/invoke-api-server.js";
import { MODE_LABEL, uniqueName } from "../support/server-fixture.js";
import { FAST_RETRY, useDeliveryFixture } from "../support/subscription-delivery.js";

const TEST = { timeout: 180_000 };
const arn = (name: string) => `arn:aws:lambda:us-east-1:123456789012:function:${name}`;
const bodiesOf = (event: NimbusEvent) => event.Records.map((r) => Buffer.from(r.body, "base64").toString("utf8"));

/** Each body the functions saw, with the reconsumeTimes of each time. */
const seen = new Map<string, number[]>();
let thrown = 0;
let invoke: InvokeApiServer | undefined;

before(async () => {
  invoke = await startInvokeApiServer({
    // Fails the messages whose body starts with "fail-" on their first delivery, through batchItemFailures.
    partial: async (event) => {
      const e = event as NimbusEvent;
      const answer: NimbusBatchResponse = { batchItemFailures: [] };
      e.Records.forEach((r, i) => {
        const body = bodiesOf(e)[i] ?? "";
        seen.set(body, [...(seen.get(body) ?? []), r.reconsumeTimes]);
        if (body.startsWith("fail-") && r.reconsumeTimes === 0)
          answer.batchItemFailures.push({ itemIdentifier: r.messageId });
      });
      return answer;
    },
    // Throws on a first delivery: the whole batch comes back.
    throwing: async (event) => {
      const e = event as NimbusEvent;
      for (const [i, r] of e.Records.entries()) {
        const body = bodiesOf(e)[i] ?? "";
        seen.set(body, [...(seen.get(body) ?? []), r.reconsumeTimes]);
      }
      if (e.Records.some((r) => r.reconsumeTimes === 0)) {
        thrown++;
        throw new Error("the handler failed");
      }
      return {};
    },
  });
  // Read by `startLocalServer` when each mode's server starts (NIMBUS_LAMBDA_ENDPOINT, as `nimbus dev`).
  process.env.NIMBUS_LAMBDA_ENDPOINT = invoke.url;
});

for (const mode of ["local", "aws"] as const) {
  describe(`Lambda target (${MODE_LABEL[mode]})`, () => {
    const f = useDeliveryFixture(mode);

    it("batchItemFailures redeliver only those messages; the rest are acked", TEST, async () => {
      const topic = await f.topic(1);
      const group = uniqueName("SubGroup");
      await f.subscribe(group, {
        topic,
        target: { type: "lambda", functionArn: arn("partial") },
        retryBackoff: FAST_RETRY,
      });
      const bodies = [`${mode}-a`, `fail-${mode}-b`, `${mode}-c`];
      await f.sendBatch(topic, bodies);
      await f.until(() => (seen.get(`fail-${mode}-b`) ?? []).length === 2, "the failed message invoked again");
      assert.deepEqual(seen.get(`${mode}-a`), [0]);
      assert.deepEqual(seen.get(`fail-${mode}-b`), [0, 1]);
      assert.deepEqual(seen.get(`${mode}-c`), [0]);
      const events = (invoke?.invocations.get("partial") ?? []) as NimbusEvent[];
      assert.ok(
        events.some((e) => bodiesOf(e).length === 3),
        "the first invocation had the three messages (one batch)",
      );
    });

    it("a thrown error (X-Amz-Function-Error) redelivers the whole batch", TEST, async () => {
      const topic = await f.topic(1);
      const group = uniqueName("SubGroup");
      await f.subscribe(group, {
        topic,
        target: { type: "lambda", functionArn: arn("throwing") },
        retryBackoff: FAST_RETRY,
      });
      const thrownBefore = thrown;
      const bodies = [`${mode}-x`, `${mode}-y`];
      await f.sendBatch(topic, bodies);
      await f.until(() => bodies.every((b) => (seen.get(b) ?? []).includes(1)), "the batch invoked again");
      assert.ok(thrown > thrownBefore, "the function threw");
      for (const b of bodies) assert.deepEqual(seen.get(b), [0, 1]);
    });
  });
}

after(async () => {
  delete process.env.NIMBUS_LAMBDA_ENDPOINT;
  await invoke?.close();
});
