/**
 * @module Which topics someone in this process waits on for the write path's hint: long-polled POP receives,
 * suspended remoting pulls, the subscriptions delivered here. The other worker processes of one deployment read it
 * (lib/dev/append-notices.ts) to tell this one only of the appends it waits for, instead of every append.
 *
 * A hold names its topic and `since`, a time (`Date.now`, the clock every process of the machine shares) taken
 * before the waiter's first read of storage: an append the read may have missed was committed after `since`, so a
 * process that hears of the hold late still tells of the appends it made from `since` on. A topic stays held
 * `lingerMs` after its last hold ends (a consumer's next receive comes right after its last one: no change to
 * announce in between). Bounded: past `maxTopics` held topics, the process asks for every topic until they drop
 * below it again.
 */

/** What changed: topics added (with the earliest `since` of their holds) or dropped. */
export interface InterestChange {
  /** Whether topics were added, or "every topic" began; false when topics were only dropped. */
  grew: boolean;
  /** The earliest `since` of what was added (meaningless when `grew` is false). */
  since: number;
}

/**
 * The notices of appends this process and the others of its deployment told each other
 * (lib/dev/append-notices.ts), for tests and the broker's runtime info.
 */
export interface NoticeCounts {
  /** Notices sent for this worker's appends (each a message through the primary). */
  sent: number;
  /** Appends no other worker waited for: no notice. */
  withheld: number;
  /** Notices sent on hearing of a hold late, for appends after its `since`. */
  caughtUp: number;
  /** Notices heard from the others. */
  heard: number;
}

export interface AppendInterestOptions {
  /** How long a topic stays held after its last hold ends. Default 30 s. */
  lingerMs?: number;
  /** The most topics held one by one; past it, every topic is. Default 1024. */
  maxTopics?: number;
}

interface Held {
  holds: number;
  linger: NodeJS.Timeout | undefined;
}

/** The longest topic name RocketMQ allows; a longer one is never a waiter's. */
const MAX_TOPIC_LENGTH = 127;

export class AppendInterest {
  readonly #topics = new Map<string, Held>();
  readonly #lingerMs: number;
  readonly #maxTopics: number;
  /** Holds of topics past `maxTopics`: while any (or its linger) lasts, every topic is asked for. */
  #overflow: Held = { holds: 0, linger: undefined };
  readonly #listeners = new Set<(change: InterestChange) => void>();
  readonly notices: NoticeCounts = { sent: 0, withheld: 0, caughtUp: 0, heard: 0 };

  constructor(options: AppendInterestOptions = {}) {
    this.#lingerMs = options.lingerMs ?? 30_000;
    this.#maxTopics = options.maxTopics ?? 1024;
  }

  /** The topics held now (lingering ones included), or "all" past `maxTopics`. */
  topics(): readonly string[] | "all" {
    if (this.#overflow.holds > 0 || this.#overflow.linger !== undefined) return "all";
    return [...this.#topics.keys()];
  }

  /** Whether `topic` is held (or every topic is). */
  has(topic: string): boolean {
    return this.#topics.has(topic) || this.#overflow.holds > 0 || this.#overflow.linger !== undefined;
  }

  /** Tells `listener` of each change; returns its removal. A listener must not throw. */
  onChange(listener: (change: InterestChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Holds `topic` until the returned release is called (once; later calls do nothing). `since`: a time before the
   * waiter's first read of storage.
   */
  hold(topic: string, since: number): () => void {
    if (topic.length === 0 || topic.length > MAX_TOPIC_LENGTH) return () => undefined;
    let held = this.#topics.get(topic);
    let added = false;
    if (held === undefined) {
      if (this.#topics.size >= this.#maxTopics) {
        held = this.#overflow;
        added = held.holds === 0 && held.linger === undefined;
      } else {
        held = { holds: 0, linger: undefined };
        this.#topics.set(topic, held);
        added = true;
      }
    }
    const entry = held;
    entry.holds++;
    if (entry.linger !== undefined) {
      clearTimeout(entry.linger);
      entry.linger = undefined;
    }
    if (added) this.#changed({ grew: true, since });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--entry.holds > 0) return;
      entry.linger = setTimeout(() => this.#drop(topic, entry), this.#lingerMs);
      entry.linger.unref();
    };
  }

  /** Drops every hold and linger (the process stops). */
  close(): void {
    for (const held of [...this.#topics.values(), this.#overflow]) clearTimeout(held.linger);
    this.#topics.clear();
    this.#overflow = { holds: 0, linger: undefined };
    this.#listeners.clear();
  }

  #drop(topic: string, held: Held): void {
    held.linger = undefined;
    if (held.holds > 0) return;
    if (held !== this.#overflow) this.#topics.delete(topic);
    this.#changed({ grew: false, since: 0 });
  }

  #changed(change: InterestChange): void {
    for (const listener of this.#listeners) listener(change);
  }
}
