/**
 * @module The offsets that pulls carry (a 4.x push consumer's PULL_MESSAGE with FLAG_COMMIT_OFFSET: the offset it has
 * consumed up to, on nearly every pull), held in memory and written at most once per queue per interval, as
 * RocketMQ's broker keeps them in its offset table and persists it every 5 s (`flushConsumerOffsetInterval`).
 * Written at once, each pull of 32 messages cost the store a write: a SQLite transaction on the embedded store, a
 * DynamoDB write on AWS. Now a consumer that keeps pulling costs one write per queue per interval, and one that
 * waits (a suspended pull every 15 s carrying the same offset) none: an offset equal to the one this process last
 * wrote for the same owner is not written again.
 *
 * What it keeps of RocketMQ's semantics, and what it changes:
 * - **This process reads its own carried offsets**: a read of a group's offsets here (a query, the progress, the
 *   owners) writes the group's pending ones first (`OffsetService`).
 * - **An explicit commit wins**: a commit (UPDATE_CONSUMER_OFFSET, the HTTP API, a reset) of a record drops the
 *   offset pending for it, so a held offset never lands after a later commit.
 * - **Another process sees a carried offset up to `intervalMs` late**, and a process killed (SIGKILL) loses at most
 *   that much: the consumer then gets again what it had consumed since (at least once, never a loss), as after a
 *   RocketMQ broker's crash. The client also commits every queue's offset itself every 5 s.
 * - **Bounded**: at most `maxPending` offsets wait; past that a carried offset is written at once. The offsets
 *   remembered as written are at most `maxRemembered`; past that the memory is cleared (more writes, nothing else).
 * - A stop (`flush`) writes what waits. A write that fails is reported and dropped: the next pull carries the offset
 *   again.
 */
import type { OffsetEntry } from "../../protocol/index.js";
import { keys } from "../store/index.js";

/** Who wrote a carried offset: the client named in the record (none: a pull from a connection without one). */
export interface CarriedAuthor {
  clientId: string;
}

/** Writes `entries` of one group and topic as one commit, naming `author` as their owner (not released). */
export type CarriedWrite = (
  group: string,
  topic: string,
  entries: OffsetEntry[],
  author: CarriedAuthor | undefined,
) => Promise<void>;

export interface CarriedOffsetsOptions {
  /** The longest an offset waits before it is written (ms; default 1,000). */
  intervalMs?: number;
  /** The most offsets waiting at once (default 4,096). */
  maxPending?: number;
  /** The most offsets remembered as written (default 16,384). */
  maxRemembered?: number;
  /** Told of a write that failed (default: logged). */
  onError?: (err: unknown) => void;
}

interface Pending {
  group: string;
  topic: string;
  entry: OffsetEntry;
  author: CarriedAuthor | undefined;
}

export class CarriedOffsets {
  /** The offsets waiting, by the group's offset partition (`keys.offsets`), then by queue record. */
  readonly #pending = new Map<string, Map<string, Pending>>();
  #count = 0;
  /** What this process last wrote of each record (its partition and record), to skip an unchanged offset. */
  readonly #written = new Map<string, { offset: number; owner: string }>();
  /** Counts the supersedes: a write that a commit overtook while it was under way remembers nothing. */
  #supersedes = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #intervalMs: number;
  readonly #maxPending: number;
  readonly #maxRemembered: number;
  readonly #onError: (err: unknown) => void;
  /** Offsets written at once (the bound was reached), and offsets not written because unchanged: for tests. */
  readonly stats = { writtenAtOnce: 0, skippedUnchanged: 0, written: 0 };

  constructor(
    private readonly write: CarriedWrite,
    options: CarriedOffsetsOptions = {},
  ) {
    this.#intervalMs = options.intervalMs ?? 1_000;
    this.#maxPending = options.maxPending ?? 4_096;
    this.#maxRemembered = options.maxRemembered ?? 16_384;
    this.#onError =
      options.onError ?? ((err) => console.error("nimbus: writing the offsets pulls carried failed:", err));
  }

