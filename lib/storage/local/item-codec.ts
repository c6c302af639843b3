/**
 * @module Lossless JSON for item attributes in SQLite. JSON lacks binary, so a Uint8Array becomes
 * `{"$b": base64}`; to keep that tag unambiguous, every map key that starts with `$` gets one more `$`
 * (a real map can then never be exactly `{"$b": ...}`). Numbers keep their exact double (JSON prints the
 * shortest round-tripping form), so everything else maps to itself.
 */
import type { AttrValue, Item, SortKey } from "../table.js";

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

const BINARY = "$b";

function encodeValue(value: AttrValue): Json {
  if (value instanceof Uint8Array) {
    return { [BINARY]: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") };
  }
  if (Array.isArray(value)) return value.map(encodeValue);
  if (value !== null && typeof value === "object") return encodeMap(value);
  return value;
}

function encodeMap(map: { [name: string]: AttrValue }): { [key: string]: Json } {
  // fromEntries defines own properties, so a key like "__proto__" stays data and never touches prototypes.
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k.startsWith("$") ? `$${k}` : k, encodeValue(v)]));
}

function decodeValue(json: Json): AttrValue {
  if (Array.isArray(json)) return json.map(decodeValue);
  if (json !== null && typeof json === "object") {
    const keys = Object.keys(json);
    const tag = json[BINARY];
    if (keys.length === 1 && typeof tag === "string") return new Uint8Array(Buffer.from(tag, "base64"));
    return decodeMap(json);
  }
  return json;
}

function decodeMap(json: { [key: string]: Json }): { [name: string]: AttrValue } {
  return Object.fromEntries(Object.entries(json).map(([k, v]) => [k.startsWith("$") ? k.slice(1) : k, decodeValue(v)]));
}

/** The attributes of `item` other than its key, as JSON text. */
export function encodeAttributes(item: Item): string {
  const { pk: _pk, sk: _sk, ...attributes } = item;
  return JSON.stringify(encodeMap(attributes));
}

/** The item stored as `pk`, `sk` and the JSON text of its attributes. */
export function decodeItem(pk: string, sk: SortKey, json: string): Item {
  const attributes = decodeMap(JSON.parse(json) as { [key: string]: Json });
  return { ...attributes, pk, sk };
}

/** The JSON key under which a top-level attribute is stored (for SQL's json_extract). */
export function storedName(name: string): string {
  return name.startsWith("$") ? `$${name}` : name;
}
