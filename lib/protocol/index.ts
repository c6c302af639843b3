/**
 * @module The HTTP contract of Nimbus: every endpoint once (method, path, schemas, errors), the bounds,
 * the error statuses. Handlers, the local server, infra/, the SDK and docs/openapi.json derive from it.
 * Imports only lib/core.
 */
import type { AnyEndpoint } from "./endpoint.js";
import {
  createAcl,
  createUser,
  deleteAcl,
  deleteUser,
  getAcl,
  getUser,
  listAcls,
  listUsers,
  updateAcl,
  updateUser,
} from "./endpoints/acl.js";
import { consumerConnection, consumerStatus, heartbeat, producerConnection, unregister } from "./endpoints/clients.js";
import { deleteSubGroup, getSubGroup, lagHistory, listGroups, updateSubGroup } from "./endpoints/groups.js";
import { lockQueues, queueLocks, unlockQueues } from "./endpoints/locks.js";
import { brokerList, channelInfo, clusterInfo, health, openApi, topicRoute } from "./endpoints/name-server.js";
import {
  commitOffsets,
  consumerProgress,
  queryOffsets,
  queueOwners,
  releaseQueues,
  resetOffsetByTime,
} from "./endpoints/offsets.js";
import { ack, changeInvisibleDuration, receive, startReceiving } from "./endpoints/pop.js";
import { pull } from "./endpoints/pull.js";
import { queryMessageById, queryMessagesByKey } from "./endpoints/query.js";
import { send } from "./endpoints/send.js";
import { sendBack } from "./endpoints/send-back.js";
import {
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  updateSubscription,
} from "./endpoints/subscriptions.js";
import { deleteTopic, listTopics, topicStatus, updateTopic } from "./endpoints/topics.js";
import { endTransaction, sendHalfMessage, transactionInfo, transactionMessage } from "./endpoints/transactions.js";

export * from "./binary-batch.js";
export * from "./bounds.js";
export * from "./endpoint.js";
export * from "./endpoints/acl.js";
export * from "./endpoints/clients.js";
export * from "./endpoints/groups.js";
export * from "./endpoints/locks.js";
export * from "./endpoints/name-server.js";
export * from "./endpoints/offsets.js";
export * from "./endpoints/pop.js";
export * from "./endpoints/pull.js";
export * from "./endpoints/query.js";
export * from "./endpoints/send.js";
export * from "./endpoints/send-back.js";
export * from "./endpoints/subscriptions.js";
export * from "./endpoints/topics.js";
export * from "./endpoints/transactions.js";
export * from "./fields.js";
export * from "./http-status.js";
export * from "./wire-encode.js";

/** Every endpoint, by id. */
export const endpoints = {
  health,
  clusterInfo,
  brokerList,
  topicRoute,
  openApi,
  channelInfo,
  listTopics,
  updateTopic,
  deleteTopic,
  topicStatus,
  send,
  sendBack,
  pull,
  queryMessageById,
  queryMessagesByKey,
  receive,
  startReceiving,
  ack,
  changeInvisibleDuration,
  queryOffsets,
  commitOffsets,
  releaseQueues,
  queueOwners,
  consumerProgress,
  resetOffsetByTime,
  listGroups,
  getSubGroup,
  updateSubGroup,
  deleteSubGroup,
  lagHistory,
  lockQueues,
  unlockQueues,
  queueLocks,
  heartbeat,
  unregister,
  consumerConnection,
  producerConnection,
  consumerStatus,
  sendHalfMessage,
  endTransaction,
  transactionInfo,
  transactionMessage,
  createUser,
  updateUser,
  deleteUser,
  getUser,
  listUsers,
  createAcl,
  updateAcl,
  deleteAcl,
  getAcl,
  listAcls,
  updateSubscription,
  getSubscription,
  deleteSubscription,
  listSubscriptions,
} as const;

export type EndpointId = keyof typeof endpoints;

/** Every endpoint, in the order the docs list them. */
export const ENDPOINTS: readonly AnyEndpoint[] = Object.values(endpoints);
export * from "./push-channel.js";
