/**
 * @module What a consumer costs besides reading messages: idle polls (a pull at the end offset of an empty
 * queue, answered NO_NEW_MSG at once: Lambda has no long polling) and offset commits. Each measured
 * sequentially (one call in flight), with the storage's request counter read around the phase.
 */
import type { LocalServer } from "../../lib/dev/local-server.js";
import { diffCounts, type RequestCounts } from "../../lib/storage/request-counter.js";
import { BROKER, GROUP, MAX_ERRORS } from "./data-plane.js";
import { call, type PullAnswer } from "./http.js";
import {
  type CostBreakdown,
  costPerMillion,
  type LatencySummary,
  type PerUnit,
  perUnit,
  round,
  roundPerUnit,
  summarize,
} from "./stats.js";

export interface IdlePollResult {
  polls: number;
  errors: number;
  latency: LatencySummary;
  counts: RequestCounts;
  perPoll: PerUnit;
  costPerMillionPolls: CostBreakdown;
  /** USD per queue per hour at one poll per second, and at one poll per 30 s (a backed-off client). */
  costPerQueueHourAt1s: number;
  costPerQueueHourAt30s: number;
}

export interface CommitResult {
  commits: number;
  /** Queue offsets in each commit. */
  queuesPerCommit: number;
  errors: number;
  latency: LatencySummary;
  counts: RequestCounts;
  perCommit: PerUnit;
  costPerMillionCommits: CostBreakdown;
}

/**
 * `polls` pulls one at a time, cycling over the topic's queues, each at the queue's end offset (a consumer
 * that has caught up). Every answer must be NO_NEW_MSG.
 */
export async function runIdlePolls(
  server: LocalServer,
  topic: string,
  queueEnds: readonly number[],
  polls: number,
  budgetMs: number,
): Promise<IdlePollResult> {
  await server.context.broker.registerBrokers();
  const latencies: number[] = [];
  let errors = 0;
  const before = server.storage.counter.snapshot();
  const deadline = performance.now() + budgetMs;
  let done = 0;
  for (; done < polls && performance.now() < deadline && errors < MAX_ERRORS; done++) {
    const queueId = done % queueEnds.length;
    const request = {
      consumerGroup: GROUP,
      topic,
      brokerName: BROKER,
      queueId,
      queueOffset: queueEnds[queueId] ?? 0,
      maxMsgNums: 32,
    };
    const answer = await call<PullAnswer>(server.url, "POST", "/pull", JSON.stringify(request));
    latencies.push(answer.elapsedMs);
    if (!answer.ok || answer.body.pullStatus !== "NO_NEW_MSG") errors++;
  }
  const counts = diffCounts(server.storage.counter.snapshot(), before);
  const per = perUnit(counts, done, done);
  const cost = costPerMillion(per);
  return {
    polls: done,
    errors,
    latency: summarize(latencies),
    counts,
    perPoll: roundPerUnit(per, 5),
    costPerMillionPolls: cost,
    costPerQueueHourAt1s: round((cost.total * 3600) / 1e6, 6),
    costPerQueueHourAt30s: round((cost.total * 120) / 1e6, 6),
  };
}

/**
 * `commits` offset commits (`PUT /offsets/{group}/{topic}`) one at a time, each carrying the offsets of
 * `queuesPerCommit` queues, as a client that owns that many queues commits them all at once.
 */
export async function runCommits(
  server: LocalServer,
  topic: string,
  queueEnds: readonly number[],
  commits: number,
  queuesPerCommit: number,
): Promise<CommitResult> {
  const commit = (offsetTable: { brokerName: string; queueId: number; offset: number }[]) =>
    call<unknown>(server.url, "PUT", `/offsets/${GROUP}/${topic}`, JSON.stringify({ offsetTable }));
  await server.context.broker.registerBrokers();
  // A warm-up commit: an API instance records the group's first commit on a topic once (one more write).
  await commit([{ brokerName: BROKER, queueId: 0, offset: 0 }]);
  const latencies: number[] = [];
  let errors = 0;
  const before = server.storage.counter.snapshot();
  let done = 0;
  for (; done < commits && errors < MAX_ERRORS; done++) {
    const first = (done * queuesPerCommit) % queueEnds.length;
    const offsetTable = Array.from({ length: queuesPerCommit }, (_, i) => {
      const queueId = (first + i) % queueEnds.length;
      return { brokerName: BROKER, queueId, offset: queueEnds[queueId] ?? 0 };
    });
    const answer = await commit(offsetTable);
    latencies.push(answer.elapsedMs);
    if (!answer.ok) errors++;
  }
  const counts = diffCounts(server.storage.counter.snapshot(), before);
  const per = perUnit(counts, done, done);
  return {
    commits: done,
    queuesPerCommit,
    errors,
    latency: summarize(latencies),
    counts,
    perCommit: roundPerUnit(per, 5),
    costPerMillionCommits: costPerMillion(per),
  };
}
