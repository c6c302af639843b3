/** @module Name server endpoints: health, cluster, topic route (RocketMQ's namesrv requests). */
import { z } from "zod";
import { clusterPermission, topicPermission } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import { MAX_LIST_ITEMS, MAX_TEXT_LENGTH } from "../bounds.js";
import { endpoint } from "../endpoint.js";
import { boundedMap, perm, queueNums, timestamp, topicName } from "../fields.js";

/** A topic's queues on one broker. Queue ids run from 0 on every broker. */
export const QueueDataSchema = z
  .object({
    brokerName: z.string().max(MAX_TEXT_LENGTH),
    readQueueNums: queueNums,
    writeQueueNums: queueNums,
    /** PermName bits; the broker's own permission is already applied. */
    perm,
    topicSysFlag: z.number().int(),
  })
  .meta({ id: "QueueData" });
export type QueueData = z.output<typeof QueueDataSchema>;

/** A broker's addresses by brokerId ("0" is the master). */
export const BrokerDataSchema = z
  .object({
    cluster: z.string().max(MAX_TEXT_LENGTH),
    brokerName: z.string().max(MAX_TEXT_LENGTH),
    brokerAddrs: boundedMap(z.string().max(MAX_TEXT_LENGTH)),
  })
  .meta({ id: "BrokerData" });
export type BrokerData = z.output<typeof BrokerDataSchema>;

export const TopicRouteDataSchema = z
  .object({
    /** Sorted by brokerName. */
    queueDatas: z.array(QueueDataSchema).max(MAX_LIST_ITEMS),
    brokerDatas: z.array(BrokerDataSchema).max(MAX_LIST_ITEMS),
  })
  .meta({ id: "TopicRouteData" });
export type TopicRouteData = z.output<typeof TopicRouteDataSchema>;

export const ClusterInfoSchema = z
  .object({
    brokerAddrTable: boundedMap(BrokerDataSchema),
    clusterAddrTable: boundedMap(z.array(z.string().max(MAX_TEXT_LENGTH)).max(MAX_LIST_ITEMS)),
  })
  .meta({ id: "ClusterInfo" });
export type ClusterInfo = z.output<typeof ClusterInfoSchema>;

/** A broker's last registration, live or not (the console's cluster view; an extension of RocketMQ). */
export const BrokerRegistrationSchema = z
  .object({
    cluster: z.string().max(MAX_TEXT_LENGTH),
    brokerName: z.string().max(MAX_TEXT_LENGTH),
    /** 0 is the master. */
    brokerId: z.number().int().min(0),
    address: z.string().max(MAX_TEXT_LENGTH),
    /** The broker's permission (PermName bits). */
    perm,
    registeredAt: timestamp,
    /** Registered within the last 120 s: the name server hands it out. */
    live: z.boolean(),
  })
  .meta({ id: "BrokerRegistration" });
export type BrokerRegistrationInfo = z.output<typeof BrokerRegistrationSchema>;

export const health = endpoint({
  id: "health",
  method: "GET",
  path: "/health",
  service: "NameServer",
  summary: "Liveness: answers without touching storage, and without auth on every stage.",
  auth: "none",
  response: z.object({ status: z.literal("ok") }),
  errors: [],
});

/** Where the push channel is (docs/push-channel.md); `url` null when the deployment serves none. */
export const ChannelInfoSchema = z
  .object({ url: z.string().max(MAX_TEXT_LENGTH).nullable() })
  .meta({ id: "ChannelInfo" });

export const channelInfo = endpoint({
  id: "channelInfo",
  // Any signed user: the URL is no secret, and the channel checks each registration itself.
  access: () => [],
  method: "GET",
  path: "/push-channel",
  service: "NameServer",
  summary: "The push channel's WebSocket URL: hints of new messages and group changes (docs/push-channel.md).",
  response: ChannelInfoSchema,
  errors: [],
});

export const clusterInfo = endpoint({
  id: "clusterInfo",
  access: () => [clusterPermission("Get")],
  method: "GET",
  path: "/cluster",
  service: "NameServer",
  summary: "Live brokers by name and the broker names of each cluster (RocketMQ's GET_BROKER_CLUSTER_INFO).",
  response: ClusterInfoSchema,
  errors: [],
});

export const brokerList = endpoint({
  id: "brokerList",
  access: () => [clusterPermission("Get")],
  method: "GET",
  path: "/brokers",
  service: "NameServer",
  summary: "Every broker ever registered with its last registration time and liveness (one partition query).",
  response: z.object({ brokers: z.array(BrokerRegistrationSchema).max(MAX_LIST_ITEMS) }),
  errors: [],
});

export const topicRoute = endpoint({
  id: "topicRoute",
  access: ({ params }) => [topicPermission(params.topic, "Pub", "Sub", "Get")],
  method: "GET",
  path: "/topics/{topic}/route",
  service: "NameServer",
  summary: "The topic's QueueData on live brokers and those brokers' addresses (GET_ROUTEINFO_BY_TOPIC).",
  params: z.object({ topic: topicName }),
  response: TopicRouteDataSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.TOPIC_NOT_EXIST],
});

export const openApi = endpoint({
  id: "openApi",
  access: () => [clusterPermission("Get")],
  method: "GET",
  path: "/openapi.json",
  service: "NameServer",
  summary: "This API's OpenAPI 3.1 document, generated from lib/protocol (docs/openapi.json is a copy).",
  response: boundedMap(z.unknown()).meta({ description: "An OpenAPI 3.1 document" }),
  errors: [],
});
