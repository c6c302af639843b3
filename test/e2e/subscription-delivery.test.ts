/**
 * @module Subscription delivery end to end (docs/subscriptions.md), on the embedded store and on the AWS adapters
 * (dynalite + s3rver): a subscription PUT over HTTP, messages sent with the SDK's producer, and `nimbus dev`'s
 * in-process dispatcher delivering them over POP to an HTTPS target (its self-signed certificate trusted by the
 * server's `targetCaPem`, never by turning verification off) that checks every signature.
 * - a 2xx acks the batch, nothing is delivered twice, `maxConcurrency` is never exceeded (counted at the target)
 *   and is reached from a single wake (a target that answers only once 100 deliveries are open);
 * - a secret stored in clear by an earlier version still signs; the next save seals it;
 * - a 500 redelivers through the retry path and after `maxReconsumeTimes` the message is in `%DLQ%<group>`;
 *   no answer within `timeoutMs` redelivers too;
 * - `batchItemFailures` (and a plain JSON id list) redeliver only the failed ids;
 * - an ordered subscription never has two deliveries of one queue in flight and never skips past a failed
 *   message: every delivery of a queue starts at its first unacked offset.
 * - a plain HTTP target works too; an HTTPS target whose certificate is not trusted receives nothing: each attempt
 *   fails its handshake (counted at the target), is retried, and the message ends in `%DLQ%<group>`.
 * Every wait is bounded and fails with the dispatcher's totals and last errors.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ROUTES_TABLE } from "../../lib/broker/store/index.js";
import { dispatchOf, MODE_LABEL, uniqueName } from "../support/server-fixture.js";
import { FAST_RETRY, httpTarget, SECRET, TARGET_SCHEME, useDeliveryFixture } from "../support/subscription-delivery.js";
import { makeTestCertificate } from "../support/test-certificate.js";
import { failItems, type TargetDelivery } from "../support/webhook-target.js";

const TEST = { timeout: 180_000 };

/** How many times each body was delivered, and with which reconsumeTimes. */
const attemptsOf = (deliveries: readonly TargetDelivery[]): Map<string, number[]> => {
  const seen = new Map<string, number[]>();
  for (const d of deliveries)
    d.records.forEach((r, i) => {
      const body = d.bodies[i] ?? "";
      seen.set(body, [...(seen.get(body) ?? []), r.reconsumeTimes]);
    });
  return seen;
};

