/**
 * @module Consumer offsets per (topic, group, brokerName, queueId), as RocketMQ's consumerOffset.json:
 * commit, query, and the consumer-progress table of a group. An offset moves only by a commit or an admin reset.
 * The offset record is also the queue's ownership record (docs/client.md "Queue handover"): each write names
 * the client that made it (`owner`) and whether that client released the queue with it (`released`), so a
 * handover costs no write besides the releasing commit, and the next owner learns both where to start and
 * whether it may start from one read.
 */

import { ErrorCode, isNimbusError, NimbusError } from "../../core/errors.js";
import type { OffsetEntry, ProgressRow, QueueOwner, ReleaseEntry } from "../../protocol/index.js";
import { ConditionFailedError, type Table } from "../../storage/table.js";
import type { RouteCache } from "../names/index.js";
import { queueIds } from "../names/index.js";
import type { QueueLog } from "../queue-log/index.js";
import { keys, queryAll } from "../store/index.js";
import { CarriedOffsets, type CarriedOffsetsOptions } from "./carried-offsets.js";

export type { OffsetEntry, ProgressRow, QueueOwner, ReleaseEntry };

/** Who writes a commit: the client (recorded as the queues' owner) and whether it releases the queues. */
export interface CommitAuthor {
  clientId: string;
  released: boolean;
  /** Write only queues without a record (`{ exists: false }`): the first claim of a new queue wins. */
  claim?: boolean;
}

/** A commit's turn on the offset records it writes: wait for `before`, then call `done` once written (or failed). */
interface WriteTurn {
  before: Promise<unknown>;
  done: () => void;
}

export class OffsetService {
  readonly #knownGroupTopics = new Set<string>();
  /**
   * The writes this process has in flight, by offset partition (group and topic), then by record (queue): each a
   * promise settled once that commit's put has landed or failed. A commit's put of a record waits for the one
   * before it, so commits of one queue land in the order they reached this process (a 4.x consumer's periodic
   * commit sent just before mqadmin's reset must not land after the reset's commit of offset 0); a query waits for
   * the partition's writes in flight (a oneway commit, then a query on the same connection, reads that commit).
   * Bounded by the writes in flight: an entry leaves when its write settles.
   */
  readonly #inFlight = new Map<string, Map<string, Promise<unknown>>>();
  /** Told of a group's first commit on a topic in this process (the group's subscription group records it). */
  onGroupTopic: ((group: string) => Promise<void>) | undefined;
  /** The offsets pulls carry, held and written at most once per queue per interval (carried-offsets.ts). */
  readonly carried: CarriedOffsets;

