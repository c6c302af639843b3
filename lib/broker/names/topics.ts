/**
 * @module Topic administration: QueueData per broker (create, update, delete, list) and queue status.
 * Every input is checked before the first write, so a rejected request writes nothing.
 */

import { ErrorCode, NimbusError } from "../../core/errors.js";
import { validateTopic } from "../../core/names.js";
import { DEFAULT_PERM, PermName } from "../../core/perm-name.js";
import { MASTER_ID } from "../../core/topology.js";
import { DEFAULT_QUEUE_NUMS, type QueueStatus, type TopicConfig } from "../../protocol/index.js";
import type { Table } from "../../storage/table.js";
import { ConditionFailedError } from "../../storage/table.js";
import type { QueueLog, QueueRef } from "../queue-log/index.js";
import { keys, queryAll } from "../store/index.js";
import type { LiveBroker, NameServer, QueueData, TopicRouteData } from "./name-server.js";

export interface TopicListEntry {
  topic: string;
  /** Set when the topic was deleted; its queues wait for retention. */
  deletedAt?: number;
  /** The most queues the topic ever had on each broker (retention trims them all). */
  queues: Record<string, number>;
}

const illegal = (message: string) => new NimbusError(ErrorCode.PARAMETER_ILLEGAL, message);

export class TopicService {
  constructor(
    private readonly routes: Table,
    private readonly nameServer: NameServer,
    private readonly queueLog: QueueLog,
    /** Called after the topic's route changed (the data plane's route cache drops it). */
    private readonly onChange: (topic: string) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  /** Creates or updates the topic's QueueData on the named brokers (default: every live master). */
  async upsert(topic: string, input: TopicConfig): Promise<TopicRouteData> {
    const config = {
      readQueueNums: input.readQueueNums ?? DEFAULT_QUEUE_NUMS,
      writeQueueNums: input.writeQueueNums ?? DEFAULT_QUEUE_NUMS,
      perm: input.perm ?? DEFAULT_PERM,
    };
    const masters = await this.liveMasters();
    const brokerNames = input.brokerNames ?? masters.map((b) => b.brokerName);
    if (brokerNames.length === 0)
      throw new NimbusError(ErrorCode.SERVICE_NOT_AVAILABLE, "no live broker to create the topic on");
    for (const name of brokerNames) {
      if (!masters.some((b) => b.brokerName === name)) throw illegal(`broker ${name} is not a live master broker`);
    }
    if (new Set(brokerNames).size !== brokerNames.length) throw illegal("brokerNames has duplicates");
    // Unconditional puts: an admin update replaces this broker's QueueData, and only this broker's.
    await Promise.all(
      [...new Set(brokerNames)].map((brokerName) =>
        this.routes.put({
          pk: keys.topicRoute(topic),
          sk: brokerName,
          ...config,
          topicSysFlag: 0,
          updatedAt: this.now(),
        }),
      ),
    );
    await this.#listTopic(
      topic,
      Object.fromEntries(brokerNames.map((b) => [b, Math.max(config.readQueueNums, config.writeQueueNums)])),
    );
    this.onChange(topic);
    return this.nameServer.topicRoute(topic);
  }

  /** Whether `topic` exists (its list entry, not deleted): one consistent read. */
  async exists(topic: string): Promise<boolean> {
    const entry = await this.routes.get({ pk: keys.topicList, sk: topic }, { consistent: true });
    return entry !== undefined && entry.deletedAt === undefined;
  }

