/**
 * @module A typed client of the Nimbus HTTP API: one method per endpoint of lib/protocol, whose schemas
 * type it, encode its requests (bodies as bytes in code, base64 on the wire) and check and decode the
 * answers. The Producer, the consumers and the `nimbus` CLI all talk to the broker through it.
 *
 * @example
 * const api = new NimbusApi({ endpoints: "http://127.0.0.1:9876" });
 * await api.updateTopic("TopicTest", { writeQueueNums: 4, readQueueNums: 4 });
 * const sent = await api.send({ topic: "TopicTest", messages: [{ body: new TextEncoder().encode("hi") }] });
 */
import { z } from "zod";
import { ErrorCode, NimbusError } from "../core/errors.js";
import {
  type AnyEndpoint,
  type ClusterInfo,
  type ConsumerConnection,
  type EndpointInput,
  type EndpointOutput,
  type EndTransactionRequest,
  endpoints,
  type HalfMessageRequest,
  type HalfMessageResponse,
  type HeartbeatData,
  type HeartbeatResponse,
  type OffsetEntry,
  type ProducerInfo,
  type ProgressRow,
  type PulledMessage,
  type PullRequest,
  type PullResponse,
  type QueueOwner,
  type QueueStatus,
  type ReleaseEntry,
  type SendRequest,
  type SendResponse,
  type TopicConfig,
  type TopicRouteData,
  type TransactionInfo,
} from "../protocol/index.js";
import { HttpTransport, type RequestOptions, type TransportOptions } from "./http-transport.js";

export type {
  ConsumerConnection,
  ConsumerInfo,
  EndTransactionRequest,
  HalfMessageRequest,
  HalfMessageResponse,
  HeartbeatData,
  HeartbeatResponse,
  OffsetEntry,
  ProducerInfo,
  ProgressRow,
  PulledMessage,
  PullRequest,
  PullResponse,
  PullStatus,
  QueueOwner,
  QueueStatus,
  ReleaseEntry,
  SendMessage,
  SendRequest,
  SendResponse,
  TopicConfig,
  TransactionCheck,
  TransactionInfo,
} from "../protocol/index.js";

/** What a call gives: the parts of the endpoint's input that it has. */
type CallInput<E extends AnyEndpoint> = Partial<EndpointInput<E>>;

