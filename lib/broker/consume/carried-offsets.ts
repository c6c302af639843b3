/**
 * @module The offsets that pulls carry (a 4.x push consumer's PULL_MESSAGE with FLAG_COMMIT_OFFSET: the offset it has
 * consumed up to, on nearly every pull), held in memory and written at most once per queue per interval, as
 * RocketMQ's broker keeps them in its offset table and persists it every 5 s (`flushConsumerOffsetInterval`).
 * Written at once, each pull of 32 messages cost the store a write: a SQLite transaction on the embedded store, a
 * DynamoDB write on AWS. Now a consumer that keeps pulling costs one write per queue per interval, and one that
 * waits (a suspended pull every 15 s carrying the same offset) none: an offset equal to the one this process last
 * stored for the same owner, less than `rememberMs` ago, is not written again. OffsetService's commits are
 * remembered the same way, and its `commitMoved` (a client's periodic commit) asks `isStored` before writing.
 *
 * What it keeps of RocketMQ's semantics, and what it changes:
 * - **This process reads its own carried offsets**: a read of a group's offsets here (a query, the progress, the
 *   owners) writes the group's pending ones first (`OffsetService`).
 * - **A commit served here wins**: a commit (UPDATE_CONSUMER_OFFSET, the HTTP API, a reset) of a record that this
 *   process serves drops the offset held for it, so a held offset never lands after it. A commit served by another
 *   process may be followed by this one's held offset, up to `intervalMs` later (a commit there, a pull's here).
 * - **Another process sees a carried offset up to `intervalMs` late**, and a process killed (SIGKILL) loses at most
 *   that much: the consumer then gets again what it had consumed since (at least once, never a loss), as after a
 *   RocketMQ broker's crash. The client also commits every queue's offset itself every 5 s.
 * - **Another process's write is corrected within `rememberMs`**: what this process stored is trusted that long
 *   (a reset or a former owner's late write elsewhere is not seen here); past it, an unchanged offset is written
 *   again, once.
 * - **Bounded**: at most `maxPending` offsets wait; past that a carried offset is written at once. The offsets
 *   remembered as stored are at most `maxRemembered`, the oldest forgotten first: a process serving more queue
 *   records than that writes their unchanged offsets again.
 * - A stop (`flush`) writes what waits and waits for the writes under way. Each queue's offset is its own write: a
 *   write that fails (a queue the topic no longer has) is reported and dropped alone; the next pull carries it
 *   again.
 */
import { BoundedMap } from "../../core/bounded-map.js";
import type { OffsetEntry } from "../../protocol/index.js";
import { keys } from "../store/index.js";

/** Who wrote a carried offset: the client named in the record (none: a pull from a connection without one). */
export interface CarriedAuthor {
  clientId: string;
}

/**
 * Writes one queue's carried offset as a commit naming `author` as its owner (not released); the offset as stored
 * (a commit past the queue's end is clamped to it).
 */
export type CarriedWrite = (
  group: string,
  topic: string,
  entry: OffsetEntry,
  author: CarriedAuthor | undefined,
) => Promise<number>;

export interface CarriedOffsetsOptions {
  /** The longest an offset waits before it is written (ms; default 1,000). */
  intervalMs?: number;
  /** The most offsets waiting at once (default 4,096). */
  maxPending?: number;
  /** The most offsets remembered as written (default 16,384). */
  maxRemembered?: number;
  /**
   * How long what this process stored is trusted to be what storage holds (ms; default 60,000): another process may
   * have written the record since (a reset, a former owner), and an unchanged offset is written again past this.
   */
  rememberMs?: number;
  /** The clock of `rememberMs` (default `Date.now`). */
  now?: () => number;
  /** Told of a write that failed (default: logged). */
  onError?: (err: unknown) => void;
}

interface Held {
  group: string;
  topic: string;
  entry: OffsetEntry;
  author: CarriedAuthor | undefined;
}

