/**
 * @module The topics' key-index setting (the topic attribute `key.index`): whether a topic's batches keep
 * their messages' keys in the message index, which the queue log writes into each batch's own index item
 * (docs/query.md). Ids are always kept. One item per topic that changed it, in the routes table
 * (`topicindex` / topic); the write path reads it at most once per `SETTING_CACHE_MS` per process.
 */
import { BoundedMap } from "../../core/bounded-map.js";
import type { Table } from "../../storage/table.js";
import type { IndexPolicy } from "../queue-log/index.js";
import { keys } from "../store/index.js";

/** How long a process trusts a topic's key-index setting it read (the write path reads it at most this often). */
export const SETTING_CACHE_MS = 30_000;
/** Topics a process remembers the setting of; past it the oldest is forgotten (read again when needed). */
const MAX_CACHED_TOPICS = 10_000;
/** The trace topic is looked up by key (queryMsgTraceById); the other system topics by nobody. */
const TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC";

/** The topic of a queue pk (`topic#broker#queueId`; names have no `#`). */
export const topicOfPk = (pk: string): string => pk.slice(0, pk.indexOf("#"));

export class KeyIndexSettings {
  readonly #routes: Table;
  readonly #now: () => number;
  readonly #monotonicNow: () => number;
  readonly #cache = new BoundedMap<string, { keys: boolean; at: number }>(MAX_CACHED_TOPICS, { order: "written" });

  constructor(routes: Table, now: () => number, monotonicNow: () => number = () => performance.now()) {
    this.#routes = routes;
    this.#now = now;
    this.#monotonicNow = monotonicNow;
  }

  /** The queue log's question, once per group commit: what the batches of queue `pk` keep of the index. */
  readonly policyOf = async (pk: string): Promise<IndexPolicy> => {
    const topic = topicOfPk(pk);
    // System topics (half messages, check-back records) are not looked up by id or key.
    if (topic.startsWith("RMQ_SYS_") && topic !== TRACE_TOPIC) return "none";
    return (await this.keysIndexed(topic)) ? "keys" : "ids";
  };

  /** Whether `topic` indexes its messages' keys (default yes): cached for `SETTING_CACHE_MS`, else one read. */
  async keysIndexed(topic: string, fresh = false): Promise<boolean> {
    const cached = this.#cache.get(topic);
    if (!fresh && cached && this.#monotonicNow() - cached.at < SETTING_CACHE_MS) return cached.keys;
    const item = await this.#routes.get({ pk: keys.topicIndex, sk: topic }, { consistent: fresh });
    const indexed = item?.keys !== false;
    this.#remember(topic, indexed);
    return indexed;
  }

  /** Turns key indexing of `topic` on or off (the topic attribute `key.index`); ids are always indexed. */
  async setKeysIndexed(topic: string, indexed: boolean): Promise<void> {
    // Unconditional: the last admin update wins, as a topic's other attributes.
    await this.#routes.put({ pk: keys.topicIndex, sk: topic, keys: indexed, updatedAt: this.#now() });
    this.#remember(topic, indexed);
  }

  #remember(topic: string, indexed: boolean): void {
    this.#cache.set(topic, { keys: indexed, at: this.#monotonicNow() });
  }
}
