/**
 * @module Where a consumer starts reading a queue (RocketMQ's `RebalancePushImpl.computePullFromWhere`):
 * at the group's committed offset when there is one; otherwise, by `consumeFromWhere`, from the consumer's start
 * (LAST: the queue's max offset when the consumer started, its first message for a queue or topic that did not
 * exist then; `StartSnapshot`), its min offset (FIRST), or the first message stored at or after a time
 * (TIMESTAMP, found by a binary search of single-message pulls, since the API has no search by time).
 *
 * @example
 * const start = await computePullFromWhere(mq, { store, bounds: new QueueBounds(api), ...options });
 * // start.offset; start.fromStore false when it came from consumeFromWhere
 */

import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { MessageQueue } from "../../core/message-queue.js";
import { isRetryTopic } from "../../core/names.js";
import type { NimbusApi } from "../transport/index.js";
import type { ConsumeFromWhere } from "./consumer-options.js";
import type { OffsetStore } from "./offset-store.js";

export interface Bounds {
  minOffset: number;
  maxOffset: number;
}

/**
 * A queue's min and max offsets from `GET /topics/{topic}/status`, one request per topic for the reads of
 * one moment; make a new one per rebalance round so the bounds are fresh.
 */
export class QueueBounds {
  readonly #topics = new Map<string, Promise<Map<string, Bounds>>>();

  constructor(private readonly api: NimbusApi) {}

  async of(mq: MessageQueue): Promise<Bounds> {
    let topic = this.#topics.get(mq.topic);
    if (topic === undefined) {
      topic = this.api
        .topicStatus(mq.topic)
        .then((rows) => new Map(rows.map((r) => [`${r.brokerName}#${r.queueId}`, r])));
      // A failure is not cached: the next round asks again.
      topic.catch(() => this.#topics.delete(mq.topic));
      this.#topics.set(mq.topic, topic);
    }
    const row = (await topic).get(`${mq.brokerName}#${mq.queueId}`);
    return { minOffset: row?.minOffset ?? 0, maxOffset: row?.maxOffset ?? 0 };
  }
}

/**
 * The max offset of every queue of the subscribed topics when the consumer started (one topic status read per
 * topic). A new group's LAST starts there, so whatever is sent after `start()` is consumed however late the
 * rebalance hands a queue over: RocketMQ's broker gets the same by answering offset 0 for a queue whose
 * messages are all still in memory. A queue that was not there at the start, on a topic that was (more
 * queues) or was not (created by a later send), starts at its first message: all of it came after.
 */
export class StartSnapshot {
  /** Per topic: its queues' max offsets, or "absent" (the topic did not exist). */
  readonly #topics = new Map<string, Map<string, number> | "absent">();

  /** Reads the topics' status now; a topic whose status cannot be read is left out (LAST: the max offset then). */
  static async take(api: NimbusApi, topics: Iterable<string>): Promise<StartSnapshot> {
    const snapshot = new StartSnapshot();
    await Promise.all(
      [...topics].map(async (topic) => {
        try {
          const rows = await api.topicStatus(topic);
          snapshot.#topics.set(topic, new Map(rows.map((r) => [`${r.brokerName}#${r.queueId}`, r.maxOffset])));
        } catch (err) {
          if (err instanceof NimbusError && err.code === ErrorCode.TOPIC_NOT_EXIST)
            snapshot.#topics.set(topic, "absent");
        }
      }),
    );
    return snapshot;
  }

  /** Where LAST starts `mq`: its max offset at the start, "first" when it came later, undefined when unknown. */
  lastOffset(mq: MessageQueue): number | "first" | undefined {
    const topic = this.#topics.get(mq.topic);
    if (topic === undefined) return undefined;
    if (topic === "absent") return "first";
    return topic.get(`${mq.brokerName}#${mq.queueId}`) ?? "first";
  }
}

export interface PullFromWhereContext {
  api: NimbusApi;
  consumerGroup: string;
  store: OffsetStore;
  bounds: QueueBounds;
  consumeFromWhere: ConsumeFromWhere;
  consumeTimestamp: number;
  /** The queues' offsets at the consumer's start (LAST); without it LAST is the max offset now. */
  started?: StartSnapshot | undefined;
}

export interface StartOffset {
  offset: number;
  /** True when the offset was committed before; false when `consumeFromWhere` chose it. */
  fromStore: boolean;
}

/** Throws when the store or the broker cannot be read; the rebalance then retries the queue later. */
export async function computePullFromWhere(mq: MessageQueue, ctx: PullFromWhereContext): Promise<StartOffset> {
  const committed = await ctx.store.readOffset(mq, "READ_FROM_STORE");
  if (committed >= 0) return { offset: committed, fromStore: true };
  const bounds = await ctx.bounds.of(mq);
  switch (ctx.consumeFromWhere) {
    case "CONSUME_FROM_FIRST_OFFSET":
      return { offset: bounds.minOffset, fromStore: false };
    case "CONSUME_FROM_TIMESTAMP":
      return {
        offset: await searchOffset(ctx.api, ctx.consumerGroup, mq, ctx.consumeTimestamp, bounds),
        fromStore: false,
      };
    default: {
      // RocketMQ reads a retry topic from its start: what is there was sent back for this group.
      if (isRetryTopic(mq.topic)) return { offset: bounds.minOffset, fromStore: false };
      const atStart = ctx.started?.lastOffset(mq);
      const offset =
        atStart === undefined
          ? bounds.maxOffset
          : atStart === "first"
            ? bounds.minOffset
            : Math.max(atStart, bounds.minOffset);
      return { offset, fromStore: false };
    }
  }
}

/**
 * The offset of the first message stored at or after `timestamp` (the max offset when there is none), as
 * RocketMQ's searchOffset. Store times grow with the offset within a queue, so a binary search over
 * [minOffset, maxOffset) needs about log2(n) pulls of one message.
 */
export async function searchOffset(
  api: NimbusApi,
  consumerGroup: string,
  mq: MessageQueue,
  timestamp: number,
  bounds: Bounds,
): Promise<number> {
  let lo = bounds.minOffset;
  let hi = bounds.maxOffset;
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const res = await api.pull({
      consumerGroup,
      topic: mq.topic,
      brokerName: mq.brokerName,
      queueId: mq.queueId,
      queueOffset: mid,
      maxMsgNums: 1,
    });
    const found = res.messages[0];
    if (res.pullStatus === "FOUND" && found !== undefined) {
      if (found.storeTimestamp < timestamp) lo = found.queueOffset + 1;
      else hi = mid;
    } else if (res.pullStatus === "OFFSET_ILLEGAL" && mid < res.minOffset) {
      // Retention removed the messages below minOffset meanwhile.
      lo = res.minOffset;
    } else {
      hi = mid;
    }
  }
  return lo;
}
