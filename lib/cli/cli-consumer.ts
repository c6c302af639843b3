/**
 * @module The pull loop behind `nimbus consume`: a CLUSTERING consumer of one group and topic that
 * heartbeats, takes its share of the readable queues as the SDK's consumers do (RocketMQ's default
 * AllocateMessageQueueAveragely over the group's live consumers, every 20 s and within 5 s of a membership
 * change), starts each queue at the group's committed offset (or its min / max offset for a group without
 * one, per `--from`), hands every message to the caller in queue order, commits what was handed over every
 * 5 s, and leaves the group. The queue handover is the SDK's (docs/client.md "Queue handover"): a queue
 * that leaves, and every queue at the end, is committed and released at once; a new queue is read only
 * once its previous owner released it, left the group, or had a grace of 10 s. Written over NimbusApi so
 * that the CLI controls exactly which offsets it commits.
 */
import { AllocateMessageQueueAveragely } from "../client/allocate/index.js";
import { pullFilterFields, subscriptionData } from "../client/consumer/index.js";
import { buildMQClientId, localIPv4, resolveInstanceName } from "../client/index.js";
import type { HeartbeatData, NimbusApi, PulledMessage, PullResponse } from "../client/transport/index.js";
import { compileFilter, type FilterExpression } from "../core/filter/index.js";
import { MessageQueue } from "../core/message-queue.js";
import { PermName } from "../core/perm-name.js";
import { sleep } from "../core/sleep.js";
import { CliChannel } from "./cli-channel.js";

export interface CliConsumerOptions {
  group: string;
  topic: string;
  /** The subscription's filter: a tag expression (`--subExpression`) or SQL92 (`--sql`). */
  filter: FilterExpression;
  /** Where a queue without a committed offset starts: its min offset or its max offset. */
  from: "first" | "last";
  /** Stop after this many messages. */
  count?: number | undefined;
  /** Stop after this many ms without a message (0: after the first round that found none). */
  idleMs?: number;
  /** Stops the loop (Ctrl-C); offsets are committed all the same. */
  signal: AbortSignal;
  /** First idle wait, doubling while nothing comes (default 1000 ms). */
  idleFirstMs?: number;
  /** Open the push channel (default true): hints end idle waits and group changes rebalance at once. */
  pushChannel?: boolean;
  /** Called for every message, in queue order within a queue. */
  onMessage(message: PulledMessage): void;
  /** A failure the loop survives (a pull or a commit that failed); it tries again later. */
  onError(err: unknown, what: string): void;
}

export interface ConsumeSummary {
  clientId: string;
  consumed: number;
  /** Set when the final commit failed: the offsets of the end are not stored. */
  commitError?: unknown;
  /** The queues this consumer held at the end, with their offsets. */
  queues: { brokerName: string; queueId: number; offset: number }[];
}

interface QueueState {
  mq: MessageQueue;
  offset: number;
  /** The offset differs from the committed one. */
  dirty: boolean;
}

const REBALANCE_MS = 20_000;
const MEMBERSHIP_MS = 5_000;
/** How often queues waiting for their previous owner read the owners table, and how long they wait at most. */
const HANDOVER_POLL_MS = 1_000;
const HANDOVER_GRACE_MS = 10_000;
const COMMIT_MS = 5_000;
const PULL_BATCH = 32;
/** Polling backoff while nothing comes: 1 s doubling, capped lower than the SDK's 30 s for people watching. */
const IDLE_FIRST_MS = 1_000;
const IDLE_MAX_MS = 5_000;
/** With the push channel up, hints end the waits: idle reads and membership checks only this often. */
const CHANNEL_IDLE_MAX_MS = 60_000;

export class CliConsumer {
  readonly clientId = buildMQClientId({
    clientIP: localIPv4(),
    instanceName: resolveInstanceName("DEFAULT", { role: "consumer" }),
  });
  readonly #api: NimbusApi;
  readonly #o: CliConsumerOptions;
  readonly #queues = new Map<string, QueueState>();
  /** Queues assigned here and waiting for their previous owner's release, with the time the wait ends. */
  readonly #waiting = new Map<string, { mq: MessageQueue; until: number }>();
  #liveIds: string[] = [];
  /** Who gets each queue in the last allocation (what a release names as the next owner). */
  #successors = new Map<string, string>();
  /** The readable queues as of the last rebalance. */
  #allQueues: MessageQueue[] = [];
  readonly #strategy = new AllocateMessageQueueAveragely();
  /** The push channel, once `run` opened it. */
  channel: CliChannel | undefined;
  #consumed = 0;

