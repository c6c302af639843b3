/**
 * @module Lossless storage of item attributes in SQLite: JSON text for the structure, one BLOB beside it for the
 * bytes. JSON lacks binary, so each Uint8Array's bytes go to the row's BLOB (one after another) and the JSON holds
 * `{"$r": [start, length]}` in its place: no base64 to write or to parse back, and a short JSON text. Rows written
 * before the BLOB column existed hold `{"$b": base64}` instead, still read. To keep those tags unambiguous, every
 * map key that starts with `$` gets one more `$` (a real map can then never be exactly `{"$r": ...}` or
 * `{"$b": ...}`). Numbers keep their exact double (JSON prints the shortest round-tripping form), so everything
 * else maps to itself.
 */
import type { AttrValue, Item, SortKey } from "../table.js";

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

const BASE64 = "$b";
const RANGE = "$r";

/** An item's attributes as stored: the JSON text and the bytes its binary values point into (null: none). */
export interface StoredAttributes {
  json: string;
  bytes: Buffer | null;
}

class Encoder {
  readonly parts: Uint8Array[] = [];
  length = 0;

  value(value: AttrValue): Json {
    if (value instanceof Uint8Array) {
      const range: Json = [this.length, value.byteLength];
      this.parts.push(value);
      this.length += value.byteLength;
      return { [RANGE]: range };
    }
    if (Array.isArray(value)) return value.map((v) => this.value(v));
    if (value !== null && typeof value === "object") return this.map(value);
    return value;
  }

  map(map: { [name: string]: AttrValue }): { [key: string]: Json } {
    // fromEntries defines own properties, so a key like "__proto__" stays data and never touches prototypes.
    return Object.fromEntries(Object.entries(map).map(([k, v]) => [k.startsWith("$") ? `$${k}` : k, this.value(v)]));
  }

  /** The bytes of every binary value, in order; one value's bytes are passed as they are (no copy). */
  bytes(): Buffer | null {
    const [only] = this.parts;
    if (only === undefined) return null;
    if (this.parts.length === 1) return Buffer.from(only.buffer, only.byteOffset, only.byteLength);
    return Buffer.concat(this.parts, this.length);
  }
}

class Decoder {
  constructor(readonly bytes: Buffer | null) {}

  value(json: Json): AttrValue {
    if (Array.isArray(json)) return json.map((j) => this.value(j));
    if (json !== null && typeof json === "object") {
      const keys = Object.keys(json);
      if (keys.length === 1) {
        const range = json[RANGE];
        if (Array.isArray(range)) return this.#slice(range);
        const base64 = json[BASE64];
        if (typeof base64 === "string") return own(Buffer.from(base64, "base64"));
      }
      return this.map(json);
    }
    return json;
  }

  map(json: { [key: string]: Json }): { [name: string]: AttrValue } {
    const map: { [name: string]: AttrValue } = {};
    for (const k of Object.keys(json)) {
      const name = k.startsWith("$") ? k.slice(1) : k;
      const value = this.value(json[k] as Json);
      // Assigning "__proto__" would set the prototype: define it as a plain entry instead.
      if (name === "__proto__")
        Object.defineProperty(map, name, { value, enumerable: true, writable: true, configurable: true });
      else map[name] = value;
    }
    return map;
  }

  #slice(range: Json[]): Uint8Array {
    const [start, length] = range;
    const bytes = this.bytes;
    if (typeof start !== "number" || typeof length !== "number" || bytes === null || start + length > bytes.length)
      throw new Error("a stored binary attribute points outside its row's bytes");
    // The row's only binary value (the common case): its bytes as they came from SQLite, else a copy of its part.
    if (start === 0 && length === bytes.length) return own(bytes);
    return new Uint8Array(bytes.subarray(start, start + length));
  }
}

/**
 * `decoded` as a plain Uint8Array of its own: a Buffer that has its own ArrayBuffer is handed out as a view of it,
 * not copied again; one cut from Buffer's shared pool (a small one) is copied.
 */
function own(decoded: Buffer): Uint8Array {
  const whole = decoded.byteOffset === 0 && decoded.buffer.byteLength === decoded.byteLength;
  return whole ? new Uint8Array(decoded.buffer, 0, decoded.byteLength) : new Uint8Array(decoded);
}

/** The attributes of `item` other than its key, as stored. */
export function encodeAttributes(item: Item): StoredAttributes {
  const { pk: _pk, sk: _sk, ...attributes } = item;
  const encoder = new Encoder();
  const json = JSON.stringify(encoder.map(attributes));
  return { json, bytes: encoder.bytes() };
}

/** The item stored as `pk`, `sk`, the JSON text of its attributes and the bytes of its binary values. */
export function decodeItem(pk: string, sk: SortKey, json: string, bytes: Buffer | null = null): Item {
  // The map is new and never holds `pk` or `sk` (encodeAttributes leaves the key out): the key joins it in place.
  const item = new Decoder(bytes).map(JSON.parse(json) as { [key: string]: Json });
  item.pk = pk;
  item.sk = sk;
  return item as Item;
}

/** The JSON key under which a top-level attribute is stored (for SQL's json_extract). */
export function storedName(name: string): string {
  return name.startsWith("$") ? `$${name}` : name;
}
