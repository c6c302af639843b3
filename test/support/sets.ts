/** @module Set comparison for tests: what is missing and what is extra, in one assertion. */
import assert from "node:assert/strict";

export function assertSameSet(actual: Iterable<string>, expected: Iterable<string>, what: string): void {
  const a = new Set(actual);
  const e = new Set(expected);
  const missing = [...e].filter((k) => !a.has(k));
  const extra = [...a].filter((k) => !e.has(k));
  assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, what);
}