/** A partition's writes under way, and its group (a read of the group's topics waits for them). */
interface Writing {
  group: string;
  writes: Set<Promise<void>>;
}

export class CarriedOffsets {
  /** The offsets held, by the group's offset partition (`keys.offsets`), then by queue record. */
  readonly #held = new Map<string, Map<string, Held>>();
  #count = 0;
  /** The writes under way, by partition: a read, or a stop, waits for them. */
  readonly #writing = new Map<string, Writing>();
  /**
   * What this process last stored of each record (partition and record) and whom it named, to skip an unchanged
   * offset. Set once a write landed; forgotten when a write or a commit of the record begins; past `maxRemembered`,
   * the record written longest ago is forgotten.
   */
  readonly #lastWritten: BoundedMap<string, { offset: number; owner: string; at: number }>;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #intervalMs: number;
  readonly #maxPending: number;
  readonly #rememberMs: number;
  readonly #now: () => number;
  readonly #onError: (err: unknown) => void;
  /**
   * Offsets written (`written`), written at once because the bound was reached (`writtenAtOnce`, counted in
   * `written` too), carried ones not written because unchanged (`skippedUnchanged`), and queues a periodic commit
   * left out (`skippedUnmoved`, counted by OffsetService).
   */
  readonly stats = { written: 0, writtenAtOnce: 0, skippedUnchanged: 0, skippedUnmoved: 0 };

  constructor(
    private readonly write: CarriedWrite,
    options: CarriedOffsetsOptions = {},
  ) {
    this.#intervalMs = options.intervalMs ?? 1_000;
    this.#maxPending = options.maxPending ?? 4_096;
    this.#lastWritten = new BoundedMap(options.maxRemembered ?? 16_384, { order: "written" });
    this.#rememberMs = options.rememberMs ?? 60_000;
    this.#now = options.now ?? Date.now;
    this.#onError =
      options.onError ?? ((err) => console.error("nimbus: writing the offsets pulls carried failed:", err));
  }

  /** Holds `entry` (the newest carried offset of its queue replaces an older one), or writes it when too many wait. */
  async carry(group: string, topic: string, entry: OffsetEntry, author: CarriedAuthor | undefined): Promise<void> {
    const pk = keys.offsets(topic, group);
    const sk = keys.offsetSk(entry.brokerName, entry.queueId);
    let records = this.#held.get(pk);
    if (records?.has(sk) !== true && this.#count >= this.#maxPending) {
      this.stats.writtenAtOnce++;
      await this.#writeAll([{ group, topic, entry, author }]);
      return;
    }
    if (records === undefined) {
      records = new Map();
      this.#held.set(pk, records);
    }
    if (!records.has(sk)) this.#count++;
    records.set(sk, { group, topic, entry, author });
    this.#timer ??= setTimeout(() => {
      this.flush().catch(this.#onError);
    }, this.#intervalMs).unref();
  }

  /** A commit of these records begins: what is held for them is older, and dropped; what was stored, forgotten. */
  supersede(pk: string, sks: Iterable<string>): void {
    const records = this.#held.get(pk);
    for (const sk of sks) {
      this.#lastWritten.delete(recordKey(pk, sk));
      if (records?.delete(sk) === true) this.#count--;
    }
    if (records?.size === 0) this.#held.delete(pk);
  }

  /**
   * A commit of these records landed: what it stored is what a carried offset is compared with (`owner`: the client
   * it named, not released; "" for none; undefined when it released or claimed the queues: nothing is remembered).
   */
  remember(pk: string, stored: { sk: string; offset: number }[], owner: string | undefined): void {
    for (const { sk, offset } of stored) {
      if (owner === undefined) this.#lastWritten.delete(recordKey(pk, sk));
      else this.#lastWritten.set(recordKey(pk, sk), { offset, owner, at: this.#now() });
    }
  }

