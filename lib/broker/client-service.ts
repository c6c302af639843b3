/**
 * @module Producer and consumer heartbeats per group, as RocketMQ's ProducerManager/ConsumerManager. A
 * client is live while its last heartbeat is under 120 s old; the table's TTL only tidies up, hours late.
 */
import { LIVENESS_EXPIRY_MS } from "../core/topology.js";
import type { ConsumerInfo, HeartbeatData } from "../protocol/index.js";
import type { Table } from "../storage/table.js";
import { queryAll } from "./query-all.js";
import { keys } from "./tables.js";

/** Rows stay a day past their last heartbeat, then DynamoDB TTL removes them. */
const TTL_SECONDS = 24 * 3600;

export class ClientService {
  constructor(
    private readonly clients: Table,
    private readonly now: () => number = Date.now,
  ) {}

  async heartbeat(hb: HeartbeatData): Promise<void> {
    const producers = hb.producerDataSet ?? [];
    const consumers = hb.consumerDataSet ?? [];
    const lastHeartbeat = this.now();
    const expiresAt = Math.floor(lastHeartbeat / 1000) + TTL_SECONDS;
    // Unconditional puts: a heartbeat replaces the client's previous one.
    await Promise.all([
      ...producers.map((p) =>
        this.clients.put({ pk: keys.producers(p.groupName), sk: hb.clientId, lastHeartbeat, expiresAt }),
      ),
      ...consumers.map((c) =>
        this.clients.put({
          pk: keys.consumers(c.groupName),
          sk: hb.clientId,
          consumeType: c.consumeType ?? "CONSUME_PASSIVELY",
          messageModel: c.messageModel ?? "CLUSTERING",
          consumeFromWhere: c.consumeFromWhere ?? "CONSUME_FROM_LAST_OFFSET",
          subscriptionDataSet: (c.subscriptionDataSet ?? []).map((s) => ({ topic: s.topic, subString: s.subString })),
          lastHeartbeat,
          expiresAt,
        }),
      ),
    ]);
  }

  /** Removes the client from the groups at once (RocketMQ's UNREGISTER_CLIENT), so a rebalance need not wait 120 s. */
  async unregister(
    clientId: string,
    groups: { producerGroup?: string | undefined; consumerGroup?: string | undefined },
  ): Promise<void> {
    await Promise.all([
      groups.producerGroup === undefined
        ? undefined
        : this.clients.delete({ pk: keys.producers(groups.producerGroup), sk: clientId }),
      groups.consumerGroup === undefined
        ? undefined
        : this.clients.delete({ pk: keys.consumers(groups.consumerGroup), sk: clientId }),
    ]);
  }

  /** Live consumers of the group, sorted by client id. */
  async consumers(group: string): Promise<ConsumerInfo[]> {
    const since = this.now() - LIVENESS_EXPIRY_MS;
    const items = await queryAll(this.clients, keys.consumers(group), { consistent: true });
    return items
      .filter((i) => Number(i.lastHeartbeat) > since)
      .map((i) => ({
        clientId: String(i.sk),
        consumeType: String(i.consumeType),
        messageModel: i.messageModel === "BROADCASTING" ? ("BROADCASTING" as const) : ("CLUSTERING" as const),
        consumeFromWhere: String(i.consumeFromWhere),
        subscriptionDataSet: (Array.isArray(i.subscriptionDataSet) ? i.subscriptionDataSet : []).map((s) => {
          const sub = s as Record<string, unknown>;
          return { topic: String(sub.topic), subString: String(sub.subString) };
        }),
        lastHeartbeat: Number(i.lastHeartbeat),
      }))
      .sort((a, b) => (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0));
  }
}