for (const mode of ["local", "aws"] as const) {
  describe(`subscription delivery (${MODE_LABEL[mode]}, ${TARGET_SCHEME} target)`, () => {
    const f = useDeliveryFixture(mode);

    it("a 2xx acks: every message once, signed, in batches, never more than maxConcurrency at once", TEST, async () => {
      const target = await f.target(() => ({ status: 204 }));
      try {
        const { topic } = await f.subscribed(target, 4, { batchSize: 4, maxConcurrency: 2 });
        const bodies = Array.from({ length: 16 }, (_, i) => `ok-${i}`);
        const before = f.totals();
        for (let q = 0; q < 4; q++) await f.send(topic, bodies.slice(q * 4, q * 4 + 4), q);
        await f.until(() => attemptsOf(target.deliveries).size === bodies.length, "every message delivered");
        await f.until(() => f.totals().acked - before.acked >= bodies.length, "every delivery acked");
        assert.ok(
          target.deliveries.every((d) => d.signatureValid),
          "every delivery is signed with the secret",
        );
        assert.ok(
          target.deliveries.every((d) => d.records.length >= 1 && d.records.length <= 4),
          "batches of at most 4",
        );
        const attempts = attemptsOf(target.deliveries);
        assert.deepEqual([...attempts.keys()].sort(), [...bodies].sort());
        assert.ok(
          [...attempts.values()].every((a) => a.length === 1 && a[0] === 0),
          "nothing delivered twice",
        );
        assert.ok(target.maxInFlight <= 2, `maxConcurrency 2, seen ${target.maxInFlight} at once`);
        const record = target.deliveries[0]?.records[0];
        assert.equal(record?.topic, topic);
        assert.equal(record?.tags, "TagA");
        assert.equal(record?.brokerName, "broker-a");
      } finally {
        await target.close();
      }
    });

    it("maxConcurrency 100 is reached: the target holds every delivery until 100 are in flight", TEST, async () => {
      const release: (() => void)[] = [];
      let released = false;
      const target = await f.target(
        () =>
          new Promise((resolve) => {
            const answer = () => resolve({ status: 200 });
            if (released) return answer();
            release.push(answer);
            if (release.length >= 100) {
              released = true;
              for (const r of release.splice(0)) r();
            }
          }),
      );
      try {
        const topic = await f.topic(1);
        const group = uniqueName("SubWide");
        // A long timeout: on a loaded machine gathering 100 deliveries may take a while, and none may time out meanwhile.
        const wide = { batchSize: 1, maxConcurrency: 100, timeoutMs: 600_000 };
        await f.subscribe(group, { topic, target: httpTarget(target.url), ...wide });
        const bodies = Array.from({ length: 200 }, (_, i) => `wide-${i}`);
        // One append, so one hint: the 100 workers it wakes receive from the same queue at once, and a worker
        // whose receive comes back empty stops (only a later wake would start it again).
        await f.sendBatch(topic, bodies);
        await f.until(
          () => released,
          () => `100 deliveries in flight at once (seen at most ${target.maxInFlight})`,
        );
        await f.until(() => attemptsOf(target.deliveries).size === bodies.length, "every message delivered");
        assert.equal(target.maxInFlight, 100, "never more than maxConcurrency");
      } finally {
        for (const r of release.splice(0)) r();
        await target.close();
      }
    });

    it("a secret stored in clear still signs its deliveries; the next save seals it", TEST, async () => {
      const target = await f.target(() => ({ status: 204 }));
      try {
        const topic = await f.topic(1);
        const group = uniqueName("SubClear");
        const definition = { topic, target: httpTarget(target.url), batchSize: 1 };
        await f.storeUnchecked(group, definition);
        await f.send(topic, ["clear-secret"]);
        await dispatchOf(f.server).wakeAll();
        const delivered = (body: string) => target.deliveries.some((d) => d.bodies.includes(body));
        await f.until(() => delivered("clear-secret"), "the delivery signed with the clear secret");
        await f.subscribe(group, definition);
        const item = await f.server.storage.table(ROUTES_TABLE).get({ pk: "subscriptions", sk: group });
        assert.ok(item !== undefined && !JSON.stringify(item).includes(SECRET), "the saved item holds no clear secret");
        assert.match(String(item.sealedSecret), /^v1:/);
        await f.send(topic, ["sealed-secret"]);
        await f.until(() => delivered("sealed-secret"), "the delivery signed with the sealed secret");
        assert.ok(
          target.deliveries.every((d) => d.signatureValid),
          "both signed with the secret",
        );
      } finally {
        await target.close();
      }
    });

    it("a 500 retries then dead-letters after maxReconsumeTimes; no answer in time retries too", TEST, async () => {
      const target = await f.target((d) => {
        if (d.bodies.includes("always-500")) return { status: 500, body: { error: "down" } };
        if (d.bodies.includes("slow") && d.records.some((r) => r.reconsumeTimes === 0)) return "hold";
        return { status: 200 };
      });
      try {
        const { topic, group } = await f.subscribed(target, 1, {
          batchSize: 1,
          maxReconsumeTimes: 2,
          timeoutMs: 1000,
          retryBackoff: FAST_RETRY,
        });
        await f.send(topic, ["always-500", "slow"]);
        await f.until(async () => (await f.deadLetters(group)).length === 1, "always-500 in %DLQ%");
        await f.until(() => (attemptsOf(target.deliveries).get("slow") ?? []).includes(1), "slow redelivered");
        const attempts = attemptsOf(target.deliveries);
        assert.deepEqual(attempts.get("always-500"), [0, 1, 2], "first delivery and maxReconsumeTimes (2) retries");
        assert.deepEqual(attempts.get("slow"), [0, 1], "unanswered within timeoutMs: delivered again, then acked");
        assert.deepEqual(await f.deadLetters(group), ["always-500"]);
      } finally {
        await target.close();
      }
    });

    it("partial batch failures redeliver only the failed ids (batchItemFailures or a JSON id list)", TEST, async () => {
      const target = await f.target((d) => {
        if (d.records.some((r) => r.reconsumeTimes > 0)) return { status: 200, body: { batchItemFailures: [] } };
        if (d.bodies.includes("p1")) return failItems(d, new Set(["p1", "p3"]));
        const failed = d.records.filter((_, i) => d.bodies[i] === "q2").map((r) => r.messageId);
        return { status: 200, body: failed };
      });
      try {
        const { topic } = await f.subscribed(target, 1, { batchSize: 8, retryBackoff: FAST_RETRY });
        await f.sendBatch(topic, ["p0", "p1", "p2", "p3"]);
        await f.until(() => attemptsOf(target.deliveries).size === 4, "the first batch delivered");
        await f.sendBatch(topic, ["q0", "q1", "q2"]);
        const retried = ["p1", "p3", "q2"];
        await f.until(
          () => retried.every((b) => (attemptsOf(target.deliveries).get(b) ?? []).length === 2),
          "the failed ids delivered again",
        );
        const first = target.deliveries[0];
        assert.deepEqual(first?.bodies, ["p0", "p1", "p2", "p3"], "one batch of the four");
        const attempts = attemptsOf(target.deliveries);
        for (const b of ["p0", "p2", "q0", "q1"]) assert.deepEqual(attempts.get(b), [0], `${b} delivered once`);
        for (const b of retried) assert.deepEqual(attempts.get(b), [0, 1], `${b} delivered again, alone`);
        const again = target.deliveries.filter((d) => d.records.some((r) => r.reconsumeTimes > 0));
        assert.ok(
          again.every((d) => d.bodies.every((b) => retried.includes(b))),
          "only failed ids come back",
        );
      } finally {
        await target.close();
      }
    });

    it("ordering 'queue': one delivery of a queue at a time, never past a failed message", TEST, async () => {
      /** Per queue: the offset its next delivery must start at (its first unacked message). */
      const expected = new Map<number, number>();
      const violations: string[] = [];
      const failOnce = new Set(["q0-2", "q1-4"]);
      const target = await f.target((d) => {
        const queueId = d.records[0]?.queueId ?? -1;
        const offsets = d.records.map((r) => r.queueOffset);
        if (d.records.some((r) => r.queueId !== queueId)) violations.push(`two queues in one delivery: ${d.bodies}`);
        const start = expected.get(queueId) ?? 0;
        if (offsets[0] !== start) violations.push(`queue ${queueId} delivery starts at ${offsets[0]}, not ${start}`);
        if (offsets.some((o, i) => o !== start + i)) violations.push(`queue ${queueId} not in order: ${offsets}`);
        const failedAt = d.bodies.findIndex((b, i) => failOnce.has(b) && d.records[i]?.reconsumeTimes === 0);
        expected.set(queueId, failedAt < 0 ? start + offsets.length : start + failedAt);
        return failedAt < 0 ? { status: 200 } : failItems(d, new Set([d.bodies[failedAt] ?? ""]));
      });
      try {
        const { topic } = await f.subscribed(target, 2, {
          ordering: "queue",
          batchSize: 3,
          maxConcurrency: 2,
          retryBackoff: FAST_RETRY,
        });
        const bodies = (q: number) => Array.from({ length: 6 }, (_, i) => `q${q}-${i}`);
        await Promise.all([f.send(topic, bodies(0), 0), f.send(topic, bodies(1), 1)]);
        await f.until(
          () => violations.length > 0 || (expected.get(0) === 6 && expected.get(1) === 6),
          "both queues acked to their end",
        );
        assert.deepEqual(violations, []);
        assert.ok(target.maxInFlightPerQueue <= 1, `one delivery per queue, seen ${target.maxInFlightPerQueue}`);
        const attempts = attemptsOf(target.deliveries);
        assert.deepEqual(attempts.get("q0-2"), [0, 1]);
        assert.deepEqual(attempts.get("q1-4"), [0, 1]);
        assert.deepEqual(attempts.get("q0-0"), [0], "acked before the failure: not delivered again");
      } finally {
        await target.close();
      }
    });
    it("a plain HTTP target: delivered and acked", TEST, async () => {
      const target = await f.target(() => ({ status: 200 }), { scheme: "http" });
      try {
        assert.match(target.url, /^http:/);
        const { topic } = await f.subscribed(target, 1, { batchSize: 2 });
        const before = f.totals();
        await f.send(topic, ["h0", "h1"]);
        await f.until(() => f.totals().acked - before.acked >= 2, "both acked");
        assert.deepEqual(target.deliveries.flatMap((d) => d.bodies).sort(), ["h0", "h1"]);
      } finally {
        await target.close();
      }
    });

    it(
      "an HTTPS target whose certificate is not trusted gets nothing: retried, then dead-lettered",
      TEST,
      async (t) => {
        const untrusted = makeTestCertificate();
        if (typeof untrusted === "string") return t.skip(untrusted);
        const target = await f.target(() => ({ status: 200 }), { tls: untrusted });
        try {
          const { topic, group } = await f.subscribed(target, 1, {
            batchSize: 1,
            maxReconsumeTimes: 1,
            retryBackoff: FAST_RETRY,
          });
          const before = f.totals();
          await f.send(topic, ["untrusted"]);
          await f.until(async () => (await f.deadLetters(group)).length === 1, "the message in %DLQ%");
          assert.deepEqual(target.deliveries, [], "no request got past the handshake");
          assert.ok(target.tlsClientErrors >= 2, `a refused handshake per attempt, seen ${target.tlsClientErrors}`);
          assert.equal(f.totals().acked, before.acked, "nothing acked");
          assert.ok(f.totals().retried - before.retried >= 1, "the failed delivery was retried");
        } finally {
          await target.close();
          untrusted.remove();
        }
      },
    );
  });
}