  /**
   * RocketMQ's auto-create: `readQueueNums`/`writeQueueNums` on every live writable master. Conditional so that
   * a concurrent admin update or auto-create is never overwritten.
   */
  async autoCreate(topic: string, queueNums: number): Promise<TopicRouteData> {
    const writable = (await this.liveMasters()).filter((b) => PermName.isWriteable(b.perm));
    if (writable.length === 0)
      throw new NimbusError(ErrorCode.SERVICE_NOT_AVAILABLE, "no live writable broker to create the topic on");
    await Promise.all(writable.map((b) => this.#createQueueData(topic, b.brokerName, queueNums)));
    await this.#listTopic(topic, Object.fromEntries(writable.map((b) => [b.brokerName, queueNums])));
    // Said where an operator looks: a typo in a producer's topic otherwise creates a topic silently.
    console.info(
      `nimbus: topic ${topic} did not exist; a send created it (autoCreateTopicEnable): ${queueNums} read and write queues on ${writable.map((b) => b.brokerName).join(", ")}`,
    );
    return this.nameServer.topicRoute(topic);
  }

  /**
   * Gives a system topic one queue on `brokerName` if it has none (RocketMQ creates its system topics on
   * first use), so operators can read it and retention trims it. Returns the queue.
   */
  async ensureSystemQueue(topic: string, brokerName: string): Promise<QueueRef> {
    // A topic derived from a group (`%RETRY%`, `%DLQ%`) is checked before anything is written: a name no pull
    // could read is refused here, whichever door the request came through.
    validateTopic(topic);
    const existing = await this.routes.get({ pk: keys.topicRoute(topic), sk: brokerName }, { consistent: true });
    if (existing === undefined) {
      await this.#createQueueData(topic, brokerName, 1);
      await this.#listTopic(topic, { [brokerName]: 1 });
      this.onChange(topic);
    }
    return { topic, brokerName, queueId: 0 };
  }

  /** All topics, from the topic list partition (no scan). */
  async list(): Promise<string[]> {
    return (await this.listEntries()).filter((e) => e.deletedAt === undefined).map((e) => e.topic);
  }

  /**
   * The topic list with deleted topics too: retention still has to trim a deleted topic's queues, so its
   * entry stays, marked deleted, with the queue numbers it had.
   */
  async listEntries(): Promise<TopicListEntry[]> {
    const items = await queryAll(this.routes, keys.topicList, { consistent: true });
    return items.map((i) => ({
      topic: String(i.sk),
      ...(typeof i.deletedAt === "number" ? { deletedAt: i.deletedAt } : {}),
      queues: (i.queues ?? {}) as Record<string, number>,
    }));
  }

  /**
   * Deletes the topic's route on every broker. Its messages stay in the queue log until retention: a topic
   * created again under the same name goes on at the next offsets, so no offset ever names two messages.
   */
  async delete(topic: string): Promise<void> {
    const items = await queryAll(this.routes, keys.topicRoute(topic), { consistent: true });
    if (items.length === 0) throw new NimbusError(ErrorCode.TOPIC_NOT_EXIST, `topic ${topic} does not exist`);
    const queues = Object.fromEntries(
      items.map((i) => [String(i.sk), Math.max(Number(i.readQueueNums), Number(i.writeQueueNums))]),
    );
    await this.#listTopic(topic, queues, this.now());
    await Promise.all(items.map((i) => this.routes.delete({ pk: i.pk, sk: i.sk })));
    this.onChange(topic);
  }

  /**
   * Min/max offset and last store time of every queue of the topic (queue ids up to max(read, write) - 1); with
   * `load`, each queue's write load too (one more query per index key: QueueLog.load).
   */
  async status(topic: string, options: { load?: boolean } = {}): Promise<QueueStatus[]> {
    const route = await this.nameServer.topicRoute(topic);
    const rows = route.queueDatas.flatMap((qd) =>
      queueIds(qd).map((queueId) => ({ brokerName: qd.brokerName, queueId })),
    );
    return Promise.all(
      rows.map(async (r) => {
        const status = { ...r, ...(await this.queueLog.status({ topic, ...r })) };
        return options.load === true ? { ...status, load: await this.queueLog.load({ topic, ...r }) } : status;
      }),
    );
  }

  /** Creates the topic's QueueData on one broker unless it has one: a concurrent admin update or creation stays. */
  async #createQueueData(topic: string, brokerName: string, queueNums: number): Promise<void> {
    try {
      // Condition `attribute_not_exists(pk)`: create the QueueData only if nobody has set it meanwhile.
      await this.routes.put(
        {
          pk: keys.topicRoute(topic),
          sk: brokerName,
          readQueueNums: queueNums,
          writeQueueNums: queueNums,
          perm: DEFAULT_PERM,
          topicSysFlag: 0,
          updatedAt: this.now(),
        },
        { condition: { exists: false } },
      );
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
    }
  }

  /**
   * Writes the topic's list entry, keeping per broker the most queues the topic ever had, so retention
   * still trims queues that a later update dropped (and every queue of a deleted topic).
   */
  async #listTopic(topic: string, queues: Record<string, number>, deletedAt?: number): Promise<void> {
    const previous = await this.routes.get({ pk: keys.topicList, sk: topic }, { consistent: true });
    const merged: Record<string, number> = { ...((previous?.queues ?? {}) as Record<string, number>) };
    for (const [broker, n] of Object.entries(queues)) merged[broker] = Math.max(n, merged[broker] ?? 0);
    const createdAt =
      typeof previous?.createdAt === "number" && previous.deletedAt === undefined ? previous.createdAt : this.now();
    // Unconditional put: admin changes of one topic are rare; a lost merge only means retention may look at one queue less until the next update.
    await this.routes.put({
      pk: keys.topicList,
      sk: topic,
      createdAt,
      queues: merged,
      ...(deletedAt === undefined ? {} : { deletedAt }),
    });
  }

  private async liveMasters(): Promise<LiveBroker[]> {
    return (await this.nameServer.liveBrokers()).filter((b) => b.brokerId === MASTER_ID);
  }
}

/** Every queue id that exists on a broker: RocketMQ keeps max(read, write) queues. */
export function queueIds(qd: QueueData): number[] {
  return Array.from({ length: Math.max(qd.readQueueNums, qd.writeQueueNums) }, (_, i) => i);
}
