/**
 * @module Consumer offset stores, as RocketMQ's: `RemoteBrokerOffsetStore` (CLUSTERING: the group's
 * offsets live on the broker, `PUT /offsets/{group}/{topic}`) and `LocalFileOffsetStore` (BROADCASTING:
 * each consumer keeps its own in `offsets.json`, written atomically). An offset is the next one to consume.
 * Both keep the offsets in memory and write them out on `persist`/`persistAll`, which the consumers call
 * every `persistConsumerOffsetInterval` and at shutdown.
 *
 * @example
 * const store = new RemoteBrokerOffsetStore(api, "orders-group");
 * store.updateOffset(mq, 42, true);
 * await store.persistAll([mq]); // commits 42 for mq, once
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { MessageQueue } from "../../core/message-queue.js";
import type { NimbusApi } from "../transport/index.js";

/** RocketMQ's ReadOffsetType. */
export type ReadOffsetType = "READ_FROM_MEMORY" | "READ_FROM_STORE" | "MEMORY_FIRST_THEN_STORE";

export interface OffsetStore {
  /** Reads what the store holds at start (the local file); a no-op for the remote store. */
  load(): Promise<void>;
  /** Sets the in-memory offset; with `increaseOnly` it never moves back. */
  updateOffset(mq: MessageQueue, offset: number, increaseOnly: boolean): void;
  /** The offset, or -1 when there is none. READ_FROM_STORE refreshes memory from the store. */
  readOffset(mq: MessageQueue, type: ReadOffsetType): Promise<number>;
  /** Writes the offsets of `mqs` that changed since they were last written (the local file: only `mqs`). */
  persistAll(mqs: readonly MessageQueue[]): Promise<void>;
  /** Writes one queue's offset if it changed. */
  persist(mq: MessageQueue): Promise<void>;
  /** Forgets a queue's in-memory offset (its queue went to another consumer). */
  removeOffset(mq: MessageQueue): void;
  /**
   * Makes the next `READ_FROM_STORE` of the topic's queues send a new request instead of joining one in
   * flight (an orderly consumer that just got a lock must read what was committed before it).
   */
  freshReads?(topic: string): void;
  /**
   * Hands queues over: writes their offsets even if unchanged (marked released where the offsets live on
   * the broker), then forgets them.
   */
  release(mqs: readonly MessageQueue[], successorOf?: (mq: MessageQueue) => string | undefined): Promise<void>;
}

interface Entry {
  mq: MessageQueue;
  offset: number;
}

/** The in-memory table both stores share. */
abstract class MemoryOffsetStore implements OffsetStore {
  protected readonly table = new Map<string, Entry>();

  abstract load(): Promise<void>;
  abstract persistAll(mqs: readonly MessageQueue[]): Promise<void>;
  protected abstract readStored(mq: MessageQueue): Promise<number>;

  updateOffset(mq: MessageQueue, offset: number, increaseOnly: boolean): void {
    const entry = this.table.get(mq.key());
    if (entry === undefined) this.table.set(mq.key(), { mq, offset });
    else if (!increaseOnly || offset > entry.offset) entry.offset = offset;
  }

  async readOffset(mq: MessageQueue, type: ReadOffsetType): Promise<number> {
    const inMemory = this.table.get(mq.key())?.offset;
    if (type === "READ_FROM_MEMORY" || (type === "MEMORY_FIRST_THEN_STORE" && inMemory !== undefined)) {
      return inMemory ?? -1;
    }
    const stored = await this.readStored(mq);
    if (stored >= 0) this.updateOffset(mq, stored, false);
    return stored;
  }

  abstract persist(mq: MessageQueue): Promise<void>;
  abstract release(mqs: readonly MessageQueue[], successorOf?: (mq: MessageQueue) => string | undefined): Promise<void>;

  removeOffset(mq: MessageQueue): void {
    this.table.delete(mq.key());
  }
}

