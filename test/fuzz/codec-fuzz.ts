/**
 * @module Property-based fuzz of the batch codec (`lib/core/message-codec.ts`) with fast-check:
 * - a valid batch with one mutation (bit flip, byte set, truncation, insertion, deletion, a slice copied
 *   elsewhere) decodes to exactly the messages encoded, or throws DATA_CORRUPTED: never anything else;
 * - arbitrary bytes (often behind a valid header) throw DATA_CORRUPTED, or decode to messages that encode
 *   back to those very bytes (the format has one encoding per batch: nothing else is accepted);
 * - merged batches (`concatBatches`) decode to the messages of their parts, in order.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import type { MessageRecord } from "../../lib/core/message.js";
import { concatBatches, decodeBatch, encodeBatch } from "../../lib/core/message-codec.js";

const text = fc.string({ unit: "grapheme", maxLength: 12 });

const messageArb: fc.Arbitrary<MessageRecord> = fc.record({
  bornTimestamp: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  flag: fc.integer({ min: -0x80000000, max: 0x7fffffff }),
  tags: text,
  keys: fc.array(text, { maxLength: 3 }),
  properties: fc.dictionary(fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 }), text, { maxKeys: 3 }),
  body: fc.uint8Array({ maxLength: 48 }),
  reconsumeTimes: fc.integer({ min: 0, max: 0x7fffffff }),
});

const batchArb = fc.array(messageArb, { minLength: 0, maxLength: 4 });

type Mutation =
  | { kind: "flip"; at: number; bit: number }
  | { kind: "set"; at: number; value: number }
  | { kind: "truncate"; at: number }
  | { kind: "insert"; at: number; bytes: Uint8Array }
  | { kind: "delete"; at: number; length: number }
  | { kind: "copy"; from: number; length: number; to: number };

const position = fc.nat({ max: 1 << 16 });
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: position, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant("set" as const), at: position, value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant("truncate" as const), at: position }),
  fc.record({
    kind: fc.constant("insert" as const),
    at: position,
    bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
  }),
  fc.record({ kind: fc.constant("delete" as const), at: position, length: fc.integer({ min: 1, max: 40 }) }),
  fc.record({
    kind: fc.constant("copy" as const),
    from: position,
    length: fc.integer({ min: 1, max: 40 }),
    to: position,
  }),
);

/** `bytes` with `m` applied (positions taken modulo the length). */
export function mutate(bytes: Uint8Array, m: Mutation): Uint8Array {
  const n = bytes.length;
  const at = (p: number) => (n === 0 ? 0 : p % n);
  const out = Buffer.from(bytes);
  switch (m.kind) {
    case "flip":
      if (n > 0) out[at(m.at)] = (out[at(m.at)] ?? 0) ^ (1 << m.bit);
      return out;
    case "set":
      if (n > 0) out[at(m.at)] = m.value;
      return out;
    case "truncate":
      return out.subarray(0, at(m.at));
    case "insert":
      return Buffer.concat([out.subarray(0, at(m.at)), m.bytes, out.subarray(at(m.at))]);
    case "delete":
      return Buffer.concat([out.subarray(0, at(m.at)), out.subarray(at(m.at) + m.length)]);
    case "copy": {
      const slice = out.subarray(at(m.from), at(m.from) + m.length);
      return Buffer.concat([out.subarray(0, at(m.to)), slice, out.subarray(at(m.to))]);
    }
  }
}

/** `decodeBatch(bytes)`, or undefined when it threw DATA_CORRUPTED; any other failure propagates. */
function decodeOrCorrupted(bytes: Uint8Array): MessageRecord[] | undefined {
  try {
    return decodeBatch(bytes);
  } catch (err) {
    if (isNimbusError(err, ErrorCode.DATA_CORRUPTED)) return undefined;
    throw err;
  }
}

/** Plain values for comparison (decoded bodies are views into the input). */
const plain = (messages: MessageRecord[]) =>
  messages.map((m) => ({
    ...m,
    properties: Object.fromEntries(Object.entries(m.properties)),
    body: Buffer.from(m.body).toString("hex"),
  }));

export interface CodecFuzzOptions {
  runs: number;
  seed?: number;
}

/** Runs the three properties, `runs` inputs each. Throws (with fast-check's shrunk counterexample) on a failure. */
export function fuzzCodec({ runs, seed }: CodecFuzzOptions): number {
  const params = { numRuns: runs, ...(seed === undefined ? {} : { seed }) };
  fc.assert(
    fc.property(batchArb, mutationArb, (messages, mutation) => {
      const decoded = decodeOrCorrupted(mutate(encodeBatch(messages), mutation));
      if (decoded !== undefined)
        assert.deepEqual(plain(decoded), plain(messages), "a mutated batch decoded to other messages");
    }),
    params,
  );
  const header = fc.constantFrom(
    new Uint8Array(),
    Uint8Array.of(0x4e, 0x4d, 0x42, 0x54, 1),
    Uint8Array.of(0x4e, 0x4d, 0x42, 0x54, 1, 1, 0, 0, 0),
  );
  fc.assert(
    fc.property(header, fc.uint8Array({ maxLength: 120 }), (prefix, rest) => {
      const bytes = Buffer.concat([prefix, rest]);
      const decoded = decodeOrCorrupted(bytes);
      if (decoded !== undefined)
        assert.deepEqual(Buffer.from(encodeBatch(decoded)), bytes, "accepted bytes that are not a canonical batch");
    }),
    params,
  );
  fc.assert(
    fc.property(fc.array(batchArb, { minLength: 1, maxLength: 4 }), (batches) => {
      const merged = decodeBatch(concatBatches(batches.map((b) => encodeBatch(b))));
      assert.deepEqual(plain(merged), plain(batches.flat()));
    }),
    params,
  );
  return 3 * runs;
}