/** `value` encoded to its wire form by `schema`; a value the schema refuses is the server's PARAMETER_ILLEGAL, found early. */
function encode(schema: z.ZodType, value: unknown, where: string): unknown {
  const result = z.safeEncode(schema, value as never);
  if (result.success) return result.data;
  const detail = result.error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : where}: ${i.message}`);
  throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, detail.join("; "));
}

export class NimbusApi {
  readonly transport: HttpTransport;

  constructor(options: TransportOptions | HttpTransport) {
    this.transport = options instanceof HttpTransport ? options : new HttpTransport(options);
  }

  /** One call of `endpoint`: the path filled in, the query and body encoded, the answer checked and decoded. */
  async call<E extends AnyEndpoint>(
    endpoint: E,
    input: CallInput<E> = {},
    options?: RequestOptions,
  ): Promise<EndpointOutput<E>> {
    const params = encode(endpoint.params, input.params ?? {}, "path") as Record<string, string>;
    const path = endpoint.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params[name] ?? ""));
    const query = Object.entries((encode(endpoint.query, input.query ?? {}, "query") ?? {}) as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
      .join("&");
    const body = encode(endpoint.body, input.body, "body");
    const answer = await this.transport.request<unknown>(
      endpoint.method,
      query.length > 0 ? `${path}?${query}` : path,
      body,
      options,
    );
    const decoded = endpoint.response.safeParse(answer);
    if (!decoded.success) {
      throw new NimbusError(
        ErrorCode.SYSTEM_ERROR,
        `${endpoint.method} ${endpoint.path}: the answer does not match the protocol: ${decoded.error.message}`,
      );
    }
    return decoded.data as EndpointOutput<E>;
  }

  health(): Promise<{ status: string }> {
    return this.call(endpoints.health);
  }

  clusterInfo(): Promise<ClusterInfo> {
    return this.call(endpoints.clusterInfo);
  }

  topicRoute(topic: string, options?: RequestOptions): Promise<TopicRouteData> {
    return this.call(endpoints.topicRoute, { params: { topic } }, options);
  }

  async listTopics(): Promise<string[]> {
    return (await this.call(endpoints.listTopics)).topics;
  }

  updateTopic(topic: string, config: TopicConfig): Promise<TopicRouteData> {
    return this.call(endpoints.updateTopic, { params: { topic }, body: config });
  }

  async deleteTopic(topic: string): Promise<void> {
    await this.call(endpoints.deleteTopic, { params: { topic } });
  }

  async topicStatus(topic: string): Promise<QueueStatus[]> {
    return (await this.call(endpoints.topicStatus, { params: { topic } })).queues;
  }

  send(req: SendRequest, options?: RequestOptions): Promise<SendResponse> {
    return this.call(endpoints.send, { body: req }, options);
  }

  pull(req: PullRequest, options?: RequestOptions): Promise<PullResponse> {
    return this.call(endpoints.pull, { body: req }, options);
  }

  /** Registers this client in its groups; the answer carries check-backs for a producer. */
  heartbeat(data: HeartbeatData): Promise<HeartbeatResponse> {
    return this.call(endpoints.heartbeat, { body: data });
  }

  /** The group's live producers (mqadmin's producerConnection). */
  async producerConnection(group: string): Promise<ProducerInfo[]> {
    return (await this.call(endpoints.producerConnection, { params: { group } })).producers;
  }

  sendHalfMessage(req: HalfMessageRequest, options?: RequestOptions): Promise<HalfMessageResponse> {
    return this.call(endpoints.sendHalfMessage, { body: req }, options);
  }

  endTransaction(
    transactionId: string,
    req: EndTransactionRequest,
    options?: RequestOptions,
  ): Promise<TransactionInfo> {
    return this.call(endpoints.endTransaction, { params: { transactionId }, body: req }, options);
  }

  transactionInfo(transactionId: string, producerGroup: string): Promise<TransactionInfo> {
    return this.call(endpoints.transactionInfo, { params: { transactionId }, query: { producerGroup } });
  }

  /** The half message of a transaction, as a check-back's listener sees it. */
  transactionMessage(transactionId: string, producerGroup: string): Promise<PulledMessage> {
    return this.call(endpoints.transactionMessage, { params: { transactionId }, query: { producerGroup } });
  }

  async unregister(
    clientId: string,
    groups: { producerGroup?: string | undefined; consumerGroup?: string | undefined },
  ): Promise<void> {
    await this.call(endpoints.unregister, { body: { clientId, ...groups } });
  }

  /** The group's live consumers with their subscriptions (mqadmin's consumerConnection). */
  consumerConnection(group: string): Promise<ConsumerConnection> {
    return this.call(endpoints.consumerConnection, { params: { group } });
  }

  async consumerIds(group: string): Promise<string[]> {
    return (await this.consumerConnection(group)).consumerIdList;
  }

  async queryOffsets(group: string, topic: string): Promise<OffsetEntry[]> {
    return (await this.call(endpoints.queryOffsets, { params: { group, topic } })).offsetTable;
  }

  /** Commits offsets; a consumer names itself (`clientId`) so the records say who owns the queues. */
  async commitOffsets(group: string, topic: string, offsetTable: OffsetEntry[], clientId?: string): Promise<void> {
    const body = clientId === undefined ? { offsetTable } : { offsetTable, clientId };
    await this.call(endpoints.commitOffsets, { params: { group, topic }, body });
  }

  /**
   * Claims new queues (no offset yet) at these start offsets; answers the ones this client now owns (its
   * claim won, or it held them already).
   */
  async claimQueues(
    group: string,
    topic: string,
    clientId: string,
    offsetTable: OffsetEntry[],
  ): Promise<OffsetEntry[]> {
    await this.call(endpoints.commitOffsets, {
      params: { group, topic },
      body: { offsetTable, clientId, claim: true },
    });
    const owners = await this.queueOwners(group, topic);
    return offsetTable.filter((e) =>
      owners.some((o) => o.brokerName === e.brokerName && o.queueId === e.queueId && o.owner === clientId),
    );
  }

  /** Commits the offsets of queues this client stopped reading and marks them released (the queue handover). */
  async releaseQueues(group: string, topic: string, clientId: string, offsetTable: ReleaseEntry[]): Promise<void> {
    await this.call(endpoints.releaseQueues, { params: { group, topic }, body: { clientId, offsetTable } });
  }

  /** Each queue's offset, owner and released flag (the queue handover). */
  async queueOwners(group: string, topic: string): Promise<QueueOwner[]> {
    return (await this.call(endpoints.queueOwners, { params: { group, topic } })).queues;
  }

  async progress(group: string, topic?: string): Promise<ProgressRow[]> {
    return (await this.call(endpoints.consumerProgress, { params: { group }, query: { topic } })).rows;
  }
}