/**
 * CLUSTERING offsets on the broker. `persistAll` commits, per topic in one request, the offsets that
 * differ from what this store last committed or read, naming `clientId` (when given) as the queues' owner.
 * Commits and releases go out one at a time, in call order: a periodic commit still in flight can never
 * land after (and so undo) the release of a queue.
 */
export class RemoteBrokerOffsetStore extends MemoryOffsetStore {
  /** What the broker holds as far as we know, by queue key. */
  readonly #committed = new Map<string, number>();
  readonly #reads = new Map<string, Promise<Map<string, number>>>();
  #writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly api: NimbusApi,
    private readonly group: string,
    private readonly clientId?: string,
  ) {
    super();
  }

  async load(): Promise<void> {}

  protected async readStored(mq: MessageQueue): Promise<number> {
    const offsets = await this.#readTopic(mq.topic);
    const stored = offsets.get(mq.key()) ?? -1;
    if (stored >= 0) this.#committed.set(mq.key(), stored);
    return stored;
  }

  /** One request per topic for the reads of one moment (a rebalance adds many queues of a topic at once). */
  #readTopic(topic: string): Promise<Map<string, number>> {
    let pending = this.#reads.get(topic);
    if (pending === undefined) {
      const read = this.api
        .queryOffsets(this.group, topic)
        .then((rows) => new Map(rows.map((r) => [new MessageQueue(topic, r.brokerName, r.queueId).key(), r.offset])))
        .finally(() => {
          if (this.#reads.get(topic) === read) this.#reads.delete(topic);
        });
      pending = read;
      this.#reads.set(topic, read);
    }
    return pending;
  }

  freshReads(topic: string): void {
    this.#reads.delete(topic);
  }

  persist(mq: MessageQueue): Promise<void> {
    return this.#commit([mq]);
  }

  override removeOffset(mq: MessageQueue): void {
    super.removeOffset(mq);
    this.#committed.delete(mq.key());
  }

  async persistAll(mqs: readonly MessageQueue[]): Promise<void> {
    await this.#commit(mqs);
  }

  /**
   * One release request per topic (every known offset, changed or not, with the queue's next owner as far as
   * `successorOf` knows), then the queues are forgotten.
   */
  async release(mqs: readonly MessageQueue[], successorOf?: (mq: MessageQueue) => string | undefined): Promise<void> {
    const byTopic = new Map<string, Entry[]>();
    for (const mq of mqs) {
      const entry = this.table.get(mq.key());
      if (entry !== undefined) byTopic.set(mq.topic, [...(byTopic.get(mq.topic) ?? []), { ...entry }]);
    }
    try {
      await this.#serialized(() =>
        Promise.all(
          [...byTopic].map(([topic, entries]) => {
            const rows = entries.map((e) => ({ brokerName: e.mq.brokerName, queueId: e.mq.queueId, offset: e.offset }));
            if (this.clientId === undefined) return this.api.commitOffsets(this.group, topic, rows);
            const released = rows.map((row, i) => {
              const successor = successorOf?.(entries[i]?.mq as MessageQueue);
              return successor === undefined ? row : { ...row, successor };
            });
            return this.api.releaseQueues(this.group, topic, this.clientId, released);
          }),
        ),
      );
    } finally {
      for (const mq of mqs) this.removeOffset(mq);
    }
  }

  #serialized<T>(write: () => Promise<T>): Promise<T> {
    const next = this.#writes.then(write);
    this.#writes = next.catch(() => undefined);
    return next;
  }

  #commit(mqs: readonly MessageQueue[]): Promise<void> {
    return this.#serialized(() => this.#commitNow(mqs));
  }

  async #commitNow(mqs: readonly MessageQueue[]): Promise<void> {
    const byTopic = new Map<string, Entry[]>();
    for (const mq of mqs) {
      const entry = this.table.get(mq.key());
      if (entry === undefined || this.#committed.get(mq.key()) === entry.offset) continue;
      byTopic.set(mq.topic, [...(byTopic.get(mq.topic) ?? []), { mq: entry.mq, offset: entry.offset }]);
    }
    await Promise.all(
      [...byTopic].map(async ([topic, entries]) => {
        const rows = entries.map((e) => ({ brokerName: e.mq.brokerName, queueId: e.mq.queueId, offset: e.offset }));
        await this.api.commitOffsets(this.group, topic, rows, this.clientId);
        for (const e of entries) this.#committed.set(e.mq.key(), e.offset);
      }),
    );
  }
}

