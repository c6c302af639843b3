/**
 * @module Shapes of the HTTP API that the broker answers and the SDK reads, in one place (bodies as bytes;
 * the JSON layer turns them into base64). See docs/api.md.
 */

export type PullStatus = "FOUND" | "NO_NEW_MSG" | "NO_MATCHED_MSG" | "OFFSET_ILLEGAL";

export interface PullRequest {
  consumerGroup: string;
  topic: string;
  brokerName: string;
  queueId: number;
  queueOffset: number;
  maxMsgNums?: number;
  subExpression?: string;
}

/** A message as a pull hands it out (RocketMQ's MessageExt fields). `msgId` is the UNIQ_KEY. */
export interface PulledMessage {
  msgId: string;
  topic: string;
  brokerName: string;
  queueId: number;
  queueOffset: number;
  tags: string;
  keys: string[];
  properties: Record<string, string>;
  body: Uint8Array;
  flag: number;
  bornTimestamp: number;
  storeTimestamp: number;
  reconsumeTimes: number;
}

export interface OffsetEntry {
  brokerName: string;
  queueId: number;
  offset: number;
}

/** A row of RocketMQ's consumerProgress. */
export interface ProgressRow {
  topic: string;
  brokerName: string;
  queueId: number;
  brokerOffset: number;
  consumerOffset: number;
  diff: number;
  /** Store time of the last consumed message (offset - 1), 0 when nothing was consumed. */
  lastTimestamp: number;
}

export interface QueueStatus {
  brokerName: string;
  queueId: number;
  minOffset: number;
  maxOffset: number;
  lastUpdateTimestamp: number;
}

export interface TopicConfig {
  readQueueNums?: number;
  writeQueueNums?: number;
  perm?: number;
  /** Brokers to set the QueueData on; default every live master. Other brokers' QueueData stays as it was. */
  brokerNames?: string[];
}

/** A live consumer of a group, as its last heartbeat described it. */
export interface ConsumerInfo {
  clientId: string;
  consumeType: string;
  messageModel: "CLUSTERING" | "BROADCASTING";
  consumeFromWhere: string;
  subscriptionDataSet: { topic: string; subString: string }[];
  lastHeartbeat: number;
}

/** `GET /groups/{group}/consumers`: the ids (the contract) and each consumer's details (an extension). */
export interface ConsumerConnection {
  consumerIdList: string[];
  consumers: ConsumerInfo[];
}
