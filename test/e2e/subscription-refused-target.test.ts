/**
 * @module A stored subscription whose target the stage no longer allows (docs/subscriptions.md "Where targets may
 * be"), on the embedded store and on the AWS adapters (dynalite + s3rver): a server whose targets may reach public
 * addresses only (every AWS stage's setting), and two subscriptions stored before that rule (an earlier version,
 * or a save under a wider setting) whose targets are a real webhook on loopback, one by its address and one by a
 * name that resolves there (`localhost`). Neither target gets a connection, so never the signature: each delivery
 * fails with the reason (its SubAfter trace record says it), and with `maxReconsumeTimes` 0 the message is
 * dead-lettered. Saving such a target is refused outright (test/e2e/subscriptions-suite.ts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusError } from "../../lib/client/index.js";
import { queryMessageTrace, type TraceRecord } from "../../lib/client/trace/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { waitUntil } from "../support/consumer-helpers.js";
import { dispatchOf, MODE_LABEL, uniqueName } from "../support/server-fixture.js";
import { httpTarget, useDeliveryFixture } from "../support/subscription-delivery.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

const TEST = { timeout: 180_000 };

for (const mode of ["local", "aws"] as const) {
  describe(`subscription targets refused at delivery (${MODE_LABEL[mode]}, public addresses only)`, () => {
    const f = useDeliveryFixture(mode, { subscriptionTargetNetworks: "public" });

    it(
      "a stored loopback target, by address or by name, gets nothing: failed with the reason, dead-lettered",
      TEST,
      async () => {
        const target = await f.target(() => ({ status: 204 }), { scheme: "http" });
        try {
          const { port } = new URL(target.url);
          const topic = await f.topic(1);
          const stored = [
            {
              group: uniqueName("SubLoopAddress"),
              url: target.url,
              reason: /^the target is refused: 127\.0\.0\.1 is a loopback address/,
            },
            {
              group: uniqueName("SubLoopName"),
              url: `http://localhost:${port}/hook`,
              reason: /localhost resolves to a refused address/,
            },
          ];
          for (const { group, url } of stored)
            await f.storeUnchecked(group, {
              topic,
              target: httpTarget(url),
              batchSize: 1,
              maxReconsumeTimes: 0,
              enableMsgTrace: true,
            });
          const [msgId = ""] = await f.send(topic, ["refused"]);
          await dispatchOf(f.server).wakeAll();
          for (const { group } of stored)
            await f.until(async () => (await f.deadLetters(group)).includes("refused"), `the message in %DLQ%${group}`);
          assert.deepEqual(target.deliveries, [], "no request reached the target");
          assert.equal(target.inFlight, 0);

          // Each attempt's SubAfter carries why it failed.
          const api = new NimbusApi({ endpoints: f.url, timeoutMs: TEST_TIMEOUT_MS });
          let records: TraceRecord[] = [];
          await waitUntil(
            async () => {
              // The trace topic is made by its first record (these subscriptions were stored around the service).
              records = await queryMessageTrace(api, msgId).catch((e: unknown) => {
                if (e instanceof NimbusError && e.code === "TOPIC_NOT_EXIST") return [];
                throw e;
              });
              return records.filter((r) => r.traceType === "SubAfter").length >= stored.length;
            },
            "a SubAfter record per subscription",
            60_000,
            100,
          );
          for (const { group, reason } of stored) {
            const after = records.find((r) => r.traceType === "SubAfter" && r.groupName === group);
            assert.equal(after?.success, false, group);
            assert.match(after?.error ?? "", reason, group);
          }
        } finally {
          await target.close();
        }
      },
    );
  });
}