interface OffsetFile {
  offsetTable: { topic: string; brokerName: string; queueId: number; offset: number }[];
}

/**
 * BROADCASTING offsets in `<dir>/<clientId>/<group>/offsets.json`, as RocketMQ's LocalFileOffsetStore
 * (RocketMQ's default dir is `~/.rocketmq_offsets`). A write goes to a temp file first and is renamed
 * over the old one, whose content is kept as `offsets.json.bak`; `load` falls back to the backup.
 */
export class LocalFileOffsetStore extends MemoryOffsetStore {
  readonly storePath: string;
  #writes: Promise<void> = Promise.resolve();

  constructor(dir: string, clientId: string, group: string) {
    super();
    // A client id holds '@' and '#', never a path separator; replace one anyway so the path stays inside dir.
    this.storePath = path.join(dir, clientId.replace(/[/\\]/g, "_"), group, "offsets.json");
  }

  async load(): Promise<void> {
    for (const [mqKey, offset] of await this.#readFile()) {
      this.table.set(mqKey, { mq: MessageQueue.fromKey(mqKey), offset });
    }
  }

  protected async readStored(mq: MessageQueue): Promise<number> {
    return (await this.#readFile()).get(mq.key()) ?? -1;
  }

  /** Broadcasting has no handover: every consumer reads every queue. Writes the file, then forgets them. */
  async release(mqs: readonly MessageQueue[]): Promise<void> {
    try {
      await this.persistAll([...this.table.values()].map((e) => e.mq));
    } finally {
      for (const mq of mqs) this.removeOffset(mq);
    }
  }

  /** The file holds every queue, so this writes them all (if anything changed). */
  persist(_mq: MessageQueue): Promise<void> {
    return this.persistAll([...this.table.values()].map((e) => e.mq));
  }

  async persistAll(mqs: readonly MessageQueue[]): Promise<void> {
    const keep = new Set(mqs.map((mq) => mq.key()));
    const file: OffsetFile = {
      offsetTable: [...this.table.values()]
        .filter((e) => keep.has(e.mq.key()))
        .sort((a, b) => MessageQueue.compare(a.mq, b.mq))
        .map((e) => ({ topic: e.mq.topic, brokerName: e.mq.brokerName, queueId: e.mq.queueId, offset: e.offset })),
    };
    const text = `${JSON.stringify(file, null, 2)}\n`;
    // One write at a time: two would share the temp file.
    const write = this.#writes.then(() => this.#write(text));
    this.#writes = write.catch(() => undefined);
    await write;
  }

  async #write(text: string): Promise<void> {
    await mkdir(path.dirname(this.storePath), { recursive: true });
    const previous = await readFile(this.storePath, "utf8").catch(() => undefined);
    if (previous === text) return;
    const tmp = `${this.storePath}.tmp`;
    await writeFile(tmp, text);
    if (previous !== undefined) await writeFile(`${this.storePath}.bak`, previous);
    await rename(tmp, this.storePath);
  }

  async #readFile(): Promise<Map<string, number>> {
    for (const file of [this.storePath, `${this.storePath}.bak`]) {
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch {
        continue;
      }
      try {
        const parsed = JSON.parse(text) as OffsetFile;
        return new Map(
          parsed.offsetTable.map((r) => [new MessageQueue(r.topic, r.brokerName, r.queueId).key(), r.offset]),
        );
      } catch {
        // A torn or foreign file: try the backup.
      }
    }
    return new Map();
  }
}
