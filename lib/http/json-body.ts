/**
 * @module A request's JSON body, parsed without prototype games and sized before any schema sees it: a
 * `__proto__` key anywhere is refused (PARAMETER_ILLEGAL), not silently dropped by the decoders or, worse,
 * turned into an object's prototype; an array, object, nesting or value count over the bounds of
 * lib/protocol/bounds.ts, or a string with a lone surrogate (it would not read back as sent), is refused by
 * one iterative walk, so zod never recurses over attacker-sized input.
 */
import { ErrorCode, NimbusError } from "../core/errors.js";
import { MAX_JSON_ARRAY_ITEMS, MAX_JSON_DEPTH, MAX_JSON_OBJECT_KEYS, MAX_JSON_VALUES } from "../protocol/index.js";

const PROTO = "__proto__";

/** `text` parsed as JSON and shape-checked, or PARAMETER_ILLEGAL for bad JSON, a `__proto__` key or a shape over the bounds. */
export function parseJsonBody(text: string): unknown {
  const value = parseJsonText(text);
  checkJsonShape(value);
  return value;
}

/**
 * `text` parsed as JSON (values not yet checked), or PARAMETER_ILLEGAL for bad JSON, a `__proto__` key, or a
 * container over the shape bounds, found by a scan of the text before it is parsed (`prescanJson`).
 */
export function parseJsonText(text: string): unknown {
  prescanJson(text);
  // The reviver sees every key; only bodies that could spell the key (plainly or with \u escapes) pay for it.
  const suspicious = text.includes(PROTO) || text.includes("\\u");
  let value: unknown;
  try {
    value = suspicious
      ? JSON.parse(text, (key, v: unknown) => {
          if (key === PROTO) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "a __proto__ key is not allowed");
          return v;
        })
      : JSON.parse(text);
  } catch (err) {
    if (err instanceof NimbusError) throw err;
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "the request body is not valid JSON");
  }
  return value;
}

const illegal = (message: string) => new NimbusError(ErrorCode.PARAMETER_ILLEGAL, message);
/** A lone surrogate: with the `u` flag a pair is one code point, so only an unpaired half matches. */
const LONE_SURROGATE = /\p{Cs}/u;

/** PARAMETER_ILLEGAL unless `value` (parsed JSON) is within the JSON shape bounds and its strings well-formed. */
export function checkJsonShape(value: unknown): void {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  let values = 0;
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { v, depth } = item;
    if (++values > MAX_JSON_VALUES) throw illegal(`the body has more than ${MAX_JSON_VALUES} JSON values`);
    if (typeof v === "string") {
      if (LONE_SURROGATE.test(v)) throw illegal("a string has a lone surrogate (not valid Unicode)");
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) throw illegal(`the body nests deeper than ${MAX_JSON_DEPTH} levels`);
    if (Array.isArray(v)) {
      if (v.length > MAX_JSON_ARRAY_ITEMS)
        throw illegal(`an array has ${v.length} items, over the limit of ${MAX_JSON_ARRAY_ITEMS}`);
      for (const e of v) stack.push({ v: e, depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(v);
    if (keys.length > MAX_JSON_OBJECT_KEYS)
      throw illegal(`an object has ${keys.length} keys, over the limit of ${MAX_JSON_OBJECT_KEYS}`);
    for (const k of keys) {
      if (LONE_SURROGATE.test(k)) throw illegal("a key has a lone surrogate (not valid Unicode)");
      stack.push({ v: (v as Record<string, unknown>)[k], depth: depth + 1 });
    }
  }
}

const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * One pass over the text, before JSON.parse builds anything: PARAMETER_ILLEGAL for nesting over MAX_JSON_DEPTH, an
 * array over MAX_JSON_ARRAY_ITEMS or an object over MAX_JSON_OBJECT_KEYS (counted by their commas outside
 * strings). So a 6 MB body of a million items costs a scan, not a parse that builds a million values and blocks
 * the event loop. Malformed text is left to JSON.parse.
 */
export function prescanJson(text: string): void {
  const commas: number[] = [];
  const isArray: boolean[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (commas.length >= MAX_JSON_DEPTH) throw illegal(`the body nests deeper than ${MAX_JSON_DEPTH} levels`);
      commas.push(0);
      isArray.push(c === OPEN_ARRAY);
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      commas.pop();
      isArray.pop();
    } else if (c === COMMA && commas.length > 0) {
      const top = commas.length - 1;
      const n = (commas[top] ?? 0) + 1;
      commas[top] = n;
      const array = isArray[top] === true;
      if (array && n >= MAX_JSON_ARRAY_ITEMS)
        throw illegal(
          `an array has more than ${MAX_JSON_ARRAY_ITEMS} items, over the limit of ${MAX_JSON_ARRAY_ITEMS}`,
        );
      if (!array && n >= MAX_JSON_OBJECT_KEYS)
        throw illegal(
          `an object has more than ${MAX_JSON_OBJECT_KEYS} keys, over the limit of ${MAX_JSON_OBJECT_KEYS}`,
        );
    }
  }
}
