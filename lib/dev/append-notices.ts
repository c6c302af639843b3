/**
 * @module The append notices one worker process tells the others (`nimbus dev --workers N`, `nimbus proxy
 * --workers N`), only for the topics another worker waits on: each worker announces the topics its waiters hold
 * (the queue log's `interest`: long-polled receives, suspended pulls, delivered subscriptions) when that set
 * changes, and a worker sends a notice of its append only when another worker asked for the topic, once per queue
 * per turn of the event loop with the queue's newest end.
 *
 * Nothing is missed when a waiter starts just as an append happens elsewhere: its hold carries `since`, a time
 * before its first read of storage; each worker remembers when it last appended to each of its recent queues, and
 * on hearing of a newly held topic it tells of its appends to it from `since` on (less a second for the clock).
 * An append before `since` was committed before the waiter read, so the read saw it.
 */
import type { AppendInterest, NoticeCounts, QueueRef } from "../broker/queue-log/index.js";
import { BoundedMap } from "../core/bounded-map.js";

export type AppendedNotice = { t: "appended"; topic: string; brokerName: string; queueId: number; maxOffset: number };

/** A worker's held topics, sent when they change ("all": every topic), and on `ask` by the others. */
export type InterestNotice = { t: "interest"; from: number; topics: string[] | "all"; since: number; ask: boolean };

/** Queues whose last append a worker remembers (for a hold heard late); the oldest is forgotten first. */
const MAX_RECENT_QUEUES = 4096;
/** The clocks of one machine's processes agree; this covers a step of the clock. */
const CLOCK_SLACK_MS = 1000;
/** Workers whose interest is kept (`--workers` is at most 64). */
const MAX_PEERS = 64;
/** Topics kept by name per worker (as many as a worker names: append-interest.ts); past it, every topic. */
const MAX_PEER_TOPICS = 1024;

interface Recent {
  q: QueueRef;
  maxOffset: number;
  at: number;
}

export class AppendNotices {
  readonly #send: (m: AppendedNotice | InterestNotice) => void;
  readonly #interest: AppendInterest;
  readonly #self: number;
  readonly #peers = new Map<number, ReadonlySet<string> | "all">();
  readonly #recent = new BoundedMap<string, Recent>(MAX_RECENT_QUEUES, { order: "written" });
  readonly #pending = new Map<string, AppendedNotice>();
  /** The earliest `since` of the holds not yet announced; undefined: no change to announce. */
  #announce: { since: number } | undefined;
  readonly counts: NoticeCounts;

  constructor(send: (m: AppendedNotice | InterestNotice) => void, interest: AppendInterest, self = process.pid) {
    this.#send = send;
    this.#interest = interest;
    this.counts = interest.notices;
    this.#self = self;
    interest.onChange((change) => {
      const since = change.grew ? change.since : Number.POSITIVE_INFINITY;
      if (this.#announce === undefined) {
        this.#announce = { since };
        setImmediate(() => this.#sendInterest(false));
      } else this.#announce.since = Math.min(this.#announce.since, since);
    });
  }

  /** Asks the other workers for their held topics, telling them this one's (a worker starting). */
  start(): void {
    this.#announce = { since: Date.now() };
    this.#sendInterest(true);
  }

  /** The queue log's listener: this worker's appends (not those heard from elsewhere). */
  appended(q: QueueRef, maxOffset: number, elsewhere: boolean): void {
    if (elsewhere) return;
    const key = `${q.topic}\u0000${q.brokerName}\u0000${q.queueId}`;
    const recent = this.#recent.get(key);
    const at = Date.now();
    if (recent === undefined) {
      this.#recent.set(key, { q: { topic: q.topic, brokerName: q.brokerName, queueId: q.queueId }, maxOffset, at });
    } else {
      recent.maxOffset = Math.max(recent.maxOffset, maxOffset);
      recent.at = at;
      this.#recent.set(key, recent);
    }
    if (this.#wanted(q.topic)) this.#notify(key, q, maxOffset);
    else this.counts.withheld++;
  }

  /** Another worker's held topics. */
  heardInterest(m: InterestNotice): void {
    if (m.from === this.#self) return;
    const before = this.#peers.get(m.from);
    if (before === undefined && this.#peers.size >= MAX_PEERS) return;
    const after = m.topics === "all" || m.topics.length > MAX_PEER_TOPICS ? "all" : new Set(m.topics);
    this.#peers.set(m.from, after);
    if (m.ask) {
      this.#announce ??= { since: Number.POSITIVE_INFINITY };
      this.#sendInterest(false);
    }
    if (before === "all") return;
    const added = (topic: string) => (after === "all" || after.has(topic)) && !before?.has(topic);
    const from = m.since - CLOCK_SLACK_MS;
    for (const [key, r] of this.#recent) {
      if (r.at < from || !added(r.q.topic)) continue;
      this.counts.caughtUp++;
      this.#notify(key, r.q, r.maxOffset);
    }
  }

  /** A notice heard from another worker. */
  heardAppended(): void {
    this.counts.heard++;
  }

  #wanted(topic: string): boolean {
    for (const topics of this.#peers.values()) if (topics === "all" || topics.has(topic)) return true;
    return false;
  }

  #notify(key: string, q: QueueRef, maxOffset: number): void {
    const pending = this.#pending.get(key);
    if (pending !== undefined) {
      pending.maxOffset = Math.max(pending.maxOffset, maxOffset);
      return;
    }
    if (this.#pending.size === 0) setImmediate(() => this.#flush());
    this.#pending.set(key, { t: "appended", topic: q.topic, brokerName: q.brokerName, queueId: q.queueId, maxOffset });
  }

  #flush(): void {
    for (const notice of this.#pending.values()) {
      this.counts.sent++;
      this.#send(notice);
    }
    this.#pending.clear();
  }

  #sendInterest(ask: boolean): void {
    const announce = this.#announce;
    if (announce === undefined) return;
    this.#announce = undefined;
    const topics = this.#interest.topics();
    const since = Number.isFinite(announce.since) ? announce.since : Date.now();
    this.#send({ t: "interest", from: this.#self, topics: topics === "all" ? "all" : [...topics], since, ask });
  }
}
