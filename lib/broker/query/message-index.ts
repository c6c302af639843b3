/**
 * @module The message index, RocketMQ's IndexFile on the `Table` port. One item per group commit of a queue
 * (never one per message): partition = the queue, sort key = `<store time, 13 digits>#<first offset, 16
 * digits>`, so a time range of a queue is one range of its partition. The item lists its messages' UNIQ_KEYs
 * in offset order (`u`) and their keys (`k`, `<i> <key>`: a key has no space) unless the topic turned key
 * indexing off. TTL (the retention) removes items with the messages. See docs/query.md.
 */
import type { Item, Table } from "../../storage/table.js";
import type { IndexedMessage } from "../queue-log/index.js";

/** The settings partition: one item per topic that changed its index settings (sk = topic). */
const SETTINGS_PK = "topic-index";
/** An item's ids and keys stay under this many bytes (DynamoDB's item limit is 400 KB); more go into the next item. */
const MAX_ITEM_INDEX_BYTES = 256 * 1024;
/** How long a process trusts a topic's key-index setting it read (the write path reads it at most this often). */
export const SETTING_CACHE_MS = 30_000;

/** One index item, decoded: offsets `[start, start + ids.length)` of queue `pk`, stored at `storeTimestamp`. */
export interface IndexBatch {
  pk: string;
  storeTimestamp: number;
  start: number;
  /** UNIQ_KEY of each message, by offset from `start` ("" when the message had none). */
  ids: string[];
  /** Key and offset index (from `start`) of each keyed message; undefined when the topic did not index keys. */
  keys: Array<[string, number]> | undefined;
}

const pad = (n: number, digits: number) => String(n).padStart(digits, "0");

export function indexSk(storeTimestamp: number, start: number): string {
  return `${pad(storeTimestamp, 13)}#${pad(start, 16)}`;
}

/** A sort key below every item stored at `storeTimestamp` or later and above every earlier one (`:` sorts after `#`). */
export function skBefore(storeTimestamp: number): string {
  return `${pad(Math.max(0, storeTimestamp - 1), 13)}:`;
}

/** The topic of a queue pk (`topic#broker#queueId`; names have no `#`). */
export const topicOfPk = (pk: string): string => pk.slice(0, pk.indexOf("#"));

export function decodeIndexItem(item: Item): IndexBatch | undefined {
  const { pk, sk, u, k } = item;
  if (typeof sk !== "string" || !Array.isArray(u)) return undefined;
  const [time, start] = sk.split("#").map(Number);
  if (time === undefined || start === undefined || !Number.isSafeInteger(time) || !Number.isSafeInteger(start))
    return undefined;
  const keys = Array.isArray(k)
    ? k.flatMap((entry): Array<[string, number]> => {
        if (typeof entry !== "string") return [];
        const space = entry.indexOf(" ");
        return [[entry.slice(space + 1), Number(entry.slice(0, space))]];
      })
    : undefined;
  return { pk, storeTimestamp: time, start, ids: u.map((id) => (typeof id === "string" ? id : "")), keys };
}

export interface MessageIndexOptions {
  retentionMs: number;
  now: () => number;
  monotonicNow?: () => number;
}

/** Writes the index (one put per group commit) and keeps the topics' key-index settings. */
export class MessageIndex {
  readonly #table: Table;
  readonly #options: MessageIndexOptions;
  readonly #settings = new Map<string, { keys: boolean; at: number }>();
  readonly #monotonicNow: () => number;

  constructor(table: Table, options: MessageIndexOptions) {
    this.#table = table;
    this.#options = options;
    this.#monotonicNow = options.monotonicNow ?? (() => performance.now());
  }

  get table(): Table {
    return this.#table;
  }

  /**
   * The queue log's indexer: the ids and keys of one group commit in one put (more only past 256 KiB of
   * ids and keys). Unconditional: the slot's sort key holds the batch's first offset, which one batch owns.
   */
  readonly write = async (
    pk: string,
    queueOffset: number,
    storeTimestamp: number,
    messages: readonly (IndexedMessage | undefined)[],
  ): Promise<void> => {
    const topic = topicOfPk(pk);
    // System topics (half messages, check-back records) are not looked up by id or key.
    if (topic.startsWith("RMQ_SYS_") && topic !== "RMQ_SYS_TRACE_TOPIC") return;
    const withKeys = await this.keysIndexed(topic);
    const expiresAt = Math.ceil((storeTimestamp + this.#options.retentionMs) / 1000);
    let chunkStart = 0;
    while (chunkStart < messages.length) {
      const ids: string[] = [];
      const keys: string[] = [];
      let bytes = 0;
      let i = chunkStart;
      for (; i < messages.length && (bytes < MAX_ITEM_INDEX_BYTES || i === chunkStart); i++) {
        const m = messages[i];
        ids.push(m?.uniqKey ?? "");
        bytes += (m?.uniqKey.length ?? 0) + 3;
        if (!withKeys || m === undefined) continue;
        for (const key of m.keys) {
          keys.push(`${i - chunkStart} ${key}`);
          bytes += key.length + 8;
        }
      }
      await this.#table.put({
        pk,
        sk: indexSk(storeTimestamp, queueOffset + chunkStart),
        u: ids,
        ...(withKeys ? { k: keys } : {}),
        expiresAt,
      });
      chunkStart = i;
    }
  };

  /** Whether `topic` indexes its messages' keys (default yes): cached for `SETTING_CACHE_MS`, else one read. */
  async keysIndexed(topic: string, fresh = false): Promise<boolean> {
    const cached = this.#settings.get(topic);
    if (!fresh && cached && this.#monotonicNow() - cached.at < SETTING_CACHE_MS) return cached.keys;
    const item = await this.#table.get({ pk: SETTINGS_PK, sk: topic }, { consistent: fresh });
    const keys = item?.keys !== false;
    this.#settings.set(topic, { keys, at: this.#monotonicNow() });
    return keys;
  }

  /** Turns key indexing of `topic` on or off (the topic attribute `key.index`); ids are always indexed. */
  async setKeysIndexed(topic: string, keys: boolean): Promise<void> {
    // Unconditional: the last admin update wins, as a topic's other attributes.
    await this.#table.put({ pk: SETTINGS_PK, sk: topic, keys, updatedAt: this.#options.now() });
    this.#settings.set(topic, { keys, at: this.#monotonicNow() });
  }
}
