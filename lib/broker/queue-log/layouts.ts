/**
 * @module Which layout each queue has (layout.ts), learned once per process and kept: a queue's layout never
 * changes after its first reservation. Readers learn it from the base key's newest item, which their first query
 * reads anyway; writers from the same item, read once per process (a spread queue only: a one-key queue's
 * writer reads nothing, and finds out by its counter's absence when the queue is a spread one after all).
 */
import { BoundedMap } from "../../core/bounded-map.js";
import { isNimbusError } from "../../core/errors.js";
import { ConditionFailedError, type Item, type Table } from "../../storage/table.js";
import { counterKeyOf, IndexView, LAYOUT_KEYS_ATTRIBUTE, LAYOUT_SK, layoutKeys, MAX_INDEX_KEYS } from "./layout.js";

/** The most queues whose layout a process remembers (the oldest are forgotten past it, and learned again). */
const MAX_KNOWN = 100_000;

/** Thrown by a one-key reservation that found the queue spread: the writer takes the spread view and tries again. */
export class LayoutMovedError extends Error {
  constructor(readonly keys: number) {
    super(`the queue's index is spread over ${keys} keys`);
  }
}

export class QueueLayouts {
  readonly #known = new BoundedMap<string, IndexView>(MAX_KNOWN);

  /**
   * @param configured how many keys a new queue of `topic` gets (1: one key, as every queue before hot queues).
   */
  constructor(
    readonly table: Table,
    readonly configured: (topic: string) => number,
  ) {}

  /** The layout learned for `pk`, if any. */
  known(pk: string): IndexView | undefined {
    return this.#known.get(pk);
  }

  /** The view a caller that does not read the base key itself takes: the one learned, else as configured. */
  async view(pk: string): Promise<IndexView> {
    const known = this.#known.get(pk);
    if (known !== undefined) return known;
    if (this.#keysFor(pk) === 1) return new IndexView(this.table, pk, 1);
    return (await this.read(pk)).view;
  }

  /**
   * A reader's view and the queue's newest item: one query of the base key (a one-key queue's newest item, or a
   * spread queue's layout item), then, for a spread queue, one query per key.
   */
  async read(pk: string): Promise<{ view: IndexView; newest: Item | undefined }> {
    const known = this.#known.get(pk);
    if (known?.spread === true) return { view: known, newest: await known.newest() };
    const base = (await this.table.query(pk, { descending: true, limit: 1, consistent: true })).items[0];
    const keys = layoutKeys(base);
    if (keys !== undefined) {
      const view = this.#learn(pk, keys);
      return { view, newest: await view.newest() };
    }
    // A one-key queue with items keeps that layout; an empty base key may still become either.
    const view = base === undefined ? (known ?? new IndexView(this.table, pk, 1)) : this.#learn(pk, 1);
    return { view, newest: base };
  }

  /** A one-key queue's counter answered: that is its layout for good. */
  learnOneKey(pk: string): void {
    if (!this.#known.has(pk)) this.#learn(pk, 1);
  }

  /** The spread layout a one-key reservation ran into. */
  learnSpread(pk: string, keys: number): IndexView {
    return this.#learn(pk, keys);
  }

  /**
   * A writer's view: the learned one; else a one-key view when the topic's setting is one key (nothing read: the
   * reservation finds out otherwise); else the layout read from the base key, created when the queue is new
   * (its layout item, before any counter: the first creator's `k` stands).
   */
  async forWriter(pk: string): Promise<IndexView> {
    const known = this.#known.get(pk);
    if (known !== undefined) return known;
    const wanted = this.#keysFor(pk);
    if (wanted === 1) return new IndexView(this.table, pk, 1);
    for (let attempt = 0; ; attempt++) {
      const base = (await this.table.query(pk, { descending: true, limit: 1, consistent: true })).items[0];
      const keys = layoutKeys(base);
      if (keys !== undefined) return this.#learn(pk, keys);
      if (base !== undefined) return this.#learn(pk, 1);
      // An empty base key: a new queue, unless a one-key queue reserved offsets and filled none yet.
      if ((await this.table.get(counterKeyOf(pk, 1), { consistent: true })) !== undefined) return this.#learn(pk, 1);
      try {
        await this.table.put({ pk, sk: LAYOUT_SK, [LAYOUT_KEYS_ATTRIBUTE]: wanted }, { condition: { exists: false } });
      } catch (err) {
        // Another writer's layout item came first (read next), or an unknown outcome (read next, a few times).
        if (!(err instanceof ConditionFailedError) && !(isNimbusError(err) && err.retryable && attempt < 3)) throw err;
      }
    }
  }

  #keysFor(pk: string): number {
    const topic = pk.slice(0, pk.indexOf("#"));
    const keys = Math.floor(this.configured(topic));
    return Number.isFinite(keys) ? Math.min(MAX_INDEX_KEYS, Math.max(1, keys)) : 1;
  }

  #learn(pk: string, keys: number): IndexView {
    const known = this.#known.get(pk);
    if (known?.keys === keys) return known;
    const view = new IndexView(this.table, pk, keys);
    this.#known.set(pk, view);
    return view;
  }
}
