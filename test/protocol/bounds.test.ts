/**
 * @module Issue 26's principle for lib/protocol: every string, list and map of every request and answer has a
 * documented maximum (maxLength, maxItems, maxProperties in the OpenAPI document the schemas generate), and the
 * JSON shape check refuses attacker-sized bodies before any schema walks them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkJsonShape, parseJsonBody } from "../../lib/http/json-body.js";
import { describeZodError } from "../../lib/http/request-handler.js";
import { SendRequestSchema } from "../../lib/protocol/index.js";
import { openApiDocument } from "../../lib/protocol/openapi.js";

type Json = Record<string, unknown>;

/** Every string, array and map in `schema` that has no maximum, by path. */
function unbounded(schema: unknown, where: string, out: string[]): void {
  if (schema === null || typeof schema !== "object") return;
  const s = schema as Json;
  if (s.$ref !== undefined) return;
  if (s.type === "string" && s.maxLength === undefined && s.enum === undefined && s.const === undefined)
    out.push(`${where}: a string`);
  if (s.type === "array" && s.maxItems === undefined) out.push(`${where}: a list`);
  const extra = s.additionalProperties;
  if (s.type === "object" && typeof extra === "object" && extra !== null && s.maxProperties === undefined)
    out.push(`${where}: a map`);
  for (const [name, v] of Object.entries((s.properties as Json | undefined) ?? {}))
    unbounded(v, `${where}.${name}`, out);
  unbounded(s.items, `${where}[]`, out);
  if (typeof extra === "object") unbounded(extra, `${where}{}`, out);
  for (const k of ["anyOf", "oneOf", "allOf"])
    for (const [i, v] of ((s[k] as unknown[] | undefined) ?? []).entries()) unbounded(v, `${where}|${i}`, out);
}

describe("bounds of lib/protocol", () => {
  it("every string, list and map of every request and answer has a documented maximum", () => {
    const doc = openApiDocument() as { components: { schemas: Json }; paths: Record<string, Record<string, Json>> };
    const found: string[] = [];
    for (const [name, s] of Object.entries(doc.components.schemas)) unbounded(s, name, found);
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        for (const p of (op.parameters as Json[] | undefined) ?? [])
          unbounded(p.schema, `${method} ${path} ${p.name}`, found);
        const bodies = ((op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined) ?? {};
        for (const [type, c] of Object.entries(bodies)) unbounded(c.schema, `${method} ${path} body ${type}`, found);
        for (const [status, r] of Object.entries((op.responses as Record<string, Json> | undefined) ?? {}))
          for (const [type, c] of Object.entries((r.content as Record<string, Json> | undefined) ?? {}))
            unbounded(c.schema, `${method} ${path} ${status} ${type}`, found);
      }
    assert.deepEqual(found, []);
  });

  it("refuses huge arrays, maps, nesting and lone surrogates before a schema sees them", () => {
    const refused = (text: string, pattern: RegExp) =>
      assert.throws(
        () => parseJsonBody(text),
        (e: Error) => pattern.test(e.message),
      );
    refused(`{"topic":"Fz","messages":[${"1,".repeat(100_000)}1]}`, /an array has more than 4096 items/);
    const props = Object.fromEntries(Array.from({ length: 130_000 }, (_, i) => [`k${i}`, "v"]));
    refused(
      JSON.stringify({ topic: "T", messages: [{ body: "", properties: props }] }),
      /an object has more than 1024 keys/,
    );
    refused(`${"[".repeat(40)}${"]".repeat(40)}`, /nests deeper than 16/);
    refused(JSON.stringify({ clientId: "a\ud800b" }), /lone surrogate/);
    assert.doesNotThrow(() => checkJsonShape({ clientId: "a\u{1f600}b" }));
  });

  it("an error answer names the first issues and counts the rest", () => {
    const many = { topic: "T", messages: Array.from({ length: 4000 }, () => 1) };
    const result = SendRequestSchema.safeParse(many);
    assert.equal(result.success, false);
    const text = describeZodError(result.error as never);
    assert.ok(text.length < 2000, `${text.length} characters`);
    assert.match(text, /and 3995 more issues$/);
  });
});
