import { ErrorCode, isNimbusError } from "../../core/errors.js";
import {
  type AnyEndpoint,
  BATCH_MEDIA_TYPE,
  type ClusterInfo,
  type ConsumerConnection,
  type ConsumerStatus,
  decodePullFrame,
  type EndpointOutput,
  type EndTransactionRequest,
  encodeSendFrame,
  endpoints,
  type GroupSummary,
  type HalfMessageRequest,
  type HalfMessageResponse,
  type HeartbeatData,
  type HeartbeatResponse,
  type LagSample,
  type LockedQueue,
  type OffsetEntry,
  type OffsetReset,
  type ProducerInfo,
  type ProgressRow,
  type PulledMessage,
  type PullRequest,
  type PullResponse,
  type QueryByIdRequest,
  type QueryByKeyRequest,
  type QueryByKeyResponse,
  type QueueOwner,
  type QueueRef,
  type QueueStatus,
  type ReleaseEntry,
  type SendBackRequest,
  type SendBackResponse,
  type SendRequest,
  type SendResponse,
  type SubscriptionGroupConfig,
  type SubscriptionGroupSettings,
  type TopicConfig,
  type TopicRouteData,
  type TransactionInfo,
} from "../../protocol/index.js";
import { BrokerRouter } from "./broker-router.js";
import { type CallInput, checkedAnswer, encode } from "./endpoint-call.js";
import { HttpTransport, isUnreachable, type RequestOptions, type TransportOptions } from "./http-transport.js";

/** What a broker without binary batches answers a frame: its JSON decoder's refusal. */
const NOT_JSON = /the request body is not valid JSON/;

export class NimbusApi {
  readonly transport: HttpTransport;
  /** Which address each broker's requests go to, from the routes and cluster answers this client has seen. */
  readonly router = new BrokerRouter(this);
  /** The brokers' addresses this client has seen. */
  readonly brokers = this.router.brokers;
  /** Set once a broker refused a binary send as not JSON (it predates them): sends go as JSON. */
  #jsonSends = false;

  constructor(options: TransportOptions | HttpTransport) {
    this.transport = options instanceof HttpTransport ? options : new HttpTransport(options);
  }

  /** Closes the transport's own connection pool, if it has one (`HttpTransport.close`). */
  close(): Promise<void> {
    return this.transport.close();
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
    return checkedAnswer(endpoint, answer);
  }

