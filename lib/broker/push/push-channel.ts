/**
 * @module The push channel's broker side (docs/push-channel.md): which connection holds which queue, group
 * and producer client (the connections table, the same on DynamoDB and the embedded store), and the hints
 * sent to them through a `PushGateway` (API Gateway's Management API on AWS, the local server's sockets).
 *
 * Appends notify coalesced per queue: the first append of a quiet queue is announced at once, later ones
 * within `coalesceMs` become one trailing hint with the newest offset. Each hint costs one query of the
 * queue's connections plus one post per connection. A hint is never awaited by a send here, and an append's hint
 * queries in the turn after the append's, once the send's answer has left; `settle` lets a Lambda wait (bounded)
 * for the hints of its invocation before it freezes.
 */
import { RMQ_SYS_TRANS_HALF_TOPIC } from "../../core/names.js";
import type { HeartbeatData, RegisterFrame, ServerFrame } from "../../protocol/index.js";
import { CHANNEL_LEASE_MS } from "../../protocol/index.js";
import type { Table } from "../../storage/table.js";
import type { ClientService } from "../clients/index.js";
import type { QueueLockService } from "../consume/index.js";
import type { QueueRef } from "../queue-log/index.js";
import { queryAll } from "../store/index.js";

/**
 * Delivers a frame to one connection: `gone` when the connection no longer exists (its rows are then
 * removed), `elsewhere` when it belongs to another process this gateway cannot reach (local multi-process).
 */
export interface PushGateway {
  post(connectionId: string, frame: ServerFrame): Promise<"sent" | "gone" | "elsewhere">;
}

export interface PushChannelOptions {
  /** Appends to one queue within this window share one hint. Default 25 ms. */
  coalesceMs?: number;
  now?: () => number;
  onError?: (err: unknown, what: string) => void;
  /** The queue locks: a closed connection's client gives up its locks at once (RocketMQ's channel close). */
  locks?: QueueLockService;
}

/** Rows stay a day past their last registration, then TTL removes them (a connection lives 2 h at most on AWS). */
const TTL_SECONDS = 24 * 3600;

export const channelKeys = {
  connection: (connectionId: string) => `conn:${connectionId}`,
  queue: (q: QueueRef) => `cq:${q.topic}:${q.brokerName}:${q.queueId}`,
  group: (group: string) => `cg:${group}`,
  producer: (group: string, clientId: string) => `cp:${group}:${clientId}`,
} as const;

const REGISTRATION_SK = "registration";
/** The row of `conn:<id>` naming the user who signed the connect request (a deployment with auth). */
const USER_SK = "user";

interface Coalescing {
  timer: ReturnType<typeof setTimeout>;
  /** The newest maxOffset seen during the window, announced when the window ends. */
  pending: number;
  sent: number;
}

export class PushChannel {
  #gateway: PushGateway | undefined;
  readonly #coalesceMs: number;
  readonly #now: () => number;
  readonly #onError: (err: unknown, what: string) => void;
  readonly #windows = new Map<string, Coalescing>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #options: PushChannelOptions;
  /** Hints sent (one per post), and notifications made (one connections query each), for tests and the bench. */
  readonly stats = { notifications: 0, posts: 0, coalesced: 0 };

  constructor(
    private readonly table: Table,
    private readonly clients: ClientService,
    options: PushChannelOptions = {},
  ) {
    this.#coalesceMs = options.coalesceMs ?? 25;
    this.#now = options.now ?? Date.now;
    this.#options = options;
    this.#onError = options.onError ?? ((err, what) => console.error(`nimbus: push channel: ${what}:`, err));
  }

  /** Where hints go; without a gateway the channel only records registrations. */
  attach(gateway: PushGateway | undefined): void {
    this.#gateway = gateway;
  }

  get attached(): boolean {
    return this.#gateway !== undefined;
  }