  constructor(
    private readonly offsets: Table,
    private readonly routes: RouteCache,
    private readonly queueLog: QueueLog,
    private readonly now: () => number = Date.now,
    carried: CarriedOffsetsOptions = {},
  ) {
    // A carried offset is written as a commit of its queue alone, naming its client as the owner, not released.
    this.carried = new CarriedOffsets(async (group, topic, entry, author) => {
      const [stored] = await this.#commit(
        group,
        topic,
        [entry],
        author && { ...author, released: false, claim: false },
      );
      return stored?.offset ?? entry.offset;
    }, carried);
  }

  /**
   * The offset a pull carried (FLAG_COMMIT_OFFSET), by `clientId` when the connection named one: held, and written
   * within the carried offsets' interval unless a commit of its queue comes first (carried-offsets.ts).
   */
  carry(group: string, topic: string, entry: OffsetEntry, clientId: string | undefined): Promise<void> {
    return this.carried.carry(group, topic, entry, clientId === undefined ? undefined : { clientId });
  }

  /**
   * Sets the offsets (last commit wins). With an `author`, each record also names its owner and whether
   * it was released: the same single put per queue, so a release costs what a commit costs.
   */
  async commit(
    group: string,
    topic: string,
    entries: (OffsetEntry | ReleaseEntry)[],
    author?: CommitAuthor,
  ): Promise<void> {
    // What pulls carried for these queues is older than this commit: it is not written after it. Once written, what
    // it stored is what a carried offset of the same owner is compared with (the client's own commit every 5 s, then
    // its suspended pull's offset, unchanged, costs no write).
    const pk = keys.offsets(topic, group);
    this.carried.supersede(
      pk,
      entries.map((e) => keys.offsetSk(e.brokerName, e.queueId)),
    );
    const stored = await this.#commit(group, topic, entries, author);
    this.carried.remember(
      pk,
      stored.map((e) => ({ sk: keys.offsetSk(e.brokerName, e.queueId), offset: e.offset })),
      ownerRemembered(author),
    );
  }

  /**
   * A client's periodic commit of its queues (a 4.x client's UPDATE_CONSUMER_OFFSET, every 5 s whether its offsets
   * moved or not), naming `clientId` (when its connection named one) as their owner: `commit`, leaving out the
   * queues this process stored with that offset and owner less than a minute ago (carried-offsets.ts), with no newer
   * carried offset held and no write of them under way. A consumer that waits for messages then costs a write per
   * queue a minute. A queue left out is not checked against the topic's route (a oneway request either way).
   */
  async commitMoved(group: string, topic: string, entries: OffsetEntry[], clientId: string | undefined): Promise<void> {
    const pk = keys.offsets(topic, group);
    const writing = this.#inFlight.get(pk);
    const moved = entries.filter((e) => {
      const sk = keys.offsetSk(e.brokerName, e.queueId);
      return writing?.has(sk) === true || !this.carried.isStored(pk, sk, e.offset, clientId ?? "");
    });
    this.carried.stats.skippedUnmoved += entries.length - moved.length;
    if (moved.length === 0) return;
    await this.commit(
      group,
      topic,
      moved,
      clientId === undefined ? undefined : { clientId, released: false, claim: false },
    );
  }

  /** Writes `entries` in this commit's turn; the entries as stored (each offset clamped to its queue's end). */
  async #commit(
    group: string,
    topic: string,
    entries: (OffsetEntry | ReleaseEntry)[],
    author: CommitAuthor | undefined,
  ): Promise<OffsetEntry[]> {
    const seen = new Set<string>();
    for (const e of entries) {
      const sk = keys.offsetSk(e.brokerName, e.queueId);
      if (seen.has(sk)) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `queue ${sk} appears twice`);
      seen.add(sk);
    }
    // Taken before anything is awaited: the turn is this commit's arrival order.
    const turn = this.#takeTurn(keys.offsets(topic, group), seen);
    try {
      return await this.#commitInTurn(group, topic, entries, turn.before, author);
    } finally {
      turn.done();
    }
  }

  async #commitInTurn(
    group: string,
    topic: string,
    entries: (OffsetEntry | ReleaseEntry)[],
    before: Promise<unknown>,
    author: CommitAuthor | undefined,
  ): Promise<OffsetEntry[]> {
    // Only queues the topic has: a stray offset would otherwise live on in the group's progress forever.
    const route = await this.routes.get(topic);
    for (const e of entries) {
      const qd = route.queueDatas.find((q) => q.brokerName === e.brokerName);
      if (!qd || e.queueId >= Math.max(qd.readQueueNums, qd.writeQueueNums)) {
        throw new NimbusError(
          ErrorCode.PARAMETER_ILLEGAL,
          `topic ${topic} has no queue ${e.queueId} on broker ${e.brokerName}`,
        );
      }
    }
    // An offset past the queue's end is clamped to it: stored as is it would read "caught up" in progress and
    // send the group back to the queue's start on the next pull (OFFSET_ILLEGAL). Free in the usual case.
    const clamped = await Promise.all(
      entries.map(async (e) => ({
        ...e,
        offset: await this.queueLog.clampToMaxOffset({ topic, brokerName: e.brokerName, queueId: e.queueId }, e.offset),
      })),
    );
    const updatedAt = this.now();
    // Unconditional puts: a commit sets the group's position as RocketMQ's does (last commit wins). The
    // owner fields need no condition either: only the client holding a queue commits it, a release is its
    // last write, and a late write of a former owner is read by the next one as "not released" (it waits
    // at most its grace) with an offset below the truth (duplicates, never a loss).
    // A claim is a conditional create (attribute_not_exists): of concurrent claims of one new queue exactly
    // one writes; the others fail the condition, which is their answer (the record names the winner).
    const claim = author?.claim === true ? { condition: { exists: false } as const } : undefined;
    await before;
    await Promise.all(
      clamped.map((e) =>
        this.offsets
          .put(
            {
              pk: keys.offsets(topic, group),
              sk: keys.offsetSk(e.brokerName, e.queueId),
              brokerName: e.brokerName,
              queueId: e.queueId,
              offset: e.offset,
              updatedAt,
              ...("successor" in e && e.successor !== undefined && author?.released ? { successor: e.successor } : {}),
              ...(author === undefined ? {} : { owner: author.clientId, released: author.released }),
            },
            claim,
          )
          .catch((err: unknown) => {
            if (!(claim && err instanceof ConditionFailedError)) throw err;
          }),
      ),
    );
    const groupTopic = `${group}\n${topic}`;
    if (!this.#knownGroupTopics.has(groupTopic)) {
      await Promise.all([
        this.offsets.put({ pk: keys.groupTopics(group), sk: topic, since: updatedAt }),
        this.onGroupTopic?.(group),
      ]);
      this.#knownGroupTopics.add(groupTopic);
    }
    return clamped.map((e) => ({ brokerName: e.brokerName, queueId: e.queueId, offset: e.offset }));
  }

  /** This commit's turn on records `sks` of partition `pk`: after the writes in flight there, before later ones. */
  #takeTurn(pk: string, sks: ReadonlySet<string>): WriteTurn {
    let records = this.#inFlight.get(pk);
    if (records === undefined) {
      records = new Map();
      this.#inFlight.set(pk, records);
    }
    const earlier: Promise<unknown>[] = [];
    let settle = () => {};
    const mine = new Promise<void>((resolve) => {
      settle = resolve;
    });
    for (const sk of sks) {
      const previous = records.get(sk);
      if (previous !== undefined) earlier.push(previous);
      records.set(sk, mine);
    }
    return {
      before: Promise.all(earlier),
      done: () => {
        settle();
        for (const sk of sks) if (records.get(sk) === mine) records.delete(sk);
        if (records.size === 0 && this.#inFlight.get(pk) === records) this.#inFlight.delete(pk);
      },
    };
  }

  /** Settles once the offsets pulls carried in partition `pk` and its writes in flight now have landed or failed. */
  async #written(pk: string): Promise<void> {
    await this.carried.flushPartition(pk);
    const records = this.#inFlight.get(pk);
    if (records !== undefined) await Promise.all(records.values());
  }

  async query(group: string, topic: string): Promise<OffsetEntry[]> {
    await this.#written(keys.offsets(topic, group));
    const items = await queryAll(this.offsets, keys.offsets(topic, group), { consistent: true });
    return items.map((i) => ({
      brokerName: String(i.brokerName),
      queueId: Number(i.queueId),
      offset: Number(i.offset),
    }));
  }

  /** Each queue's offset with its owner: who wrote it last and whether that write released the queue. */
  async owners(group: string, topic: string): Promise<QueueOwner[]> {
    await this.#written(keys.offsets(topic, group));
    const items = await queryAll(this.offsets, keys.offsets(topic, group), { consistent: true });
    return items.map((i) => ({
      brokerName: String(i.brokerName),
      queueId: Number(i.queueId),
      offset: Number(i.offset),
      owner: typeof i.owner === "string" ? i.owner : "",
      released: i.released === true,
      successor: i.released === true && typeof i.successor === "string" ? i.successor : "",
      updatedAt: Number(i.updatedAt),
    }));
  }

  /** Topics the group has committed offsets for. */
  async topicsOf(group: string): Promise<string[]> {
    await this.carried.flushGroup(group);
    return (await queryAll(this.offsets, keys.groupTopics(group), { consistent: true })).map((i) => String(i.sk));
  }

  /** RocketMQ's consumerProgress: every queue of the topic(s), broker offset, consumer offset, diff. */
  async progress(group: string, topic?: string, options: { lastTimestamps?: boolean } = {}): Promise<ProgressRow[]> {
    const topics = topic === undefined ? await this.topicsOf(group) : [topic];
    // Without a topic, skip topics deleted since the group committed on them.
    const rows = await Promise.all(
      topics.map((t) =>
        this.#topicProgress(group, t, options.lastTimestamps ?? true).catch((err: unknown) => {
          if (topic === undefined && isNimbusError(err, ErrorCode.TOPIC_NOT_EXIST)) return [];
          throw err;
        }),
      ),
    );
    return rows.flat();
  }

  /** With `lastTimestamps` false, no read of the last consumed message (`lastTimestamp` 0): what a lag sum needs. */
  async #topicProgress(group: string, topic: string, lastTimestamps: boolean): Promise<ProgressRow[]> {
    const [route, committed] = await Promise.all([this.routes.get(topic), this.query(group, topic)]);
    const byQueue = new Map(committed.map((e) => [keys.offsetSk(e.brokerName, e.queueId), e.offset]));
    const queues = route.queueDatas.flatMap((qd) =>
      queueIds(qd).map((queueId) => ({ topic, brokerName: qd.brokerName, queueId })),
    );
    return Promise.all(
      queues.map(async (q) => {
        const status = await this.queueLog.status(q);
        const consumerOffset = byQueue.get(keys.offsetSk(q.brokerName, q.queueId)) ?? 0;
        let lastTimestamp = 0;
        if (lastTimestamps && consumerOffset > status.minOffset && consumerOffset <= status.maxOffset) {
          const last = await this.queueLog.read(q, consumerOffset - 1, { maxMessages: 1 });
          lastTimestamp = last.messages[0]?.storeTimestamp ?? 0;
        }
        // Messages, not offsets: a dead writer's sealed range is no lag (exact for a group that keeps up;
        // an upper bound past the backlog's page, docs/api.md).
        const diff = (await this.queueLog.backlog(q, consumerOffset, status.maxOffset)).messages;
        return { ...q, brokerOffset: status.maxOffset, consumerOffset, diff, lastTimestamp };
      }),
    );
  }
}

/** Whom a commit's records name, as the carried offsets remember it: "" none; undefined for a release or a claim. */
function ownerRemembered(author: CommitAuthor | undefined): string | undefined {
  if (author === undefined) return "";
  return author.released || author.claim === true ? undefined : author.clientId;
}
