/** @module Shared pieces of the storage contract suite: fixture per `describe`, unique keys, error checks. */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { type ErrorCode, isNimbusError, type NimbusError } from "../../lib/core/errors.js";
import type { AttrValue, Item, TableSpec } from "../../lib/storage/table.js";
import type { OpenFixture, StorageFixture } from "../support/storage-fixture.js";

/** The tables the suite uses; an adapter whose tables must exist beforehand creates these. */
export const NUMBER_TABLE: TableSpec = { name: "contract-number", sortKeyType: "number" };
export const STRING_TABLE: TableSpec = { name: "contract-string", sortKeyType: "string" };
export const CONTRACT_TABLES: readonly TableSpec[] = [NUMBER_TABLE, STRING_TABLE];

/** Opens a fixture before the enclosing `describe` runs and cleans it up after; call inside `describe`. */
export function useFixture(open: OpenFixture): () => StorageFixture {
  let fixture: StorageFixture | undefined;
  before(async () => {
    fixture = await open();
  });
  after(async () => {
    await fixture?.cleanup();
  });
  return () => {
    if (!fixture) throw new Error("fixture is not open");
    return fixture;
  };
}

let sequence = 0;
const run = Math.random().toString(36).slice(2, 8);

/** A partition key (or object key segment) no other test uses, also across runs on a shared backend. */
export function unique(label: string): string {
  sequence += 1;
  return `${label}-${run}-${sequence}`;
}

/** Awaits `promise` and checks that it rejects with a NimbusError of `code`; returns the error. */
export async function rejectsWith(promise: Promise<unknown>, code: ErrorCode): Promise<NimbusError> {
  let caught: unknown;
  await assert.rejects(promise, (err: unknown) => {
    caught = err;
    return true;
  });
  assert.ok(isNimbusError(caught), `expected a NimbusError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, `expected ${code}, got ${caught.code}: ${caught.message}`);
  return caught;
}

/** Deep copy with every Uint8Array (Buffer included) as a plain Uint8Array, so equality checks bytes only. */
export function plain<T extends AttrValue | Item | undefined>(value: T): T {
  const walk = (v: unknown): unknown => {
    if (v instanceof Uint8Array) return new Uint8Array(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

/** Asserts two items (or values) are equal; binary attributes compare by bytes and must be Uint8Array. */
export function assertItem(actual: unknown, expected: unknown, message?: string): void {
  assert.deepEqual(plain(actual as Item | undefined), plain(expected as Item | undefined), message);
}

/** Every byte value once, 0..255. */
export function allBytes(): Uint8Array {
  return Uint8Array.from({ length: 256 }, (_, i) => i);
}

/** `n` bytes of a repeating pattern (to spot shifted ranges). */
export function patternBytes(n: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (i * 7 + 3) % 251);
}

/** Sorts strings by UTF-8 bytes, as DynamoDB orders string sort keys and S3 orders keys. */
export function byUtf8(values: readonly string[]): string[] {
  return [...values].sort((a, b) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8")));
}

/**
 * Numbers of every shape DynamoDB sizes differently (negatives, fractions, digit pairs split by the decimal
 * point, exponents), `copies` times over, in a list and in a map: what the 400 KB limit must count exactly.
 */
export function numbersOfEveryShape(copies: number): { list: AttrValue; map: AttrValue } {
  const shapes = [-1, -120, 120, 1.5, -1.5, 0, 0.012, -0.001, 12345.6789, -(2 ** 53 - 1), Math.PI, 1e-100, -1.5e100];
  const list = Array.from({ length: copies }, () => shapes).flat();
  return { list, map: Object.fromEntries(list.map((n, i) => [`n${i}`, n])) };
}
