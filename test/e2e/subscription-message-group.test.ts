/**
 * @module `ordering: "messageGroup"` end to end (docs/subscriptions.md), on the embedded store and on the AWS
 * adapters: three message groups (RocketMQ 5's messageGroup, the `__SHARDINGKEY` property) interleaved on ONE
 * queue, a target that fails the first delivery of group A's first message once.
 * - a group's deliveries start at its first unacked message and are contiguous: A's later messages never come
 *   before A's failed one is redelivered (and acked);
 * - group B is delivered while A's failed delivery is still in flight (the target holds A's first answer until B
 *   arrives, so a dispatcher that made B wait behind A would time A out and fail the attempt counts);
 * - never two deliveries of one message group in flight, and never more than `maxConcurrency` (2) at once
 *   though three groups are ready.
 * Every wait is bounded; assertions are on the deliveries' order and contents, never on elapsed time.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MessageConst } from "../../lib/core/message.js";
import { MODE_LABEL } from "../support/server-fixture.js";
import { FAST_RETRY, TARGET_SCHEME, useDeliveryFixture } from "../support/subscription-delivery.js";
import { failItems, type TargetDelivery } from "../support/webhook-target.js";

const TEST = { timeout: 180_000 };
const GROUPS = ["A", "B", "C"] as const;
const PER_GROUP = 3;
/** A0, B0, C0, A1, B1, C1, ...: the groups interleaved on one queue. */
const BODIES = Array.from({ length: PER_GROUP }, (_, i) => GROUPS.map((g) => `${g}${i}`)).flat();

const groupOf = (d: TargetDelivery, i: number) => d.records[i]?.properties[MessageConst.SHARDING_KEY] ?? "?";
const indexOf = (body: string) => Number(body.slice(1));

for (const mode of ["local", "aws"] as const) {
  describe(`subscription ordering by message group (${MODE_LABEL[mode]}, ${TARGET_SCHEME} target)`, () => {
    const f = useDeliveryFixture(mode);

    it("a failed message holds back its group only; one delivery per group, maxConcurrency kept", TEST, async () => {
      /** Per group: the index its next delivery must start at (its first unacked message). */
      const expected = new Map<string, number>();
      const violations: string[] = [];
      /** Every delivery's bodies, in arrival order. */
      const arrivals: string[][] = [];
      let releaseA: () => void = () => {};
      const bArrived = new Promise<void>((resolve) => {
        releaseA = resolve;
      });
      let aHeldWhenBArrived = false;
      let aFirstInFlight = false;
      const target = await f.target(async (d) => {
        arrivals.push(d.bodies);
        const group = groupOf(d, 0);
        if (d.records.some((_, i) => groupOf(d, i) !== group))
          violations.push(`two groups in one delivery: ${d.bodies}`);
        const start = expected.get(group) ?? 0;
        const indexes = d.bodies.map(indexOf);
        if (indexes[0] !== start) violations.push(`group ${group} delivery starts at ${d.bodies[0]}, not ${start}`);
        if (indexes.some((x, i) => x !== start + i)) violations.push(`group ${group} not in order: ${d.bodies}`);
        const failsNow = group === "A" && start === 0 && d.records[0]?.reconsumeTimes === 0;
        expected.set(group, failsNow ? 0 : start + indexes.length);
        if (group === "B") {
          aHeldWhenBArrived ||= aFirstInFlight;
          releaseA();
        }
        if (!failsNow) return { status: 200 };
        aFirstInFlight = true;
        await bArrived;
        aFirstInFlight = false;
        return failItems(d, new Set(["A0"]));
      });
      try {
        const { topic } = await f.subscribed(target, 1, {
          ordering: "messageGroup",
          batchSize: 16,
          maxConcurrency: 2,
          retryBackoff: FAST_RETRY,
        });
        await f.sendBatch(topic, BODIES, (body) => ({ [MessageConst.SHARDING_KEY]: body.slice(0, 1) }));
        await f.until(
          () => violations.length > 0 || GROUPS.every((g) => expected.get(g) === PER_GROUP),
          "every group delivered to its end",
        );
        await f.until(() => f.totals().acked >= BODIES.length && target.inFlight === 0, "every message acked");
        assert.deepEqual(violations, []);
        assert.ok(aHeldWhenBArrived, "B was delivered while A's failing delivery was in flight");
        const aDeliveries = arrivals.filter((b) => b[0]?.startsWith("A"));
        assert.deepEqual(aDeliveries, [
          ["A0", "A1", "A2"],
          ["A0", "A1", "A2"],
        ]);
        const bDelivered = arrivals.findIndex((b) => b.includes("B0"));
        const aRedelivered = arrivals.lastIndexOf(aDeliveries[1] as string[]);
        assert.ok(bDelivered < aRedelivered, "B did not wait for A's redelivery");
        for (const g of ["B", "C"])
          assert.deepEqual(
            arrivals.filter((b) => b[0]?.startsWith(g)),
            [[`${g}0`, `${g}1`, `${g}2`]],
            `group ${g} delivered once, in order`,
          );
        assert.equal(target.maxInFlightPerGroup, 1, "never two deliveries of one message group at once");
        assert.equal(target.maxInFlight, 2, "maxConcurrency 2 reached (A held, B delivered) and never exceeded");
      } finally {
        releaseA();
        await target.close();
      }
    });
  });
}
