/**
 * @module A value encoded to its wire form by its schema, fast where it can be. zod's encode (the backward
 * direction) parses every node twice, once without checks and once with them, copying its context at each: for
 * a small answer it costs about four times a forward parse. A schema with no codec, transform, default or
 * catch anywhere in it (the send answer, a pull request) encodes to exactly what it parses to, so it is
 * parsed forward; any other schema is encoded by zod. Which schemas are plain is worked out once each.
 */
import { z } from "zod";

/** Node types that parse the same both ways when their children do. */
const PLAIN_LEAVES = new Set([
  "string",
  "number",
  "boolean",
  "bigint",
  "literal",
  "enum",
  "null",
  "undefined",
  "any",
  "unknown",
  "never",
  "nan",
  "template_literal",
]);
/** Bounded: the protocol's schemas are a few hundred nodes; a deeper one is taken as not plain. */
const MAX_DEPTH = 64;

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  innerType?: z.ZodType;
  options?: readonly z.ZodType[];
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  items?: readonly z.ZodType[];
  rest?: z.ZodType | null;
  left?: z.ZodType;
  right?: z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

function plain(schema: z.ZodType | null | undefined, depth: number): boolean {
  if (schema === undefined || schema === null) return true;
  if (depth > MAX_DEPTH) return false;
  const def = defOf(schema);
  const all = (children: readonly (z.ZodType | null | undefined)[]) => children.every((c) => plain(c, depth + 1));
  if (PLAIN_LEAVES.has(def.type)) return true;
  switch (def.type) {
    case "object":
      return all([...Object.values(def.shape ?? {}), def.catchall]);
    case "array":
      return all([def.element]);
    case "optional":
    case "nullable":
    case "readonly":
    case "nonoptional":
      return all([def.innerType]);
    case "union":
      return all(def.options ?? []);
    case "record":
      return all([def.keyType, def.valueType]);
    case "tuple":
      return all([...(def.items ?? []), def.rest]);
    case "intersection":
      return all([def.left, def.right]);
    default:
      // pipe (codecs, transforms), default, prefault, catch, lazy, map, set, ...: zod's own encode.
      return false;
  }
}

const plainness = new WeakMap<z.ZodType, boolean>();

/** True when `schema` has no codec, transform, default or catch: its encode is its forward parse. */
export function isPlainSchema(schema: z.ZodType): boolean {
  let known = plainness.get(schema);
  if (known === undefined) {
    known = plain(schema, 0);
    plainness.set(schema, known);
  }
  return known;
}

/** `z.safeEncode(schema, value)`, by a forward parse where that gives the same (`isPlainSchema`). */
export function safeEncodeToWire<T extends z.ZodType>(schema: T, value: z.output<T>): z.ZodSafeParseResult<z.input<T>> {
  if (isPlainSchema(schema)) return schema.safeParse(value) as z.ZodSafeParseResult<z.input<T>>;
  return z.safeEncode(schema, value);
}

/** `z.encode(schema, value)`, by a forward parse where that gives the same (`isPlainSchema`); throws as it does. */
export function encodeToWire<T extends z.ZodType>(schema: T, value: z.output<T>): z.input<T> {
  const result = safeEncodeToWire(schema, value);
  if (!result.success) throw result.error;
  return result.data;
}
