/**
 * @module A failing subscription says why (docs/subscriptions.md "When deliveries fail"), on the embedded store and
 * on the AWS adapters: a webhook answering 503 gets the message, fails it, and with `maxReconsumeTimes` 0 it is
 * dead-lettered; then `GET /subscriptions/{group}` and the list carry the last delivery error and its time, the
 * dead letter carries `DELIVERY_ERROR`, and the dispatching process logged one line naming the group, the target and
 * the reason. A subscription whose deliveries never failed has no last error.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DELIVERY_ERROR_PROPERTY } from "../../lib/broker/subscriptions/delivery-errors.js";
import { dlqTopic } from "../../lib/core/names.js";
import { dispatchOf, MODE_LABEL, uniqueName } from "../support/server-fixture.js";
import { httpTarget, useDeliveryFixture } from "../support/subscription-delivery.js";

const TEST = { timeout: 180_000 };

interface Info {
  group: string;
  lastDeliveryError?: { reason: string; at: number };
}

for (const mode of ["local", "aws"] as const) {
  describe(`a failing subscription says why (${MODE_LABEL[mode]})`, () => {
    const f = useDeliveryFixture(mode);
    const getJson = async <T>(path: string): Promise<T> => {
      const res = await fetch(`${f.url}${path}`);
      assert.equal(res.status, 200, path);
      return (await res.json()) as T;
    };

    it("the last delivery error on the subscription, DELIVERY_ERROR on the dead letter, a log line", TEST, async () => {
      const target = await f.target(() => ({ status: 503, body: "down for maintenance\n" }));
      const warned: string[] = [];
      const warn = console.warn;
      console.warn = (...args: unknown[]) => {
        warned.push(args.map(String).join(" "));
      };
      try {
        const topic = await f.topic(1);
        const failing = uniqueName("SubFailing");
        const quiet = uniqueName("SubQuiet");
        await f.subscribe(failing, { topic, target: httpTarget(target.url), batchSize: 1, maxReconsumeTimes: 0 });
        await f.subscribe(quiet, { topic: await f.topic(1), target: httpTarget(target.url) });
        assert.equal((await getJson<Info>(`/subscriptions/${failing}`)).lastDeliveryError, undefined);

        const before = Date.now();
        await f.send(topic, ["fails"]);
        await dispatchOf(f.server).wakeAll();
        await f.until(async () => (await f.deadLetters(failing)).includes("fails"), "the dead letter");
        assert.equal(target.deliveries.length, 1, "delivered once, failed, dead-lettered");

        const last = (await getJson<Info>(`/subscriptions/${failing}`)).lastDeliveryError;
        assert.equal(last?.reason, "the target answered 503");
        assert.ok((last?.at ?? 0) >= before - 1000, "stamped with the failure's time");
        const listed = await getJson<{ subscriptions: Info[] }>("/subscriptions");
        assert.deepEqual(listed.subscriptions.find((s) => s.group === failing)?.lastDeliveryError, last);
        assert.equal(listed.subscriptions.find((s) => s.group === quiet)?.lastDeliveryError, undefined);

        const status = await getJson<{ queues: { brokerName: string; queueId: number }[] }>(
          `/topics/${encodeURIComponent(dlqTopic(failing))}/status`,
        );
        const q = status.queues[0];
        const pulled = await fetch(`${f.url}/pull`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            consumerGroup: uniqueName("DlqReader"),
            topic: dlqTopic(failing),
            brokerName: q?.brokerName,
            queueId: q?.queueId,
            queueOffset: 0,
          }),
        });
        const { messages = [] } = (await pulled.json()) as { messages?: { properties: Record<string, string> }[] };
        assert.equal(messages[0]?.properties[DELIVERY_ERROR_PROPERTY], "the target answered 503");

        const line = warned.find((l) => l.includes(`subscription ${failing}`));
        assert.match(line ?? "", new RegExp(`to ${target.url.replace(/[.?]/g, "\\$&")}: the target answered 503`));
      } finally {
        console.warn = warn;
        await target.close();
      }
    });
  });
}
