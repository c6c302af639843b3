/**
 * @module The name server: broker registration with expiry, and topic routes as RocketMQ's
 * `TopicRouteData`. Brokers are named storage shards; a scheduled handler registers the configured ones
 * every 30 s, and a broker not registered for 120 s drops out of every answer, as in RocketMQ.
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { DEFAULT_PERM, PermName } from "../../core/perm-name.js";
import { LIVENESS_EXPIRY_MS, MASTER_ID } from "../../core/topology.js";
import type {
  BrokerData,
  BrokerRegistrationInfo,
  ClusterInfo,
  QueueData,
  TopicRouteData,
} from "../../protocol/index.js";
import type { Table } from "../../storage/table.js";
import { keys, queryAll } from "../store/index.js";

/** A broker as configured and registered. `brokerId` 0 is the master; others are read-only slaves. */
export interface BrokerRegistration {
  cluster: string;
  brokerName: string;
  brokerId: number;
  /** Base URL clients use for this broker (the stage's API URL). */
  address: string;
  /** Broker permission (RocketMQ's brokerPermission): ANDed into every topic's perm on this broker. Default `DEFAULT_PERM` (6). */
  perm?: number;
}

export type { BrokerData, ClusterInfo, QueueData, TopicRouteData };

export interface LiveBroker extends Required<BrokerRegistration> {
  registeredAt: number;
}

export class NameServer {
  constructor(
    private readonly routes: Table,
    private readonly now: () => number = Date.now,
  ) {}

  /** Registers (or renews) brokers. Unconditional puts: a registration is idempotent and the latest one wins. */
  async register(brokers: readonly BrokerRegistration[]): Promise<void> {
    const registeredAt = this.now();
    await Promise.all(
      brokers.map((b) =>
        this.routes.put({
          pk: keys.brokers,
          sk: keys.brokerSk(b.cluster, b.brokerName, b.brokerId),
          cluster: b.cluster,
          brokerName: b.brokerName,
          brokerId: b.brokerId,
          address: b.address,
          perm: b.perm ?? DEFAULT_PERM,
          registeredAt,
        }),
      ),
    );
  }

  /** Brokers registered in the last 120 s, one partition query. */
  async liveBrokers(): Promise<LiveBroker[]> {
    const since = this.now() - LIVENESS_EXPIRY_MS;
    return (await this.registeredBrokers()).filter((b) => b.registeredAt > since);
  }

  /** Every broker ever registered, with its last registration and whether that is recent enough to be live. */
  async brokerList(): Promise<BrokerRegistrationInfo[]> {
    const since = this.now() - LIVENESS_EXPIRY_MS;
    return (await this.registeredBrokers()).map((b) => ({ ...b, live: b.registeredAt > since }));
  }

  /** Every registration record, one partition query. */
  private async registeredBrokers(): Promise<LiveBroker[]> {
    const items = await queryAll(this.routes, keys.brokers, { consistent: true });
    return items.map((i) => ({
      cluster: String(i.cluster),
      brokerName: String(i.brokerName),
      brokerId: Number(i.brokerId),
      address: String(i.address),
      perm: Number(i.perm),
      registeredAt: Number(i.registeredAt),
    }));
  }

  async clusterInfo(): Promise<ClusterInfo> {
    const brokerAddrTable: Record<string, BrokerData> = {};
    const clusterAddrTable: Record<string, string[]> = {};
    for (const b of await this.liveBrokers()) {
      const data = brokerAddrTable[b.brokerName] ?? { cluster: b.cluster, brokerName: b.brokerName, brokerAddrs: {} };
      data.brokerAddrs[String(b.brokerId)] = b.address;
      brokerAddrTable[b.brokerName] = data;
      const names = clusterAddrTable[b.cluster] ?? [];
      if (!names.includes(b.brokerName)) names.push(b.brokerName);
      clusterAddrTable[b.cluster] = names;
    }
    for (const names of Object.values(clusterAddrTable)) names.sort();
    return { brokerAddrTable, clusterAddrTable };
  }

  /**
   * The route of a topic: its QueueData on live brokers (sorted by brokerName, perm ANDed with the broker's
   * permission) and those brokers' addresses. Two queries, never a scan. TOPIC_NOT_EXIST when no live broker has it.
   */
  async topicRoute(topic: string): Promise<TopicRouteData> {
    const [items, live] = await Promise.all([
      queryAll(this.routes, keys.topicRoute(topic), { consistent: true }),
      this.liveBrokers(),
    ]);
    const byName = new Map<string, BrokerData>();
    const brokerPerm = new Map<string, number>();
    for (const b of live) {
      const data = byName.get(b.brokerName) ?? { cluster: b.cluster, brokerName: b.brokerName, brokerAddrs: {} };
      data.brokerAddrs[String(b.brokerId)] = b.address;
      byName.set(b.brokerName, data);
      if (b.brokerId === MASTER_ID) brokerPerm.set(b.brokerName, b.perm);
    }
    const queueDatas = items
      .map((i) => toQueueData(i.sk as string, i))
      .filter((q) => byName.has(q.brokerName))
      .map((q) => ({ ...q, perm: q.perm & (brokerPerm.get(q.brokerName) ?? PermName.PERM_READ) }))
      .sort((a, b) => (a.brokerName < b.brokerName ? -1 : a.brokerName > b.brokerName ? 1 : 0));
    if (queueDatas.length === 0)
      throw new NimbusError(ErrorCode.TOPIC_NOT_EXIST, `No topic route info in name server for the topic: ${topic}`);
    const brokerDatas = queueDatas.map((q) => byName.get(q.brokerName) as BrokerData);
    return { queueDatas, brokerDatas };
  }
}

export function toQueueData(brokerName: string, item: Record<string, unknown>): QueueData {
  return {
    brokerName,
    readQueueNums: Number(item.readQueueNums),
    writeQueueNums: Number(item.writeQueueNums),
    perm: Number(item.perm),
    topicSysFlag: Number(item.topicSysFlag ?? 0),
  };
}

/** The topic's QueueData on one broker; PARAMETER_ILLEGAL when the route has no queues there. */
export function queueDataOn(route: TopicRouteData, topic: string, brokerName: string): QueueData {
  const qd = route.queueDatas.find((q) => q.brokerName === brokerName);
  if (!qd) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `topic ${topic} has no queues on broker ${brokerName}`);
  return qd;
}
