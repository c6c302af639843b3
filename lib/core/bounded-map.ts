/**
 * @module A Map that remembers at most `maxSize` keys: setting a new key when full forgets the oldest first.
 * "Oldest" follows the Map's own iteration order, which the `order` option picks: `"inserted"` (the default) keeps
 * a key's place when it is set again, as a Map does; `"written"` moves a key set again to the newest place, so the
 * key forgotten is the one written longest ago. Reads never move a key. Every other Map method works unchanged
 * (`delete` and `clear` forget without calling `onForget`).
 */

export interface BoundedMapOptions<K, V> {
  /** `"inserted"` (default): a key set again keeps its place; `"written"`: it becomes the newest. */
  order?: "inserted" | "written";
  /** Called with the key and value forgotten to make room (not for `delete` or `clear`). */
  onForget?: (key: K, value: V) => void;
}

export class BoundedMap<K, V> extends Map<K, V> {
  readonly #renew: boolean;
  readonly #onForget: ((key: K, value: V) => void) | undefined;

  constructor(
    readonly maxSize: number,
    options: BoundedMapOptions<K, V> = {},
  ) {
    super();
    if (!Number.isSafeInteger(maxSize) || maxSize < 1) throw new RangeError(`maxSize ${maxSize} is not a count`);
    this.#renew = options.order === "written";
    this.#onForget = options.onForget;
  }

  /** Sets `key`; a new key when `maxSize` keys are held forgets the oldest first. */
  override set(key: K, value: V): this {
    if (super.has(key)) {
      if (!this.#renew) return super.set(key, value);
      super.delete(key);
    } else if (this.size >= this.maxSize) {
      const oldest = super.entries().next();
      if (oldest.done !== true) {
        const [forgotten, was] = oldest.value;
        super.delete(forgotten);
        this.#onForget?.(forgotten, was);
      }
    }
    return super.set(key, value);
  }
}
