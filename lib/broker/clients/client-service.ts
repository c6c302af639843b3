/**
 * @module Producer and consumer heartbeats per group, as RocketMQ's ProducerManager/ConsumerManager. A
 * client is live while its last heartbeat is under 120 s old; the table's TTL only tidies up, hours late.
 */
import { compileFilter, type FilterExpression } from "../../core/filter/index.js";
import { LIVENESS_EXPIRY_MS } from "../../core/topology.js";
import {
  type ConsumerInfo,
  ConsumerRunningInfoSchema,
  type ConsumerStatus,
  type HeartbeatData,
  type OffsetReset,
  OffsetResetSchema,
  type ProducerInfo,
  type SubscriptionData,
  type TransactionCheck,
} from "../../protocol/index.js";
import type { Item, Table } from "../../storage/table.js";
import { keys, queryAll } from "../store/index.js";

/** Check-backs handed to one producer with one heartbeat answer, at most. */
export const MAX_CHECKS_PER_HEARTBEAT = 32;

/** Rows stay a day past their last heartbeat, then DynamoDB TTL removes them. */
const TTL_SECONDS = 24 * 3600;

export class ClientService {
  /** Told when a check-back waits for a producer client (the push channel hints it). */
  onCheckAdded: ((group: string, clientId: string) => void) | undefined;
  /** Told as well when a check-back waits for a producer client (the gRPC endpoint pushes it on its stream). */
  readonly checkListeners = new Set<(group: string, clientId: string) => void>();
  /**
   * Asked before a consumer's heartbeat is recorded (its subscription group: refuses a BROADCASTING consumer of
   * a group that does not allow it, and records the group).
   */
  beforeConsumerHeartbeat: ((group: string, messageModel: string | undefined) => Promise<void>) | undefined;