  /** A send as a binary batch (docs/api.md, "Binary batches"), or as JSON when the transport keeps JSON. */
  async #sendBatch(req: SendRequest, options: RequestOptions | undefined): Promise<SendResponse> {
    if (!this.transport.binaryBatches || this.#jsonSends) return this.call(endpoints.send, { body: req }, options);
    const frame = encodeSendFrame(req);
    let answer: unknown;
    try {
      answer = await this.transport.request<unknown>("POST", endpoints.send.path, frame, {
        ...options,
        contentType: BATCH_MEDIA_TYPE,
      });
    } catch (err) {
      // A broker older than binary batches reads the frame as JSON and refuses it (400, nothing written):
      // this client sends JSON from then on.
      if (!isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL) || !NOT_JSON.test(err.message)) throw err;
      this.#jsonSends = true;
      return this.call(endpoints.send, { body: req }, options);
    }
    return checkedAnswer(endpoints.send, answer);
  }

  /** A pull whose answer comes back as a binary batch, or as JSON when the transport keeps JSON. */
  async #pullBatch(req: PullRequest, options: RequestOptions | undefined): Promise<PullResponse> {
    const read = { ...options, idempotent: true };
    if (!this.transport.binaryBatches) return this.call(endpoints.pull, { body: req }, read);
    const body = encode(endpoints.pull.body, req, "body");
    const answer = await this.transport.request<unknown>("POST", endpoints.pull.path, body, {
      ...read,
      accept: BATCH_MEDIA_TYPE,
    });
    return answer instanceof Uint8Array ? decodePullFrame(answer) : checkedAnswer(endpoints.pull, answer);
  }

  health(): Promise<{ status: string }> {
    return this.call(endpoints.health);
  }

  /** The push channel's WebSocket URL, or null when the deployment serves none. */
  async channelInfo(): Promise<{ url: string | null }> {
    return this.call(endpoints.channelInfo);
  }

  async clusterInfo(): Promise<ClusterInfo> {
    const info = await this.call(endpoints.clusterInfo);
    this.brokers.learn(Object.values(info.brokerAddrTable));
    return info;
  }

  async topicRoute(topic: string, options?: RequestOptions): Promise<TopicRouteData> {
    const route = await this.call(endpoints.topicRoute, { params: { topic } }, options);
    this.brokers.learn(route.brokerDatas);
    return route;
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

  /** Every queue's offsets; with `load`, its write load against its keys' ceiling (one query per index key more). */
  async topicStatus(topic: string, options: { load?: boolean } = {}): Promise<QueueStatus[]> {
    const query = options.load === true ? { load: "true" as const } : {};
    return (await this.call(endpoints.topicStatus, { params: { topic }, query })).queues;
  }

  send(req: SendRequest, options?: RequestOptions): Promise<SendResponse> {
    return this.router.toSomeMaster(req, options, (r, o) => this.#sendBatch(r, o));
  }

  /** Hands a failed message back to its broker: the group's retry topic, or its dead-letter queue. */
  sendBack(req: SendBackRequest, options?: RequestOptions): Promise<SendBackResponse> {
    return this.router.atBroker(req, "write", options, (o) => this.call(endpoints.sendBack, { body: req }, o));
  }

  pull(req: PullRequest, options?: RequestOptions): Promise<PullResponse> {
    return this.router.atBroker(req, "read", options, (o) => this.#pullBatch(req, o));
  }

  /**
   * The stored messages with this UNIQ_KEY (mqadmin's queryMsgByUniqueKey and queryMsgById): the message, and
   * any copy of it (sent again after a lost answer). QUERY_NOT_FOUND when there is none.
   */
  async queryMessageById(req: QueryByIdRequest): Promise<PulledMessage[]> {
    return (await this.call(endpoints.queryMessageById, { body: req })).messages;
  }

  /** One page of a topic's messages with a key, oldest first (mqadmin's queryMsgByKey); `nextCursor` continues. */
  queryMessagesByKey(req: QueryByKeyRequest): Promise<QueryByKeyResponse> {
    return this.call(endpoints.queryMessagesByKey, { body: req });
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
    return this.router.toSomeMaster(req, options, (r, o) => this.call(endpoints.sendHalfMessage, { body: r }, o));
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

  /**
   * Commits each broker's offsets at that broker (its master, or a slave while the master does not answer):
   * one request per address, so brokers served at one address (a stage, `nimbus dev`) cost one request. A
   * consumer names itself (`clientId`) so the records say who owns the queues.
   */
  async commitOffsets(group: string, topic: string, offsetTable: OffsetEntry[], clientId?: string): Promise<void> {
    const commit = (entries: OffsetEntry[], o?: RequestOptions) =>
      this.call(
        endpoints.commitOffsets,
        {
          params: { group, topic },
          body: clientId === undefined ? { offsetTable: entries } : { offsetTable: entries, clientId },
        },
        o,
      );
    const byAddress = new Map<string | undefined, OffsetEntry[]>();
    if (offsetTable.some((e) => this.brokers.candidates(e.brokerName, "read").length === 0))
      await this.router.learnRoute(topic);
    for (const e of offsetTable) {
      const address = this.brokers.candidates(e.brokerName, "read")[0];
      byAddress.set(address, [...(byAddress.get(address) ?? []), e]);
    }
    await Promise.all(
      [...byAddress].map(async ([baseUrl, entries]) => {
        if (baseUrl === undefined) return commit(entries);
        try {
          return await commit(entries, { baseUrl });
        } catch (err) {
          if (!isUnreachable(err)) throw err;
          this.brokers.markDown(baseUrl);
          const brokers = [...new Set(entries.map((e) => e.brokerName))];
          await Promise.all(
            brokers.map((b) =>
              this.router.atBroker({ topic, brokerName: b }, "read", undefined, (o) =>
                commit(
                  entries.filter((e) => e.brokerName === b),
                  o,
                ),
              ),
            ),
          );
        }
      }),
    );
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

  /** Locks or renews queues for an orderly consumer (LOCK_BATCH_MQ); each answer says whether it got the lease. */
  async lockQueues(group: string, topic: string, clientId: string, queues: QueueRef[]): Promise<LockedQueue[]> {
    return (await this.call(endpoints.lockQueues, { params: { group, topic }, body: { clientId, queues } })).queues;
  }

  /** Ends this client's locks of queues (UNLOCK_BATCH_MQ); answers the queues it held. */
  async unlockQueues(group: string, topic: string, clientId: string, queues: QueueRef[]): Promise<QueueRef[]> {
    return (await this.call(endpoints.unlockQueues, { params: { group, topic }, body: { clientId, queues } })).unlocked;
  }

  /** The current lock of every queue of the topic. */
  async queueLocks(group: string, topic: string): Promise<LockedQueue[]> {
    return (await this.call(endpoints.queueLocks, { params: { group, topic } })).queues;
  }

  /** mqadmin's resetOffsetByTime: every queue to the first message stored at or after `timestamp`. */
  resetOffsetByTime(group: string, topic: string, timestamp: number | "now" | "first"): Promise<OffsetReset> {
    return this.call(endpoints.resetOffsetByTime, { params: { group, topic }, body: { timestamp } }).then((r) => ({
      topic,
      ...r,
    }));
  }

  /** Per live member of the group, what its heartbeats report about its work (consumerStatus). */
  async consumerStatus(group: string): Promise<ConsumerStatus[]> {
    return (await this.call(endpoints.consumerStatus, { params: { group } })).consumers;
  }

  async progress(group: string, topic?: string): Promise<ProgressRow[]> {
    return (await this.call(endpoints.consumerProgress, { params: { group }, query: { topic } })).rows;
  }

  /** One page of every consumer group: topics, live members, total lag, subscription group (`GET /groups`). */
  listGroups(
    page: { startAfter?: string; limit?: number } = {},
  ): Promise<{ groups: GroupSummary[]; nextStartAfter?: string | undefined }> {
    return this.call(endpoints.listGroups, { query: page });
  }

  /** The group's subscription group config (RocketMQ's defaults when nobody configured it). */
  getSubGroup(group: string): Promise<SubscriptionGroupConfig> {
    return this.call(endpoints.getSubGroup, { params: { group } });
  }

  /** mqadmin's updateSubGroup: replaces the config; a setting left out takes RocketMQ's default. */
  updateSubGroup(group: string, settings: Partial<SubscriptionGroupSettings> = {}): Promise<SubscriptionGroupConfig> {
    return this.call(endpoints.updateSubGroup, { params: { group }, body: settings });
  }

  /** mqadmin's deleteSubGroup (SUBSCRIPTION_GROUP_NOT_EXIST for a group the broker does not know). */
  async deleteSubGroup(group: string): Promise<void> {
    await this.call(endpoints.deleteSubGroup, { params: { group } });
  }

  /** The lag samples the broker kept for the group, oldest first, and its sampling period. */
  lagHistory(group: string): Promise<{ samples: LagSample[]; intervalMs: number }> {
    return this.call(endpoints.lagHistory, { params: { group } });
  }
}
