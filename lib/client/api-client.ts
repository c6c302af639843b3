/**
 * @module A typed client of the Nimbus HTTP API (docs/api.md): one method per endpoint, bodies as bytes.
 * The Producer, the consumers and the `nimbus` CLI all talk to the broker through it.
 *
 * @example
 * const api = new NimbusApi({ endpoints: "http://127.0.0.1:9876" });
 * await api.updateTopic("TopicTest", { writeQueueNums: 4, readQueueNums: 4 });
 * const sent = await api.send({ topic: "TopicTest", messages: [{ body: new TextEncoder().encode("hi") }] });
 */
import type {
  ConsumerConnection,
  ConsumerInfo,
  OffsetEntry,
  ProgressRow,
  PulledMessage,
  PullRequest,
  PullStatus,
  QueueStatus,
  TopicConfig,
} from "../core/api-types.js";
import type { ClusterInfo, TopicRouteData } from "../core/route-data.js";

export type {
  ConsumerConnection,
  ConsumerInfo,
  OffsetEntry,
  ProgressRow,
  PulledMessage,
  PullRequest,
  PullStatus,
  QueueStatus,
  TopicConfig,
};

import { HttpTransport, type RequestOptions, type TransportOptions } from "./http-transport.js";

export interface WireMessage {
  body: Uint8Array;
  tags?: string;
  keys?: string | string[];
  properties?: Record<string, string>;
  flag?: number;
}

export interface SendRequest {
  producerGroup?: string;
  topic: string;
  brokerName?: string;
  queueId?: number;
  messages: WireMessage[];
}

export interface SendResponse {
  sendStatus: "SEND_OK";
  messageQueue: { topic: string; brokerName: string; queueId: number };
  queueOffset: number;
  msgIds: string[];
  storeTimestamp: number;
}

export interface PullResponse {
  pullStatus: PullStatus;
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
  messages: PulledMessage[];
}

export interface HeartbeatData {
  clientId: string;
  producerDataSet?: { groupName: string }[];
  consumerDataSet?: {
    groupName: string;
    consumeType?: "CONSUME_ACTIVELY" | "CONSUME_PASSIVELY";
    messageModel?: "CLUSTERING" | "BROADCASTING";
    consumeFromWhere?: "CONSUME_FROM_LAST_OFFSET" | "CONSUME_FROM_FIRST_OFFSET" | "CONSUME_FROM_TIMESTAMP";
    subscriptionDataSet?: { topic: string; subString: string }[];
  }[];
}

const seg = encodeURIComponent;
const toBase64 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");

export class NimbusApi {
  readonly transport: HttpTransport;

  constructor(options: TransportOptions | HttpTransport) {
    this.transport = options instanceof HttpTransport ? options : new HttpTransport(options);
  }

  health(): Promise<{ status: string }> {
    return this.transport.request("GET", "/health");
  }

  clusterInfo(): Promise<ClusterInfo> {
    return this.transport.request("GET", "/cluster");
  }

  topicRoute(topic: string, options?: RequestOptions): Promise<TopicRouteData> {
    return this.transport.request("GET", `/topics/${seg(topic)}/route`, undefined, options);
  }

  async listTopics(): Promise<string[]> {
    return (await this.transport.request<{ topics: string[] }>("GET", "/topics")).topics;
  }

  updateTopic(topic: string, config: TopicConfig): Promise<TopicRouteData> {
    return this.transport.request("PUT", `/topics/${seg(topic)}`, config);
  }

  async deleteTopic(topic: string): Promise<void> {
    await this.transport.request("DELETE", `/topics/${seg(topic)}`);
  }

  async topicStatus(topic: string): Promise<QueueStatus[]> {
    return (await this.transport.request<{ queues: QueueStatus[] }>("GET", `/topics/${seg(topic)}/status`)).queues;
  }

  send(req: SendRequest, options?: RequestOptions): Promise<SendResponse> {
    const messages = req.messages.map((m) => ({ ...m, body: toBase64(m.body) }));
    return this.transport.request("POST", "/send", { ...req, messages }, options);
  }

  async pull(req: PullRequest, options?: RequestOptions): Promise<PullResponse> {
    const res = await this.transport.request<
      Omit<PullResponse, "messages"> & { messages: (Omit<PulledMessage, "body"> & { body: string })[] }
    >("POST", "/pull", req, options);
    return {
      ...res,
      messages: res.messages.map((m) => ({ ...m, body: new Uint8Array(Buffer.from(m.body, "base64")) })),
    };
  }

  async heartbeat(data: HeartbeatData): Promise<void> {
    await this.transport.request("POST", "/heartbeat", data);
  }

  async unregister(clientId: string, groups: { producerGroup?: string; consumerGroup?: string }): Promise<void> {
    await this.transport.request("POST", "/unregister", { clientId, ...groups });
  }

  /** The group's live consumers with their subscriptions (mqadmin's consumerConnection). */
  consumerConnection(group: string): Promise<ConsumerConnection> {
    return this.transport.request("GET", `/groups/${seg(group)}/consumers`);
  }

  async consumerIds(group: string): Promise<string[]> {
    return (await this.transport.request<{ consumerIdList: string[] }>("GET", `/groups/${seg(group)}/consumers`))
      .consumerIdList;
  }

  async queryOffsets(group: string, topic: string): Promise<OffsetEntry[]> {
    return (await this.transport.request<{ offsetTable: OffsetEntry[] }>("GET", `/offsets/${seg(group)}/${seg(topic)}`))
      .offsetTable;
  }

  async commitOffsets(group: string, topic: string, offsetTable: OffsetEntry[]): Promise<void> {
    await this.transport.request("PUT", `/offsets/${seg(group)}/${seg(topic)}`, { offsetTable });
  }

  async progress(group: string, topic?: string): Promise<ProgressRow[]> {
    const query = topic === undefined ? "" : `?topic=${seg(topic)}`;
    return (await this.transport.request<{ rows: ProgressRow[] }>("GET", `/groups/${seg(group)}/progress${query}`))
      .rows;
  }
}
