/** @module RocketMQ's route data, shared by the name server and the clients. */

/** A topic's queues on one broker. Queue ids run from 0 on every broker. */
export interface QueueData {
  brokerName: string;
  readQueueNums: number;
  writeQueueNums: number;
  /** PermName bits; the broker's own permission is already applied. */
  perm: number;
  topicSysFlag: number;
}

/** A broker's addresses by brokerId ("0" is the master). */
export interface BrokerData {
  cluster: string;
  brokerName: string;
  brokerAddrs: Record<string, string>;
}

export interface TopicRouteData {
  /** Sorted by brokerName. */
  queueDatas: QueueData[];
  brokerDatas: BrokerData[];
}

export interface ClusterInfo {
  brokerAddrTable: Record<string, BrokerData>;
  clusterAddrTable: Record<string, string[]>;
}

/** RocketMQ's master broker id. */
export const MASTER_ID = 0;