  /** Holds `entry` (the newest carried offset of its queue replaces an older one), or writes it when too many wait. */
  async carry(group: string, topic: string, entry: OffsetEntry, author: CarriedAuthor | undefined): Promise<void> {
    const pk = keys.offsets(topic, group);
    const sk = keys.offsetSk(entry.brokerName, entry.queueId);
    let records = this.#pending.get(pk);
    if (records?.has(sk) !== true && this.#count >= this.#maxPending) {
      this.stats.writtenAtOnce++;
      await this.#writeAll([{ group, topic, entry, author }]);
      return;
    }
    if (records === undefined) {
      records = new Map();
      this.#pending.set(pk, records);
    }
    if (!records.has(sk)) this.#count++;
    records.set(sk, { group, topic, entry, author });
    this.#timer ??= setTimeout(() => void this.flush(), this.#intervalMs).unref();
  }

  /** A commit of these records is being written: what waits for them is older, and dropped (remembered too). */
  supersede(pk: string, sks: Iterable<string>): void {
    this.#supersedes++;
    const records = this.#pending.get(pk);
    for (const sk of sks) {
      this.#written.delete(`${pk}\n${sk}`);
      if (records?.delete(sk) === true) this.#count--;
    }
    if (records?.size === 0) this.#pending.delete(pk);
  }

  /**
   * A commit of these records landed: what it wrote is what a carried offset is compared with (`owner`: the client it
   * named, not released; "" for none; undefined when it released or claimed the queues: nothing is remembered).
   */
  remember(pk: string, written: { sk: string; offset: number }[], owner: string | undefined): void {
    for (const { sk, offset } of written) {
      const record = `${pk}\n${sk}`;
      if (owner === undefined) this.#written.delete(record);
      else {
        if (!this.#written.has(record) && this.#written.size >= this.#maxRemembered) this.#written.clear();
        this.#written.set(record, { offset, owner });
      }
    }
  }

  /** Writes what waits in partition `pk` (before a read of it). */
  async flushPartition(pk: string): Promise<void> {
    const records = this.#pending.get(pk);
    if (records === undefined) return;
    this.#pending.delete(pk);
    this.#count -= records.size;
    await this.#writeAll([...records.values()]);
  }

  /** Writes what waits in the partitions of `group` (before a read of its topics). */
  async flushGroup(group: string): Promise<void> {
    const pks = [...this.#pending].filter(([, records]) => [...records.values()][0]?.group === group).map(([pk]) => pk);
    await Promise.all(pks.map((pk) => this.flushPartition(pk)));
  }

  /** Writes everything that waits (the interval's end, or the process stopping). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const all = [...this.#pending.values()].flatMap((records) => [...records.values()]);
    this.#pending.clear();
    this.#count = 0;
    await this.#writeAll(all);
  }

  /** Offsets waiting now. */
  get pending(): number {
    return this.#count;
  }

  /** One commit per group, topic and owner; offsets unchanged since this process wrote them are left out. */
  async #writeAll(all: Pending[]): Promise<void> {
    const commits = new Map<string, Pending[]>();
    const supersedes = this.#supersedes;
    for (const p of all) {
      const written = this.#written.get(this.#recordKey(p));
      if (written?.offset === p.entry.offset && written.owner === (p.author?.clientId ?? "")) {
        this.stats.skippedUnchanged++;
        continue;
      }
      const key = `${p.group}\n${p.topic}\n${p.author?.clientId ?? ""}`;
      const list = commits.get(key);
      if (list === undefined) commits.set(key, [p]);
      else list.push(p);
    }
    await Promise.all(
      [...commits.values()].map(async (list) => {
        const [first] = list;
        if (first === undefined) return;
        try {
          await this.write(
            first.group,
            first.topic,
            list.map((p) => p.entry),
            first.author,
          );
        } catch (err) {
          this.#onError(err);
          return;
        }
        this.stats.written += list.length;
        if (supersedes !== this.#supersedes) return;
        if (this.#written.size + list.length > this.#maxRemembered) this.#written.clear();
        for (const p of list)
          this.#written.set(this.#recordKey(p), { offset: p.entry.offset, owner: p.author?.clientId ?? "" });
      }),
    );
  }

  #recordKey(p: Pending): string {
    return `${keys.offsets(p.topic, p.group)}\n${keys.offsetSk(p.entry.brokerName, p.entry.queueId)}`;
  }
}
