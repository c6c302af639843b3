/**
 * @module The queue handover of a clustering consumer (docs/client.md "Queue handover"). A queue's offset
 * record on the broker names its owner (the client that committed it last) and whether that owner released
 * it (stopped reading, waited for its running listeners, committed where it stopped) and to whom (its
 * rebalance's choice of the next owner). The queue's holder is the successor of a released record, else its
 * owner. A consumer newly assigned a queue reads it only when the holder is nobody, itself, or a client no
 * longer in the group's membership; otherwise it polls the record until one of those holds or `graceMillis`
 * passed (a holder that is alive but stuck, or sees the group differently, must not stall the queue).
 *
 * A queue taken without a release (grace passed, owner gone) may still see a late commit or release of the
 * previous owner. For a while (another grace) the new owner does not commit it and watches the record: the
 * messages it delivered below the previous owner's last offset had been committed by another member; their
 * count is `duplicates` (RocketMQ has no such number).
 *
 * @example
 * const handover = new Handover({ api, group, clientId, graceMillis: 10_000, pollMillis: 1000, liveIds });
 * const turn = await handover.awaitTurn(mq, signal); // then start the queue at its committed offset
 */
import type { MessageQueue } from "../../core/message-queue.js";
import { sleep } from "../schedule.js";
import type { NimbusApi, QueueOwner } from "../transport/index.js";

export interface HandoverConfig {
  api: NimbusApi;
  group: string;
  clientId: string;
  /** Longest wait for a live previous owner's release. */
  graceMillis: number;
  /** How often a waiting queue reads its record. */
  pollMillis: number;
  /** The group's live consumer ids as last read. */
  liveIds(): readonly string[];
  now?: () => number;
}

/** How a queue came to this consumer. */
export type Turn =
  /** Released by its previous owner, never owned, owned by this consumer already, or not handed over at all. */
  | { kind: "clean" }
  /** Taken without a release: the owner left the group (`left`) or did not release within the grace. */
  | { kind: "left" | "grace"; previousOwner: string; offset: number };

interface Watch {
  previousOwner: string;
  startOffset: number;
  until: number;
  /** The highest offset the previous owner wrote, seen so far. */
  seen: number;
  delivered: number[];
}

const keyOf = (brokerName: string, queueId: number) => `${brokerName}#${queueId}`;

export class Handover {
  readonly #reads = new Map<string, Promise<Map<string, QueueOwner>>>();
  readonly #watches = new Map<string, Watch>();
  readonly #now: () => number;
  /** Deliveries of messages another member had already committed (see the module comment). */
  duplicates = 0;

  constructor(private readonly config: HandoverConfig) {
    this.#now = config.now ?? Date.now;
  }

  /** Resolves when this consumer may read `mq`; rejects when `signal` aborts (the queue went elsewhere). */
  async awaitTurn(mq: MessageQueue, signal: AbortSignal): Promise<Turn> {
    const { clientId, graceMillis, pollMillis } = this.config;
    const deadline = this.#now() + graceMillis;
    for (;;) {
      const record = (await this.#read(mq.topic)).get(keyOf(mq.brokerName, mq.queueId));
      // Released to someone else: that one holds the queue now (or is about to), and releases it in turn.
      const holder = record === undefined ? "" : record.released ? record.successor : record.owner;
      if (record === undefined || holder === "" || holder === clientId) return { kind: "clean" };
      const taken = { previousOwner: holder, offset: record.offset };
      if (!this.config.liveIds().includes(holder)) return { kind: record.released ? "clean" : "left", ...taken };
      if (this.#now() >= deadline) return { kind: "grace", ...taken };
      await sleep(Math.min(pollMillis, Math.max(1, deadline - this.#now())), signal);
      signal.throwIfAborted();
    }
  }

  /** After a turn taken without a release: watch the previous owner's writes for one more grace. */
  watch(mq: MessageQueue, turn: Turn, startOffset: number): void {
    if (turn.kind === "clean") return;
    this.#watches.set(mq.key(), {
      previousOwner: turn.previousOwner,
      startOffset,
      until: this.#now() + this.config.graceMillis,
      seen: turn.offset,
      delivered: [],
    });
  }

  /** Whether `mq`'s offset is held back from commits (its previous owner may still write it). */
  watching(mq: MessageQueue): boolean {
    return this.#watches.has(mq.key());
  }

  /** Messages of `mq` handed to the application. */
  delivered(mq: MessageQueue, offsets: readonly number[]): void {
    this.#watches.get(mq.key())?.delivered.push(...offsets);
  }

  /**
   * Reads the records of the watched queues' topics (one request per topic) and ends the watches whose
   * previous owner released, or whose time is up: their duplicates are counted.
   */
  async checkWatches(): Promise<void> {
    if (this.#watches.size === 0) return;
    const topics = new Set([...this.#watches.keys()].map((k) => k.split("#")[0] ?? ""));
    const records = new Map<string, QueueOwner>();
    for (const topic of topics) {
      for (const [k, r] of await this.#read(topic)) records.set(`${topic}#${k}`, r);
    }
    for (const [key, w] of this.#watches) {
      const r = records.get(key);
      if (r !== undefined && r.owner === w.previousOwner) w.seen = Math.max(w.seen, r.offset);
      if ((r !== undefined && r.owner === w.previousOwner && r.released) || this.#now() >= w.until) this.#end(key);
    }
  }

  /** Ends the watch of a queue leaving this consumer (its count stays what was seen). */
  unwatch(mq: MessageQueue): void {
    this.#end(mq.key());
  }

  #end(key: string): void {
    const w = this.#watches.get(key);
    if (w === undefined) return;
    this.#watches.delete(key);
    this.duplicates += w.delivered.filter((o) => o >= w.startOffset && o < w.seen).length;
  }

  /** One request per topic for the reads of one moment (many queues of a topic move at once). */
  #read(topic: string): Promise<Map<string, QueueOwner>> {
    let pending = this.#reads.get(topic);
    if (pending === undefined) {
      pending = this.config.api
        .queueOwners(this.config.group, topic)
        .then((rows) => new Map(rows.map((r) => [keyOf(r.brokerName, r.queueId), r])))
        .finally(() => this.#reads.delete(topic));
      this.#reads.set(topic, pending);
    }
    return pending;
  }
}
