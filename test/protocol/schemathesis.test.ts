/**
 * @module Schemathesis (the property-based API tester, from PyPI) against the OpenAPI document the local server
 * serves: a bounded number of generated requests per operation (`NIMBUS_SCHEMATHESIS_EXAMPLES`, default 10), and
 * no answer may be a 5xx or disagree with its documented schema. `.ci/run` installs schemathesis when it is missing
 * (a venv under ~/.cache/nimbus/schemathesis); found there, on PATH, or at `NIMBUS_SCHEMATHESIS`. Without it the
 * test is skipped locally and fails on CI.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { startLocalServer } from "../../lib/dev/local-server.js";

/** Where schemathesis is, or undefined. */
export function findSchemathesis(): string | undefined {
  const candidates = [
    process.env.NIMBUS_SCHEMATHESIS,
    path.join(os.homedir(), ".cache", "nimbus", "schemathesis", "bin", "schemathesis"),
    ...(process.env.PATH ?? "").split(path.delimiter).map((dir) => path.join(dir, "schemathesis")),
  ];
  return candidates.find((c): c is string => c !== undefined && c !== "" && existsSync(c));
}

const binary = findSchemathesis();
const required = process.env.CI === "true" || process.env.NIMBUS_REQUIRE_SCHEMATHESIS === "1";

describe("schemathesis against the served OpenAPI document", () => {
  it("finds no 5xx and no answer outside its schema", {
    skip: binary === undefined && !required && "schemathesis is not installed (.ci/run installs it)",
    timeout: 900_000,
  }, async () => {
    assert.ok(binary, "schemathesis is required here (CI): .ci/run installs it");
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-schemathesis-"));
    const server = await startLocalServer({
      port: 0,
      storage: { kind: "local", dataDir },
      registerIntervalMs: 3_600_000,
      retentionIntervalMs: 3_600_000,
    });
    try {
      const examples = process.env.NIMBUS_SCHEMATHESIS_EXAMPLES ?? "10";
      const args = [
        "run",
        `${server.url}/openapi.json`,
        "--checks",
        "not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance",
        "--max-examples",
        examples,
        "--phases",
        "examples,fuzzing",
        "--workers",
        "1",
        "--no-color",
      ];
      const result = await new Promise<{ code: number; out: string }>((resolve) => {
        execFile(binary, args, { cwd: dataDir, maxBuffer: 16 * 1024 * 1024, timeout: 800_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, out: `${stdout}${stderr}` }),
        );
      });
      assert.equal(result.code, 0, result.out.slice(-6000));
      assert.match(result.out, /(\d+) generated, \1 passed/, result.out.slice(-3000));
    } finally {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