  /**
   * Whether record `sk` of partition `pk` is stored with `offset` naming `owner` ("" for none) as far as this process
   * knows: it wrote or committed that last, and holds no newer carried offset for it.
   */
  isStored(pk: string, sk: string, offset: number, owner: string): boolean {
    if (this.#held.get(pk)?.has(sk) === true) return false;
    return this.#stored(recordKey(pk, sk), offset, owner);
  }

  /** Writes what is held in partition `pk`, and waits for its writes under way (before a read of it). */
  async flushPartition(pk: string): Promise<void> {
    const records = this.#held.get(pk);
    if (records !== undefined) {
      this.#held.delete(pk);
      this.#count -= records.size;
      void this.#writeAll([...records.values()]);
    }
    await this.#settled(pk);
  }

  /** Writes what is held in the partitions of `group`, and waits for their writes (before a read of its topics). */
  async flushGroup(group: string): Promise<void> {
    const pks = new Set<string>();
    for (const [pk, records] of this.#held) if (records.values().next().value?.group === group) pks.add(pk);
    for (const [pk, writing] of this.#writing) if (writing.group === group) pks.add(pk);
    await Promise.all([...pks].map((pk) => this.flushPartition(pk)));
  }

  /** Writes everything held and waits for every write under way (the interval's end, or the process stopping). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const all = [...this.#held.values()].flatMap((records) => [...records.values()]);
    this.#held.clear();
    this.#count = 0;
    void this.#writeAll(all);
    await Promise.all([...this.#writing.keys()].map((pk) => this.#settled(pk)));
  }

  /** Offsets held now. */
  get pending(): number {
    return this.#count;
  }

  /** Starts one write per offset (each a commit of its queue); those unchanged since this process stored them skip. */
  #writeAll(all: Held[]): Promise<void> {
    return Promise.all(
      all.map((held) => {
        const record = this.#recordKey(held);
        if (this.#stored(record, held.entry.offset, held.author?.clientId ?? "")) {
          this.stats.skippedUnchanged++;
          return undefined;
        }
        // Forgotten while the write is under way: it is what storage holds only once it landed.
        this.#lastWritten.delete(record);
        return this.#track(held, this.#writeOne(held, record));
      }),
    ).then(() => undefined);
  }

  async #writeOne(held: Held, record: string): Promise<void> {
    try {
      const stored = await this.write(held.group, held.topic, held.entry, held.author);
      this.stats.written++;
      this.#lastWritten.set(record, { offset: stored, owner: held.author?.clientId ?? "", at: this.#now() });
    } catch (err) {
      this.#onError(err);
    }
  }

  /** `write` counted among partition `held`'s writes under way until it settles. */
  #track(held: Held, write: Promise<void>): Promise<void> {
    const pk = keys.offsets(held.topic, held.group);
    let writing = this.#writing.get(pk);
    if (writing === undefined) {
      writing = { group: held.group, writes: new Set() };
      this.#writing.set(pk, writing);
    }
    const writes = writing.writes;
    writes.add(write);
    void write.finally(() => {
      writes.delete(write);
      if (writes.size === 0 && this.#writing.get(pk)?.writes === writes) this.#writing.delete(pk);
    });
    return write;
  }

  /** Settles once partition `pk`'s writes under way now have (they never reject: #writeOne reports). */
  async #settled(pk: string): Promise<void> {
    const writing = this.#writing.get(pk);
    if (writing !== undefined) await Promise.all(writing.writes);
  }

  /** Whether this process stored `record` with `offset` naming `owner`, recently enough to trust it. */
  #stored(record: string, offset: number, owner: string): boolean {
    const last = this.#lastWritten.get(record);
    return (
      last !== undefined && last.offset === offset && last.owner === owner && this.#now() - last.at < this.#rememberMs
    );
  }

  #recordKey(held: Held): string {
    return recordKey(keys.offsets(held.topic, held.group), keys.offsetSk(held.entry.brokerName, held.entry.queueId));
  }
}

/** One queue record of one offset partition, as the memory of what was stored keys it. */
const recordKey = (pk: string, sk: string): string => `${pk}\n${sk}`;
