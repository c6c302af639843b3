/**
 * @module Traces of subscription deliveries (docs/trace.md "Subscriptions"), on the embedded store and on the AWS
 * adapters (dynalite + s3rver): a subscription with `enableMsgTrace` delivering a traced producer's message to a
 * webhook target that fails once (500) then succeeds; `queryMessageTrace` reads the Pub, then SubBefore/SubAfter
 * twice with the target's answers and reconsume times, written by `nimbus dev`'s in-process dispatcher. A
 * subscription with tracing off writes no record; a customized trace topic gets them instead of the default one.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Message, Producer } from "../../lib/client/index.js";
import { queryMessageTrace, type TraceRecord } from "../../lib/client/trace/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { MODE_LABEL, uniqueName } from "../support/server-fixture.js";
import { FAST_RETRY, httpTarget, SECRET, useDeliveryFixture } from "../support/subscription-delivery.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";
import { startWebhookTarget } from "../support/webhook-target.js";

const TEST = { timeout: 180_000 };
const WAIT_MS = 60_000;

const summary = (records: TraceRecord[]) =>
  records.map((r) => `${r.traceType} ${r.groupName} ${r.success} ${r.consumeStatus ?? "-"} ${r.reconsumeTimes ?? "-"}`);

for (const mode of ["local", "aws"] as const) {
  describe(`subscription traces (${MODE_LABEL[mode]})`, () => {
    const f = useDeliveryFixture(mode);
    const api = () => new NimbusApi({ endpoints: f.url, timeoutMs: TEST_TIMEOUT_MS });

    /** Sends `body` with a traced producer (its Pub record) and answers the message id. */
    async function sendTraced(topic: string, body: string, traceTopic?: string): Promise<string> {
      const producer = new Producer({
        producerGroup: uniqueName("PSubTrace"),
        endpoints: f.url,
        enableMsgTrace: true,
        ...(traceTopic === undefined ? {} : { customizedTraceTopic: traceTopic }),
      });
      await producer.start();
      const sent = await producer.send(new Message(topic, "TagS", `key-${body}`, body));
      await producer.shutdown(); // flushes the Pub record
      return sent.msgId;
    }

    async function traceOf(msgId: string, n: number, traceTopic?: string): Promise<TraceRecord[]> {
      let records: TraceRecord[] = [];
      await waitUntil(
        async () => {
          records = await queryMessageTrace(api(), msgId, traceTopic === undefined ? {} : { traceTopic });
          return records.length >= n;
        },
        `${n} trace records of ${msgId}`,
        WAIT_MS,
        100,
      );
      return records;
    }

    it(
      "tracing off writes no record; on, each delivery attempt's SubBefore/SubAfter with the target's answer",
      TEST,
      async () => {
        let failedOnce = false;
        const target = await startWebhookTarget(SECRET, (d) => {
          if (d.bodies.includes("flaky") && !failedOnce) {
            failedOnce = true;
            return { status: 500, body: { error: "down" } };
          }
          return { status: 204 };
        });
        try {
          // Off (the default): the message is delivered and acked, and the dispatcher traces nothing of it.
          const quietTopic = await f.topic(1);
          const quiet = uniqueName("SubQuiet");
          await f.subscribe(quiet, { topic: quietTopic, target: httpTarget(target.url), batchSize: 1 });
          const before = f.totals();
          const quietId = await sendTraced(quietTopic, "quiet");
          await f.until(() => f.totals().acked > before.acked, "the untraced delivery acked");
          assert.deepEqual(f.traceCounts(), { sent: 0, dropped: 0, failed: 0 }, "no trace record so far");

          // On: fails once (500), then succeeds on the redelivery after the backoff.
          const { topic, group } = await f.subscribed(
            target,
            1,
            { batchSize: 1, retryBackoff: FAST_RETRY, enableMsgTrace: true },
            "SubTraced",
          );
          const msgId = await sendTraced(topic, "flaky");
          const records = await traceOf(msgId, 5);
          assert.deepEqual(summary(records), [
            `Pub ${records[0]?.groupName} true - -`,
            `SubBefore ${group} true - 0`,
            `SubAfter ${group} false RECONSUME_LATER 0`,
            `SubBefore ${group} true - 1`,
            `SubAfter ${group} true CONSUME_SUCCESS 1`,
          ]);
          const subs = records.slice(1);
          for (const r of subs) {
            assert.equal(r.clientId, `dispatcher@${target.url}`, "the dispatcher and its target");
            assert.deepEqual([r.msgId, r.topic, r.tags, r.keys], [msgId, topic, "TagS", ["key-flaky"]]);
            assert.deepEqual([r.brokerName, r.queueId, r.queueOffset], ["broker-a", 0, 0], "where it was read");
          }
          assert.equal(subs[0]?.requestId, subs[1]?.requestId, "an attempt's SubBefore and SubAfter pair");
          assert.notEqual(subs[1]?.requestId, subs[2]?.requestId, "each attempt its own request id");
          assert.equal(subs[1]?.error, "the target answered 500");
          assert.equal(subs[3]?.error, undefined);
          assert.ok((subs[1]?.costTime ?? -1) >= 0 && (subs[3]?.costTime ?? -1) >= 0);
          assert.deepEqual(f.traceCounts(), { sent: 4, dropped: 0, failed: 0 }, "only the traced group's 4 records");
          // The untraced delivery's records would have been queued before its ack, so stored before these 4.
          assert.deepEqual(summary(await queryMessageTrace(api(), quietId)).length, 1, "only the quiet message's Pub");
        } finally {
          await target.close();
        }
      },
    );

    it("a customized trace topic gets the records instead of RMQ_SYS_TRACE_TOPIC", TEST, async () => {
      const target = await startWebhookTarget(SECRET, () => ({ status: 200 }));
      try {
        const topic = await f.topic(1);
        const traceTopic = uniqueName("SubTraces");
        await createTopic(api(), traceTopic, 1, ["broker-a"]);
        const group = uniqueName("SubTracedCustom");
        await f.subscribe(group, {
          topic,
          target: httpTarget(target.url),
          enableMsgTrace: true,
          customizedTraceTopic: traceTopic,
        });
        const msgId = await sendTraced(topic, "custom", traceTopic);
        const records = await traceOf(msgId, 3, traceTopic);
        assert.deepEqual(summary(records).slice(1), [
          `SubBefore ${group} true - 0`,
          `SubAfter ${group} true CONSUME_SUCCESS 0`,
        ]);
        const inDefault = await queryMessageTrace(api(), msgId).catch(() => []);
        assert.equal(inDefault.length, 0);
      } finally {
        await target.close();
      }
    });
  });
}