  constructor(api: NimbusApi, options: CliConsumerOptions) {
    compileFilter(options.filter); // PARAMETER_ILLEGAL before anything is sent
    this.#api = api;
    this.#o = options;
  }

  /** Runs until `count` messages, the idle time, or the signal; then commits and leaves the group. */
  async run(): Promise<ConsumeSummary> {
    // Startup failures (no such topic, no broker) end the command; later ones are retried.
    await this.#api.topicRoute(this.#o.topic);
    await this.#heartbeat();
    if (this.#o.pushChannel !== false) {
      this.channel = new CliChannel(
        this.#api,
        () => this.#heartbeatData(),
        () => [...this.#queues.values()].map((q) => q.mq),
        this.#o.onError,
      );
    }
    let commitError: unknown;
    let held: QueueState[] = [];
    try {
      await this.#rebalance();
      await this.#loop();
    } finally {
      held = [...this.#queues.values()];
      // Leaving: each queue goes to whoever gets it among the others.
      this.#allocateSuccessors(this.#liveIds.filter((id) => id !== this.clientId));
      await this.#release(held).catch((err: unknown) => {
        commitError = err ?? new Error("commit failed");
      });
      await this.channel?.close();
      await this.#api
        .unregister(this.clientId, { consumerGroup: this.#o.group })
        .catch((err: unknown) => this.#o.onError(err, "leaving the group"));
    }
    return {
      clientId: this.clientId,
      consumed: this.#consumed,
      commitError,
      queues: held.map((q) => ({
        brokerName: q.mq.brokerName,
        queueId: q.mq.queueId,
        offset: q.offset,
      })),
    };
  }

  #done(): boolean {
    return this.#o.signal.aborted || (this.#o.count !== undefined && this.#consumed >= this.#o.count);
  }

  async #loop(): Promise<void> {
    let nextRebalance = Date.now() + REBALANCE_MS;
    let nextMembership = Date.now() + MEMBERSHIP_MS;
    let nextHandover = Date.now() + HANDOVER_POLL_MS;
    let nextCommit = Date.now() + COMMIT_MS;
    let lastMessageAt = Date.now();
    const idleFirst = this.#o.idleFirstMs ?? IDLE_FIRST_MS;
    let idle = idleFirst;
    while (!this.#done()) {
      const channelUp = this.channel?.up === true;
      if (Date.now() >= nextRebalance || this.channel?.takeMembersChanged()) {
        nextRebalance = Date.now() + (channelUp ? CHANNEL_IDLE_MAX_MS : REBALANCE_MS);
        // With the channel up its registration keeps this client in the group.
        await (channelUp ? Promise.resolve() : this.#heartbeat())
          .then(() => this.#rebalance())
          .catch((err: unknown) => this.#o.onError(err, "rebalancing"));
      }
      if (Date.now() >= nextMembership && !channelUp) {
        nextMembership = Date.now() + MEMBERSHIP_MS;
        await this.#api
          .consumerIds(this.#o.group)
          .then((ids) => (sortIds(ids).join("\n") === this.#liveIds.join("\n") ? undefined : this.#rebalance()))
          .catch((err: unknown) => this.#o.onError(err, "reading the consumer list"));
      }
      if (this.#waiting.size > 0 && Date.now() >= nextHandover) {
        nextHandover = Date.now() + HANDOVER_POLL_MS;
        await this.#admitWaiting().catch((err: unknown) => this.#o.onError(err, "reading the queue owners"));
      }
      if (Date.now() >= nextCommit) {
        nextCommit = Date.now() + COMMIT_MS;
        await this.#commit().catch((err: unknown) => this.#o.onError(err, "committing offsets"));
      }
      const found = await this.#round();
      if (found > 0) {
        this.channel?.found();
        lastMessageAt = Date.now();
        idle = idleFirst;
        continue;
      }
      if (this.#done()) break;
      let pause = this.#waiting.size > 0 ? Math.min(idle, HANDOVER_POLL_MS) : idle;
      if (this.#o.idleMs !== undefined) {
        const left = this.#o.idleMs - (Date.now() - lastMessageAt);
        if (left <= 0) break;
        pause = Math.min(pause, left);
      }
      if (this.channel) await this.channel.wait(pause, this.#o.signal);
      else await sleep(pause, this.#o.signal);
      idle = Math.max(idleFirst, Math.min(idle * 2, this.channel?.up ? CHANNEL_IDLE_MAX_MS : IDLE_MAX_MS));
    }
  }

  /** One pull of every held queue (in parallel); hands the messages over in queue order. */
  async #round(): Promise<number> {
    const states = [...this.#queues.values()].sort((a, b) => MessageQueue.compare(a.mq, b.mq));
    const left = this.#o.count === undefined ? PULL_BATCH : Math.min(PULL_BATCH, this.#o.count - this.#consumed);
    let failures = 0;
    let firstFailure: unknown;
    const results = await Promise.all(
      states.map((s) =>
        this.#api
          .pull({
            consumerGroup: this.#o.group,
            topic: this.#o.topic,
            brokerName: s.mq.brokerName,
            queueId: s.mq.queueId,
            queueOffset: s.offset,
            maxMsgNums: Math.max(1, left),
            ...pullFilterFields(this.#o.filter),
          })
          .catch((err: unknown): undefined => {
            if (failures++ === 0) firstFailure = err;
          }),
      ),
    );
    // One line per round, not one per queue, while the API is away.
    if (failures > 0) this.#o.onError(firstFailure, `pulling (${failures} of ${states.length} queues failed)`);
    let found = 0;
    states.forEach((s, i) => {
      const res = results[i];
      if (res !== undefined) found += this.#take(s, res);
    });
    return found;
  }

  #take(s: QueueState, res: PullResponse): number {
    let taken = 0;
    for (const m of res.messages) {
      if (this.#done()) return taken;
      this.#o.onMessage(m);
      this.#consumed++;
      taken++;
      s.offset = m.queueOffset + 1;
      s.dirty = true;
    }
    // Past the last message: filtered-out messages (NO_MATCHED_MSG, FOUND) and moved offsets (OFFSET_ILLEGAL).
    if (!this.#done() && res.nextBeginOffset !== s.offset) {
      s.offset = res.nextBeginOffset;
      s.dirty = true;
    }
    return taken;
  }

  async #heartbeat(): Promise<void> {
    await this.#api.heartbeat(this.#heartbeatData());
  }

  #heartbeatData(): HeartbeatData {
    return {
      clientId: this.clientId,
      consumerDataSet: [
        {
          groupName: this.#o.group,
          consumeType: "CONSUME_ACTIVELY",
          messageModel: "CLUSTERING",
          consumeFromWhere: this.#o.from === "first" ? "CONSUME_FROM_FIRST_OFFSET" : "CONSUME_FROM_LAST_OFFSET",
          subscriptionDataSet: [subscriptionData(this.#o.topic, this.#o.filter)],
        },
      ],
    };
  }

  /** Takes this consumer's share of the readable queues; a queue it gives up is committed and released first. */
  async #rebalance(): Promise<void> {
    const [route, ids] = await Promise.all([this.#api.topicRoute(this.#o.topic), this.#api.consumerIds(this.#o.group)]);
    const all: MessageQueue[] = [];
    for (const qd of route.queueDatas) {
      if (!PermName.isReadable(qd.perm)) continue;
      for (let id = 0; id < qd.readQueueNums; id++) all.push(new MessageQueue(this.#o.topic, qd.brokerName, id));
    }
    all.sort(MessageQueue.compare);
    const cids = sortIds(ids);
    this.#liveIds = cids;
    const mine =
      all.length === 0 || cids.length === 0 ? [] : this.#strategy.allocate(this.#o.group, this.clientId, all, cids);
    this.#allQueues = all;
    this.#allocateSuccessors(cids);
    const wanted = new Set(mine.map((mq) => mq.key()));
    for (const [key, w] of this.#waiting) if (!wanted.has(key)) this.#waiting.delete(w.mq.key());
    const dropped = [...this.#queues.values()].filter((s) => !wanted.has(s.mq.key()));
    if (dropped.length > 0) await this.#release(dropped);
    for (const mq of mine) {
      if (!this.#queues.has(mq.key()) && !this.#waiting.has(mq.key())) {
        this.#waiting.set(mq.key(), { mq, until: Date.now() + HANDOVER_GRACE_MS });
      }
    }
    await this.#admitWaiting();
  }

  /** Records who gets each queue when `cids` share them (what a release names as the next owner). */
  #allocateSuccessors(cids: string[]): void {
    this.#successors = new Map();
    if (this.#allQueues.length === 0) return;
    for (const cid of cids) {
      for (const mq of this.#strategy.allocate(this.#o.group, cid, this.#allQueues, cids)) {
        this.#successors.set(mq.key(), cid);
      }
    }
  }

  /** Starts the waiting queues whose turn it is: held by nobody, by us, or by a client gone or late. */
  async #admitWaiting(): Promise<void> {
    if (this.#waiting.size === 0) return;
    const owners = new Map(
      (await this.#api.queueOwners(this.#o.group, this.#o.topic)).map((o) => [`${o.brokerName}#${o.queueId}`, o]),
    );
    const added: MessageQueue[] = [];
    for (const [key, w] of this.#waiting) {
      const o = owners.get(`${w.mq.brokerName}#${w.mq.queueId}`);
      // The holder: whom a release names as the next owner, else the last committer.
      const holder = o === undefined ? "" : o.released ? o.successor : o.owner;
      const turn =
        holder === "" || holder === this.clientId || !this.#liveIds.includes(holder) || Date.now() >= w.until;
      if (!turn) continue;
      this.#waiting.delete(key);
      added.push(w.mq);
    }
    if (added.length === 0) return;
    const committed = new Map(
      (await this.#api.queryOffsets(this.#o.group, this.#o.topic)).map((e) => [
        `${e.brokerName}#${e.queueId}`,
        e.offset,
      ]),
    );
    const missing = added.filter((mq) => (committed.get(`${mq.brokerName}#${mq.queueId}`) ?? -1) < 0);
    const bounds = new Map(
      missing.length === 0
        ? []
        : (await this.#api.topicStatus(this.#o.topic)).map((q) => [`${q.brokerName}#${q.queueId}`, q]),
    );
    const fresh: QueueState[] = [];
    for (const mq of added) {
      const key = `${mq.brokerName}#${mq.queueId}`;
      const stored = committed.get(key) ?? -1;
      const b = bounds.get(key);
      // A group without an offset starts per --from, and claims that start at once (as the SDK's consumers do):
      // a consumer taking the queue over then resumes here, and sees whose it is.
      const offset = stored >= 0 ? stored : this.#o.from === "first" ? (b?.minOffset ?? 0) : (b?.maxOffset ?? 0);
      if (stored >= 0) this.#queues.set(mq.key(), { mq, offset, dirty: false });
      else fresh.push({ mq, offset, dirty: false });
    }
    if (fresh.length === 0) {
      this.channel?.registrationChanged();
      return;
    }
    // The first claim of a new queue wins; a lost one waits for the winner's release like any other.
    const won = await this.#api.claimQueues(this.#o.group, this.#o.topic, this.clientId, fresh.map(entryOf));
    for (const s of fresh) {
      if (won.some((e) => e.brokerName === s.mq.brokerName && e.queueId === s.mq.queueId))
        this.#queues.set(s.mq.key(), s);
      else this.#waiting.set(s.mq.key(), { mq: s.mq, until: Date.now() + HANDOVER_GRACE_MS });
    }
    this.channel?.registrationChanged();
  }

  async #commit(): Promise<void> {
    await this.#commitStates([...this.#queues.values()]);
  }

  async #commitStates(states: QueueState[]): Promise<void> {
    const dirty = states.filter((s) => s.dirty);
    if (dirty.length === 0) return;
    await this.#api.commitOffsets(this.#o.group, this.#o.topic, dirty.map(entryOf), this.clientId);
    for (const s of dirty) s.dirty = false;
  }

  /** Commits and releases queues leaving this consumer (changed or not: the release is the hand-over), then forgets them. */
  async #release(states: QueueState[]): Promise<void> {
    if (states.length === 0) return;
    try {
      const rows = states.map((s) => {
        const successor = this.#successors.get(s.mq.key());
        return successor === undefined ? entryOf(s) : { ...entryOf(s), successor };
      });
      await this.#api.releaseQueues(this.#o.group, this.#o.topic, this.clientId, rows);
      for (const s of states) s.dirty = false;
    } finally {
      for (const s of states) this.#queues.delete(s.mq.key());
      this.channel?.registrationChanged();
    }
  }
}

const entryOf = (s: QueueState) => ({ brokerName: s.mq.brokerName, queueId: s.mq.queueId, offset: s.offset });

const sortIds = (ids: readonly string[]): string[] => [...new Set(ids)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