  /**
   * Records what the connection holds (replacing its previous registration) and the client's heartbeat with
   * the channel's lease; tells the other members of a group the connection joins.
   */
  async register(connectionId: string, frame: RegisterFrame): Promise<void> {
    const hb = frame.heartbeat;
    const previous = await this.table.get({ pk: channelKeys.connection(connectionId), sk: REGISTRATION_SK });
    const wanted = new Set([
      ...frame.queues.map((q) => channelKeys.queue(q)),
      ...(hb.consumerDataSet ?? []).map((c) => channelKeys.group(c.groupName)),
      ...(hb.producerDataSet ?? []).map((p) => channelKeys.producer(p.groupName, hb.clientId)),
    ]);
    const held = new Set(stringList(previous?.keys));
    const expiresAt = this.#expiresAt();
    // The registration first: a disconnect that comes meanwhile finds every row this call may write.
    // Unconditional put: a connection's latest registration replaces the previous one.
    await this.table.put({
      pk: channelKeys.connection(connectionId),
      sk: REGISTRATION_SK,
      clientId: hb.clientId,
      keys: [...new Set([...held, ...wanted])],
      heartbeat: JSON.stringify(hb),
      expiresAt,
    });
    // Unconditional puts and deletes: each row says "this connection wants this key's hints", idempotent.
    await Promise.all([
      ...[...wanted]
        .filter((k) => !held.has(k))
        .map((pk) => this.table.put({ pk, sk: connectionId, clientId: hb.clientId, expiresAt })),
      ...[...held].filter((k) => !wanted.has(k)).map((pk) => this.table.delete({ pk, sk: connectionId })),
    ]);
    await this.table.put({
      pk: channelKeys.connection(connectionId),
      sk: REGISTRATION_SK,
      clientId: hb.clientId,
      keys: [...wanted],
      heartbeat: JSON.stringify(hb),
      queues: JSON.stringify(frame.queues),
      expiresAt,
    });
    await this.clients.heartbeat(hb, { liveUntil: this.#now() + CHANNEL_LEASE_MS, takeChecks: false });
    const joined = [...wanted].filter((k) => !held.has(k) && k.startsWith("cg:"));
    await Promise.all(joined.map((k) => this.#tellGroup(k.slice(3), connectionId)));
  }

  /**
   * Records the user who signed the connection's connect request, so that its frames (handled by other
   * invocations on AWS) are authorized as that user. Unconditional put: a connection id is connected once.
   */
  async connected(connectionId: string, username: string): Promise<void> {
    await this.table.put({
      pk: channelKeys.connection(connectionId),
      sk: USER_SK,
      username,
      expiresAt: this.#expiresAt(),
    });
  }

  /** The user recorded by `connected`, or undefined (an unsigned connection, or one already gone). */
  async userOf(connectionId: string): Promise<string | undefined> {
    const row = await this.table.get({ pk: channelKeys.connection(connectionId), sk: USER_SK });
    return typeof row?.username === "string" ? row.username : undefined;
  }

  /** Renews the lease of the connection's client (its registration's heartbeat, written again). */
  async ping(connectionId: string): Promise<boolean> {
    const reg = await this.table.get({ pk: channelKeys.connection(connectionId), sk: REGISTRATION_SK });
    if (reg === undefined || typeof reg.heartbeat !== "string") return false;
    await this.clients.heartbeat(JSON.parse(reg.heartbeat) as HeartbeatData, {
      liveUntil: this.#now() + CHANNEL_LEASE_MS,
      takeChecks: false,
    });
    return true;
  }

  /** The connection closed: its rows go, its client leaves its groups, and their other members hear of it. */
  async disconnect(connectionId: string): Promise<void> {
    const reg = await this.table.get({ pk: channelKeys.connection(connectionId), sk: REGISTRATION_SK });
    await this.table.delete({ pk: channelKeys.connection(connectionId), sk: USER_SK });
    if (reg === undefined) return;
    const keys = stringList(reg.keys);
    await Promise.all(keys.map((pk) => this.table.delete({ pk, sk: connectionId })));
    await this.table.delete({ pk: channelKeys.connection(connectionId), sk: REGISTRATION_SK });
    const hb = typeof reg.heartbeat === "string" ? (JSON.parse(reg.heartbeat) as HeartbeatData) : undefined;
    if (hb === undefined) return;
    const consumerGroups = (hb.consumerDataSet ?? []).map((c) => c.groupName);
    const producerGroups = (hb.producerDataSet ?? []).map((p) => p.groupName);
    // A client that reconnected has registered again under its new connection: it stays in the group.
    const stillThere = async (pk: string) =>
      (await queryAll(this.table, pk)).some((r) => r.sk !== connectionId && r.clientId === hb.clientId);
    const queues = typeof reg.queues === "string" ? (JSON.parse(reg.queues) as QueueRef[]) : [];
    await Promise.all([
      ...consumerGroups.map(async (g) => {
        if (await stillThere(channelKeys.group(g))) return;
        await this.clients.unregister(hb.clientId, { consumerGroup: g });
        await this.#releaseLocks(g, hb.clientId, queues);
      }),
      ...producerGroups.map(async (g) => {
        if (!(await stillThere(channelKeys.producer(g, hb.clientId))))
          await this.clients.unregister(hb.clientId, { producerGroup: g });
      }),
    ]);
    await Promise.all(consumerGroups.map((g) => this.#tellGroup(g, connectionId)));
  }

  /**
   * Ends the locks `clientId` holds in `group` on the queues its connection registered, as RocketMQ's broker
   * unlocks a channel's queues when the channel closes: an orderly consumer that crashed does not block its
   * queues for a lease. Only leases this client holds are ended (QueueLockService.unlock).
   */
  async #releaseLocks(group: string, clientId: string, queues: readonly QueueRef[]): Promise<void> {
    const locks = this.#options.locks;
    if (locks === undefined || queues.length === 0) return;
    const byTopic = new Map<string, QueueRef[]>();
    for (const q of queues) byTopic.set(q.topic, [...(byTopic.get(q.topic) ?? []), q]);
    await Promise.all([...byTopic].map(([topic, qs]) => locks.unlock(group, topic, clientId, qs)));
  }

  /**
   * The consumer groups an HTTP heartbeat makes the client join (it is not live in them yet), to hint after
   * the heartbeat is recorded. Nothing to read without a gateway (no channel: nobody to tell).
   */
  async joiningGroups(hb: HeartbeatData): Promise<string[]> {
    if (this.#gateway === undefined) return [];
    const groups = (hb.consumerDataSet ?? []).map((c) => c.groupName);
    const live = await Promise.all(groups.map((g) => this.clients.isLiveConsumer(g, hb.clientId)));
    return groups.filter((_, i) => !live[i]);
  }

  /** The group's members changed (a client joined or left over HTTP): its connections rebalance. */
  groupChanged(group: string): Promise<void> {
    return this.#tellGroup(group, undefined);
  }

  /** Check-backs wait for `clientId` of `group`: its connection, if any, heartbeats at once to take them. */
  checksWaiting(group: string, clientId: string): void {
    this.#track(this.#post(channelKeys.producer(group, clientId), { type: "checks", producerGroup: group }));
  }

  /** An append made `q` hold messages below `maxOffset`: hint its holders, coalesced. Never throws, never waits. */
  queueAppended(q: QueueRef, maxOffset: number): void {
    // Nobody consumes the half queues: their appends cost no connections query.
    if (this.#gateway === undefined || q.topic === RMQ_SYS_TRANS_HALF_TOPIC) return;
    const pk = channelKeys.queue(q);
    const window = this.#windows.get(pk);
    if (window !== undefined) {
      window.pending = Math.max(window.pending, maxOffset);
      this.stats.coalesced++;
      return;
    }
    this.#hintQueue(q, maxOffset);
    const open: Coalescing = {
      timer: setTimeout(() => this.#closeWindow(q, pk), this.#coalesceMs),
      pending: 0,
      sent: maxOffset,
    };
    this.#windows.set(pk, open);
  }

  /**
   * Waits for the hints under way (the trailing ones of open windows included), at most `maxMs`: a Lambda
   * calls it before it answers, since a frozen container sends nothing. The local server never waits.
   */
  async settle(maxMs: number): Promise<void> {
    if (this.#windows.size === 0 && this.#inFlight.size === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, maxMs);
    });
    const drained = (async () => {
      while (this.#windows.size > 0 || this.#inFlight.size > 0) {
        await Promise.all([...this.#inFlight]);
        if (this.#windows.size > 0) await new Promise((r) => setTimeout(r, this.#coalesceMs));
      }
    })();
    await Promise.race([bound, drained]);
    clearTimeout(timer);
  }

  /** Posts one frame to one connection (the answer to its frame, on AWS). */
  async send(connectionId: string, frame: ServerFrame): Promise<void> {
    if ((await this.#gateway?.post(connectionId, frame)) === "gone") await this.disconnect(connectionId);
  }

  /** Stops the windows' timers (the local server's close). */
  close(): void {
    for (const w of this.#windows.values()) clearTimeout(w.timer);
    this.#windows.clear();
  }

  #closeWindow(q: QueueRef, pk: string): void {
    const window = this.#windows.get(pk);
    if (window === undefined) return;
    if (window.pending > window.sent) {
      this.#hintQueue(q, window.pending);
      window.sent = window.pending;
      window.timer = setTimeout(() => this.#closeWindow(q, pk), this.#coalesceMs);
      return;
    }
    this.#windows.delete(pk);
  }

  #hintQueue(q: QueueRef, maxOffset: number): void {
    const frame: ServerFrame = {
      type: "queue",
      topic: q.topic,
      brokerName: q.brokerName,
      queueId: q.queueId,
      maxOffset,
    };
    this.#track(this.#postAfterAnswers(channelKeys.queue(q), frame));
  }

  /**
   * `#post` in a later turn than the append's: the connections query (one per queue per window, 10–30 µs on the
   * embedded store) runs after the send's answer has left, not before it (the remoting and HTTP doors write their
   * answers in the append's turn).
   */
  async #postAfterAnswers(pk: string, frame: ServerFrame): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    await this.#post(pk, frame);
  }

  async #tellGroup(group: string, except: string | undefined): Promise<void> {
    await this.#post(channelKeys.group(group), { type: "members", consumerGroup: group }, except);
  }

  /** Posts `frame` to every connection registered under `pk` (one query); a gone connection is disconnected. */
  async #post(pk: string, frame: ServerFrame, except?: string): Promise<void> {
    const gateway = this.#gateway;
    if (gateway === undefined) return;
    this.stats.notifications++;
    try {
      const rows = await queryAll(this.table, pk);
      await Promise.all(
        rows
          .map((r) => String(r.sk))
          .filter((id) => id !== except)
          .map(async (id) => {
            const outcome = await gateway.post(id, frame);
            if (outcome === "sent") this.stats.posts++;
            if (outcome === "gone") await this.disconnect(id);
          }),
      );
    } catch (err) {
      this.#onError(err, `hint ${frame.type} to ${pk}`);
    }
  }

  #track(p: Promise<void>): void {
    this.#inFlight.add(p);
    void p.finally(() => this.#inFlight.delete(p));
  }

  #expiresAt(): number {
    return Math.floor(this.#now() / 1000) + TTL_SECONDS;
  }
}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}
