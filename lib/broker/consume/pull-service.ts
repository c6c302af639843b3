/**
 * @module Pull: check the queue is readable (a readable broker, `queueId < readQueueNums`), read from the
 * queue log with the subscription's filter (a tag expression, or SQL92 over each message's properties), and
 * answer RocketMQ's PullResponse. Pulling deletes nothing,
 * and no call waits for messages: an empty queue answers NO_NEW_MSG at once (clients back off and poll).
 */

import { ErrorCode, NimbusError } from "../../core/errors.js";
import { compileFilter } from "../../core/filter/index.js";
import { MessageConst } from "../../core/message.js";
import { PermName } from "../../core/perm-name.js";
import type { PulledMessage, PullRequest, PullResponse } from "../../protocol/index.js";
import type { RouteCache } from "../names/index.js";
import { queueDataOn } from "../names/index.js";
import { type QueueLog, type StoredMessage, type StoredRecord, storedMessage } from "../queue-log/index.js";

export class PullService {
  constructor(
    private readonly routes: RouteCache,
    private readonly queueLog: QueueLog,
    /** The group's subscription group check: NO_PERMISSION when its consumeEnable is false (lib/broker/groups). */
    private readonly checkConsumeEnabled: (group: string) => Promise<void> = async () => {},
  ) {}

  async pull(req: PullRequest): Promise<PullResponse> {
    const { records, ...answer } = await this.pullRecords(req);
    const queue = { topic: req.topic, brokerName: req.brokerName, queueId: req.queueId };
    return { ...answer, messages: records.map((m) => toPulled(queue, storedMessage(m))) };
  }

  /**
   * `pull`, each message a checked record whose strings are not made: for a door that answers the stored bytes
   * re-framed (the remoting door). The filter, if any, still reads each message's tags and properties.
   */
  async pullRecords(req: PullRequest): Promise<PulledRecords> {
    // PARAMETER_ILLEGAL for a bad expression before anything is read.
    const filter = compileFilter({ type: req.expressionType ?? "TAG", expression: req.subExpression ?? "*" });
    const [route] = await Promise.all([this.routes.get(req.topic), this.checkConsumeEnabled(req.consumerGroup)]);
    const qd = queueDataOn(route, req.topic, req.brokerName);
    if (!PermName.isReadable(qd.perm)) {
      throw new NimbusError(
        ErrorCode.NO_PERMISSION,
        `the broker[${qd.brokerName}] pulling message from topic[${req.topic}] is forbidden`,
      );
    }
    if (!Number.isInteger(req.queueId) || req.queueId < 0 || req.queueId >= qd.readQueueNums) {
      throw new NimbusError(
        ErrorCode.PARAMETER_ILLEGAL,
        `queueId ${req.queueId} is not below readQueueNums ${qd.readQueueNums} of ${qd.brokerName}`,
      );
    }
    const queue = { topic: req.topic, brokerName: req.brokerName, queueId: req.queueId };
    const result = await this.queueLog.readRecords(queue, req.queueOffset, {
      maxMessages: req.maxMsgNums,
      ...(filter.matchesEverything ? {} : { filter: (m) => filter.matches(m) }),
    });
    return {
      pullStatus: result.status,
      nextBeginOffset: result.nextBeginOffset,
      minOffset: result.minOffset,
      maxOffset: result.maxOffset,
      records: result.messages,
    };
  }
}

/** A pull's answer with its messages as checked records (`PullService.pullRecords`). */
export interface PulledRecords extends Omit<PullResponse, "messages"> {
  records: StoredRecord[];
}

export function toPulled(q: { topic: string; brokerName: string; queueId: number }, m: StoredMessage): PulledMessage {
  return {
    msgId: m.properties[MessageConst.UNIQ_KEY] ?? `${q.brokerName}-${q.queueId}-${m.queueOffset}`,
    topic: q.topic,
    brokerName: q.brokerName,
    queueId: q.queueId,
    queueOffset: m.queueOffset,
    tags: m.tags,
    keys: m.keys,
    properties: m.properties,
    body: m.body,
    flag: m.flag,
    bornTimestamp: m.bornTimestamp,
    storeTimestamp: m.storeTimestamp,
    reconsumeTimes: m.reconsumeTimes,
  };
}
