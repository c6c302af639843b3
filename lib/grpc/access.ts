/**
 * @module What each RPC needs of the caller's ACL: the permissions of its HTTP counterpart, asked of that
 * endpoint's own rule (lib/protocol, `access`) with the input the HTTP request would carry, so the two doors
 * cannot drift apart. A gRPC producer's group is its topic (as RocketMQ's proxy registers it).
 */
import type { Permission } from "../core/acl.js";
import { endpoints, type HeartbeatData, heartbeatAccess, type SendMessage } from "../protocol/index.js";

type Rule<I> = { readonly access?: "super" | ((input: I) => Permission[]) | undefined };

function rule<I>(endpoint: Rule<I>, input: I): Permission[] {
  const access = endpoint.access;
  if (typeof access !== "function") throw new Error("a gRPC counterpart must have a per-resource ACL rule");
  return access(input);
}

const none = { params: {}, query: {} } as const;

/** QueryRoute: `GET /topics/{topic}/route`. */
export const routeNeeds = (topic: string) =>
  rule(endpoints.topicRoute, { query: {}, params: { topic }, body: undefined });

/** SendMessage: `POST /send` (normal, FIFO, delay) or `POST /transactions` (a half message). */
export function sendNeeds(topic: string, message: SendMessage, transactional: boolean): Permission[] {
  return transactional
    ? rule(endpoints.sendHalfMessage, { ...none, body: { producerGroup: topic, topic, message } })
    : rule(endpoints.send, { ...none, body: { topic, messages: [message] } });
}

/** EndTransaction: `POST /transactions/{id}/end`. */
export const endNeeds = (topic: string, transactionId: string) =>
  rule(endpoints.endTransaction, {
    query: {},
    params: { transactionId },
    body: { producerGroup: topic, commitOrRollback: "COMMIT_MESSAGE" as const },
  });

/** Heartbeat and Telemetry's Settings: `POST /heartbeat` with the groups the client joins. */
export const heartbeatNeeds = (hb: HeartbeatData) => heartbeatAccess({ ...none, body: hb });

/** NotifyClientTermination: `POST /unregister`. */
export const unregisterNeeds = (clientId: string, groups: { producerGroup?: string; consumerGroup?: string }) =>
  rule(endpoints.unregister, { ...none, body: { clientId, ...groups } });

/** ReceiveMessage, AckMessage, ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue: `POST /pull`'s rule. */
export const consumeNeeds = (group: string, topic: string) =>
  rule(endpoints.pull, { ...none, body: { consumerGroup: group, topic, brokerName: "", queueId: 0, queueOffset: 0 } });
