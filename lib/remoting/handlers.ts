/**
 * @module The request codes the door serves, each with its handler; every other code is answered
 * REQUEST_CODE_NOT_SUPPORTED with a remark naming it (docs/remoting.md lists both).
 */
import { brokerRuntimeInfo, consumerConnectionList, consumeStats, topicConsumeByWho, topicStatsInfo } from "./admin.js";
import type { Handler } from "./call.js";
import { consumerRunningInfo, resetOffset } from "./client-admin.js";
import { consumerList, heartbeat, unregisterClient } from "./clients.js";
import { RequestCode } from "./codes.js";
import { createTopic, deleteTopic, getClusterInfo, getRouteInfo, getTopicList } from "./names.js";
import {
  consumerSendBack,
  earliestStoreTime,
  getMaxOffset,
  getMinOffset,
  lockBatch,
  queryConsumerOffset,
  searchOffset,
  unlockBatch,
  updateConsumerOffset,
} from "./offsets.js";
import { endTransaction, sendMessage } from "./produce.js";
import { pullMessage } from "./pull.js";
import { queryMessage, viewMessageById } from "./query.js";

export const HANDLERS: ReadonlyMap<number, Handler> = new Map<number, Handler>([
  [RequestCode.SEND_MESSAGE, sendMessage],
  [RequestCode.SEND_MESSAGE_V2, sendMessage],
  [RequestCode.SEND_BATCH_MESSAGE, sendMessage],
  [RequestCode.END_TRANSACTION, endTransaction],
  [RequestCode.PULL_MESSAGE, pullMessage],
  [RequestCode.LITE_PULL_MESSAGE, pullMessage],
  [RequestCode.VIEW_MESSAGE_BY_ID, viewMessageById],
  [RequestCode.QUERY_MESSAGE, queryMessage],
  [RequestCode.QUERY_CONSUMER_OFFSET, queryConsumerOffset],
  [RequestCode.UPDATE_CONSUMER_OFFSET, updateConsumerOffset],
  [RequestCode.GET_MAX_OFFSET, getMaxOffset],
  [RequestCode.GET_MIN_OFFSET, getMinOffset],
  [RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, searchOffset],
  [RequestCode.GET_EARLIEST_MSG_STORETIME, earliestStoreTime],
  [RequestCode.LOCK_BATCH_MQ, lockBatch],
  [RequestCode.UNLOCK_BATCH_MQ, unlockBatch],
  [RequestCode.CONSUMER_SEND_MSG_BACK, consumerSendBack],
  [RequestCode.HEART_BEAT, heartbeat],
  [RequestCode.UNREGISTER_CLIENT, unregisterClient],
  [RequestCode.GET_CONSUMER_LIST_BY_GROUP, consumerList],
  [RequestCode.GET_ROUTEINFO_BY_TOPIC, getRouteInfo],
  [RequestCode.GET_BROKER_CLUSTER_INFO, getClusterInfo],
  [RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, getTopicList],
  [RequestCode.UPDATE_AND_CREATE_TOPIC, createTopic],
  [RequestCode.DELETE_TOPIC_IN_BROKER, deleteTopic],
  [RequestCode.DELETE_TOPIC_IN_NAMESRV, deleteTopic],
  [RequestCode.GET_BROKER_RUNTIME_INFO, brokerRuntimeInfo],
  [RequestCode.GET_TOPIC_STATS_INFO, topicStatsInfo],
  [RequestCode.GET_CONSUME_STATS, consumeStats],
  [RequestCode.GET_CONSUMER_CONNECTION_LIST, consumerConnectionList],
  [RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, topicConsumeByWho],
  [RequestCode.GET_CONSUMER_RUNNING_INFO, consumerRunningInfo],
  [RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, resetOffset],
]);
