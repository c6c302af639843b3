/**
 * @module The issue-20 handover scenario, for members in this process or in their own processes: 360
 * messages on 4 queues of broker-a, consumed by a clustering PushConsumer group whose listener takes ~8 ms
 * per message (one call at a time per member); members A and B start, C joins after a quarter is processed,
 * A shuts down at half. `Member` abstracts where a member runs; `Deliveries` counts what the group got.
 * The run waits until the group is quiet (every queue committed at its end, nothing delivered for a full
 * commit period) so late duplicates are counted too. Timings are reported, never asserted.
 */
import type { NimbusApi } from "../../lib/client/transport/api-client.js";
import { MessageQueue } from "../../lib/core/message-queue.js";
import { waitUntil } from "./consumer-helpers.js";

/** One delivery as the test records it. */
export interface Delivery {
  msgId: string;
  queue: string;
  queueOffset: number;
}

/** What the group received, over all members. */
export class Deliveries {
  readonly counts = new Map<string, number>();
  total = 0;
  lastAt = Date.now();
  readonly firstOf = new Map<string, number>();

  record(member: string, ds: readonly Delivery[]): void {
    if (!this.firstOf.has(member)) this.firstOf.set(member, Date.now());
    for (const d of ds) this.counts.set(d.msgId, (this.counts.get(d.msgId) ?? 0) + 1);
    this.total += ds.length;
    this.lastAt = Date.now();
  }

  get distinct(): number {
    return this.counts.size;
  }

  get duplicates(): number {
    return this.total - this.counts.size;
  }
}

/** A consumer of the scenario group, in this process or another. */
export interface Member {
  readonly name: string;
  start(): Promise<void>;
  /** A clean shutdown (commit, release, leave). */
  shutdown(): Promise<void>;
  /** The SDK's count of deliveries of messages another member had committed (read after shutdown for a process). */
  reportedDuplicates(): number;
}

export interface ScenarioResult {
  sent: number;
  distinct: number;
  deliveries: number;
  duplicates: number;
  lost: number;
  reportedDuplicates: number;
  joinToFirstDeliveryMs: number;
}

export const SCENARIO_MESSAGES = 360;

/** Creates the topic (4 queues on broker-a) and stores 90 messages in each; answers their ids. */
export async function prepareScenario(api: NimbusApi, topic: string): Promise<string[]> {
  await api.updateTopic(topic, { readQueueNums: 4, writeQueueNums: 4, brokerNames: ["broker-a"] });
  const ids: string[] = [];
  for (let queueId = 0; queueId < 4; queueId++) {
    for (let i = 0; i < SCENARIO_MESSAGES / 4; i += 30) {
      const messages = Array.from({ length: 30 }, (_, k) => ({
        body: new TextEncoder().encode(`q${queueId}-${i + k}`),
      }));
      const res = await api.send({ topic, brokerName: "broker-a", queueId, messages });
      ids.push(...res.msgIds);
    }
  }
  return ids;
}

/**
 * Runs the scenario with members `a`, `b`, `c` (not started): A and B start, C joins at a quarter, A shuts
 * down at half; then waits for the end and for quiet. `quietMs`: how long nothing may arrive before the
 * count is final (at least one commit period of the members).
 */
export async function runScenario(
  api: NimbusApi,
  group: string,
  topic: string,
  ids: readonly string[],
  members: { a: Member; b: Member; c: Member },
  deliveries: Deliveries,
  quietMs: number,
): Promise<ScenarioResult> {
  const { a, b, c } = members;
  await Promise.all([a.start(), b.start()]);
  await waitUntil(() => deliveries.distinct >= ids.length / 4, "a quarter processed", 120_000);
  const joinedAt = Date.now();
  await c.start();
  await waitUntil(() => deliveries.distinct >= ids.length / 2, "half processed", 120_000);
  await a.shutdown();
  await waitUntil(() => ids.every((id) => deliveries.counts.has(id)), "every message delivered", 120_000);
  const queues = Array.from({ length: 4 }, (_, i) => new MessageQueue(topic, "broker-a", i));
  await waitUntil(
    async () => {
      const committed = await api.queryOffsets(group, topic);
      const atEnd = queues.every((q) =>
        committed.some((e) => e.queueId === q.queueId && e.offset === SCENARIO_MESSAGES / 4),
      );
      return atEnd && Date.now() - deliveries.lastAt > quietMs;
    },
    "every queue committed at its end and nothing delivered for a commit period",
    120_000,
    100,
  );
  await Promise.all([b.shutdown(), c.shutdown()]);
  const cFirst = deliveries.firstOf.get(c.name);
  return {
    sent: ids.length,
    distinct: deliveries.distinct,
    deliveries: deliveries.total,
    duplicates: deliveries.duplicates,
    lost: ids.filter((id) => !deliveries.counts.has(id)).length,
    reportedDuplicates: a.reportedDuplicates() + b.reportedDuplicates() + c.reportedDuplicates(),
    joinToFirstDeliveryMs: cFirst === undefined ? -1 : cFirst - joinedAt,
  };
}
