/**
 * @module What a push consumer reports about its work with each heartbeat (RocketMQ's ConsumerRunningInfo,
 * in part), for `consumerStatus`: the queues assigned to it and, per queue it works on, its lock, the
 * messages cached in its process queue, the offset it would commit and its last pull and consume times.
 *
 * @example
 * const info = await runningInfoOf({ consumeOrderly: true, assigned, queues, locked: (mq) => true, store });
 */
import type { MessageQueue } from "../../core/message-queue.js";
import type { ConsumerRunningInfo } from "../transport/index.js";
import type { OffsetStore } from "./offset-store.js";
import type { ProcessQueue } from "./process-queue.js";

export interface RunningInfoSource {
  consumeOrderly: boolean;
  assigned: readonly MessageQueue[];
  queues: readonly { mq: MessageQueue; pq: ProcessQueue }[];
  locked(mq: MessageQueue): boolean;
  store: OffsetStore;
}

export async function runningInfoOf(source: RunningInfoSource): Promise<ConsumerRunningInfo> {
  const queues = await Promise.all(
    source.queues.map(async ({ mq, pq }) => ({
      topic: mq.topic,
      brokerName: mq.brokerName,
      queueId: mq.queueId,
      locked: source.locked(mq),
      cachedMsgCount: pq.msgCount,
      cachedMsgSize: pq.msgSize,
      consumeOffset: await source.store.readOffset(mq, "READ_FROM_MEMORY"),
      lastPullTimestamp: pq.lastPullTimestamp,
      lastConsumeTimestamp: pq.lastConsumeTimestamp,
    })),
  );
  return {
    consumeOrderly: source.consumeOrderly,
    assignedQueues: source.assigned.map((mq) => ({ topic: mq.topic, brokerName: mq.brokerName, queueId: mq.queueId })),
    queues,
  };
}