  constructor(
    private readonly clients: Table,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Records the heartbeat; a producer gets the check-backs waiting for it (each handed out once).
   * A push channel's registration passes `liveUntil` (the client stays live until then without heartbeats)
   * and `takeChecks: false` (its checks are taken by the heartbeat its `checks` hint asks for).
   */
  async heartbeat(
    hb: HeartbeatData,
    channel: { liveUntil?: number; takeChecks?: boolean } = {},
  ): Promise<TransactionCheck[]> {
    const { liveUntil } = channel;
    const producers = hb.producerDataSet ?? [];
    const consumers = hb.consumerDataSet ?? [];
    const lastHeartbeat = this.now();
    const expiresAt = Math.floor(lastHeartbeat / 1000) + TTL_SECONDS;
    // Every filter compiles before anything is written: a bad one is PARAMETER_ILLEGAL and registers nothing.
    for (const c of consumers) for (const s of c.subscriptionDataSet ?? []) compileFilter(filterOf(s));
    const admit = this.beforeConsumerHeartbeat;
    if (admit) await Promise.all(consumers.map((c) => admit(c.groupName, c.messageModel)));
    // Unconditional puts: a heartbeat replaces the client's previous one.
    await Promise.all([
      ...producers.map((p) =>
        this.clients.put({
          pk: keys.producers(p.groupName),
          sk: hb.clientId,
          language: hb.language ?? "",
          version: hb.version ?? "",
          transactional: p.transactional === true,
          lastHeartbeat,
          ...(liveUntil === undefined ? {} : { liveUntil }),
          expiresAt,
        }),
      ),
      ...consumers.map((c) =>
        this.clients.put({
          pk: keys.consumers(c.groupName),
          sk: hb.clientId,
          consumeType: c.consumeType ?? "CONSUME_PASSIVELY",
          messageModel: c.messageModel ?? "CLUSTERING",
          consumeFromWhere: c.consumeFromWhere ?? "CONSUME_FROM_LAST_OFFSET",
          subscriptionDataSet: (c.subscriptionDataSet ?? []).map(reportedSubscription),
          // Stored as text: it is only ever read back whole (consumerStatus).
          ...(c.runningInfo === undefined ? {} : { runningInfo: JSON.stringify(c.runningInfo) }),
          lastHeartbeat,
          ...(liveUntil === undefined ? {} : { liveUntil }),
          expiresAt,
        }),
      ),
    ]);
    if (channel.takeChecks === false) return [];
    const transactional = producers.filter((p) => p.transactional === true).map((p) => p.groupName);
    return (await Promise.all(transactional.map((g) => this.#takeTransactionChecks(g, hb.clientId)))).flat();
  }

  /**
   * The check-backs waiting for `clientId` in `group`, at most `MAX_CHECKS_PER_HEARTBEAT` (the rest come with
   * the next heartbeats), deleted as they are handed out: a lost answer waits for the next check round.
   */
  async #takeTransactionChecks(group: string, clientId: string): Promise<TransactionCheck[]> {
    const page = await this.clients.query(keys.transactionChecks(group, clientId), {
      consistent: true,
      limit: MAX_CHECKS_PER_HEARTBEAT,
    });
    // Unconditional deletes: a check is handed out at most once; the next check round asks again.
    await Promise.all(page.items.map((i) => this.clients.delete({ pk: i.pk, sk: i.sk })));
    return page.items.map((i) => ({
      transactionId: String(i.sk),
      producerGroup: group,
      checkTimes: Number(i.checkTimes),
    }));
  }

  /** Leaves a check-back for a producer client of the check's group, handed out with its next heartbeat answer. */
  async addTransactionCheck(clientId: string, check: TransactionCheck): Promise<void> {
    const expiresAt = Math.floor(this.now() / 1000) + TTL_SECONDS;
    // Unconditional put: a newer check of the same transaction replaces an older one not yet picked up.
    await this.clients.put({
      pk: keys.transactionChecks(check.producerGroup, clientId),
      sk: check.transactionId,
      checkTimes: check.checkTimes,
      expiresAt,
    });
    this.onCheckAdded?.(check.producerGroup, clientId);
    for (const listener of this.checkListeners) listener(check.producerGroup, clientId);
  }

  /** Live producers of the group (only those answering check-backs with `transactional`), the most recently heard from first. */
  async producers(group: string, filter: { transactional?: boolean } = {}): Promise<ProducerInfo[]> {
    const since = this.now() - LIVENESS_EXPIRY_MS;
    const items = await queryAll(this.clients, keys.producers(group), { consistent: true });
    return items
      .filter((i) => this.#live(i, since))
      .filter((i) => filter.transactional === undefined || (i.transactional === true) === filter.transactional)
      .map((i) => ({
        clientId: String(i.sk),
        clientAddr: String(i.sk).split("@")[0] ?? "",
        language: typeof i.language === "string" ? i.language : "",
        version: typeof i.version === "string" ? i.version : "",
        transactional: i.transactional === true,
        lastHeartbeat: Number(i.lastHeartbeat),
      }))
      .sort((a, b) => b.lastHeartbeat - a.lastHeartbeat || (a.clientId < b.clientId ? -1 : 1));
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

  /** Live consumers of the group, sorted by client id, each flagged when its subscription is not the group's. */
  async consumers(group: string): Promise<ConsumerInfo[]> {
    return (await this.connection(group)).consumers;
  }

  /** The group's live consumers and its latest offset reset per topic, from one read of its partition. */
  async connection(group: string): Promise<{ consumers: ConsumerInfo[]; offsetResets: OffsetReset[]; items: Item[] }> {
    const since = this.now() - LIVENESS_EXPIRY_MS;
    const all = await queryAll(this.clients, keys.consumers(group), { consistent: true });
    const offsetResets = all
      .filter((i) => i.kind === "offsetReset" && typeof i.reset === "string")
      .flatMap((i) => {
        const parsed = OffsetResetSchema.safeParse(JSON.parse(String(i.reset)));
        return parsed.success ? [parsed.data] : [];
      });
    const items = all
      .filter((i) => i.kind !== "offsetReset" && this.#live(i, since))
      .sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0));
    const subs = items.map((i) =>
      (Array.isArray(i.subscriptionDataSet) ? i.subscriptionDataSet : []).map((s) => {
        const sub = s as Record<string, unknown>;
        return reportedSubscription({
          topic: String(sub.topic),
          subString: String(sub.subString),
          ...(sub.expressionType === "SQL92" ? { expressionType: "SQL92" as const } : {}),
        });
      }),
    );
    const groupSubscription = majority(subs.map(subscriptionKey));
    const consumers = items.map((i, n) => ({
      clientId: String(i.sk),
      consumeType: String(i.consumeType),
      messageModel: i.messageModel === "BROADCASTING" ? ("BROADCASTING" as const) : ("CLUSTERING" as const),
      consumeFromWhere: String(i.consumeFromWhere),
      subscriptionDataSet: subs[n] ?? [],
      lastHeartbeat: Number(i.lastHeartbeat),
      subscriptionConsistent: groupSubscription !== undefined && subscriptionKey(subs[n] ?? []) === groupSubscription,
    }));
    return { consumers, offsetResets, items };
  }

  /** Per live member, what its last heartbeat reported about its work (`consumerStatus`). */
  async status(group: string): Promise<ConsumerStatus[]> {
    const { consumers, items } = await this.connection(group);
    return consumers.map((c, n) => {
      const text = items[n]?.runningInfo;
      const parsed = typeof text === "string" ? ConsumerRunningInfoSchema.safeParse(JSON.parse(text)) : undefined;
      return {
        clientId: c.clientId,
        lastHeartbeat: c.lastHeartbeat,
        subscriptionDataSet: c.subscriptionDataSet,
        subscriptionConsistent: c.subscriptionConsistent,
        ...(parsed?.success ? { runningInfo: parsed.data } : {}),
      };
    });
  }

  /** Records a group's offset reset of a topic for its live consumers (the latest per topic). */
  async recordOffsetReset(group: string, reset: OffsetReset): Promise<void> {
    // Unconditional put: a newer reset of the same topic replaces the older one.
    await this.clients.put({
      pk: keys.consumers(group),
      sk: keys.offsetResetSk(reset.topic),
      kind: "offsetReset",
      reset: JSON.stringify(reset),
      expiresAt: Math.floor(this.now() / 1000) + TTL_SECONDS,
    });
  }

  /** Whether the client is a live consumer of the group now (one read). */
  async isLiveConsumer(group: string, clientId: string): Promise<boolean> {
    const item = await this.clients.get({ pk: keys.consumers(group), sk: clientId });
    return item !== undefined && this.#live(item, this.now() - LIVENESS_EXPIRY_MS);
  }

  /** Heard from within the liveness expiry, or holding a push channel's lease. */
  #live(item: Item, since: number): boolean {
    return Number(item.lastHeartbeat) > since || (typeof item.liveUntil === "number" && item.liveUntil > this.now());
  }
}

/** A subscription's filter; no `expressionType` is RocketMQ's default, TAG. */
function filterOf(s: SubscriptionData): FilterExpression {
  return { type: s.expressionType ?? "TAG", expression: s.subString };
}

/** A subscription as stored and reported: `expressionType` only when it is not TAG, so TAG rows stay as they were. */
function reportedSubscription(s: SubscriptionData): StoredSubscription {
  return {
    topic: s.topic,
    subString: s.subString,
    ...(s.expressionType === "SQL92" ? { expressionType: "SQL92" as const } : {}),
  };
}

type StoredSubscription = { topic: string; subString: string; expressionType?: "SQL92" };

/** A subscription as one comparable string: its topics, expression types and expressions, sorted by topic. */
function subscriptionKey(subs: readonly StoredSubscription[]): string {
  return JSON.stringify([...subs].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0)));
}

/** The value more entries share than any other; undefined when two tie at the top (no group subscription). */
function majority(values: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  const ranked = [...counts].sort((a, b) => b[1] - a[1]);
  const [first, second] = ranked;
  if (first === undefined || (second !== undefined && second[1] === first[1])) return undefined;
  return first[0];
}
