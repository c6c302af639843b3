/**
 * @module Layers that hold by test: every import of lib/, functions/ and infra/ goes the allowed way
 * (test/protocol/layers.ts), and a canary of each kind of wrong-way import is caught.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { ROOT } from "./generate.js";
import { importsOf, wrongWayImports } from "./layers.js";

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && /\.tsx?$/.test(d.name))
    .map((d) => path.relative(ROOT, path.join(d.parentPath, d.name)).split(path.sep).join("/"));
}

describe("layers", () => {
  it("every import in lib/, functions/, infra/ and sst.config.ts goes the allowed way", () => {
    const files = [...sourceFiles("lib"), ...sourceFiles("functions"), ...sourceFiles("infra"), "sst.config.ts"];
    assert.ok(files.length > 100, `read ${files.length} files`);
    const wrong = wrongWayImports(files.map((f) => ({ path: f, text: readFileSync(path.join(ROOT, f), "utf8") })));
    assert.deepEqual(wrong, []);
  });

  it("catches a canary of every rule", () => {
    const canaries: [string, string, string][] = [
      ["lib/core/x.ts", `import { Broker } from "../broker/broker.js";`, "core imports nothing of ours"],
      [
        "lib/console/x.tsx",
        `import { NimbusApi } from "../client/api-client.js";`,
        "the console only core and protocol",
      ],
      ["lib/protocol/x.ts", `import type { Storage } from "../storage/storage.js";`, "protocol imports only core"],
      ["lib/client/x.ts", `export { Broker } from "../broker/broker.js";`, "the SDK only core and protocol"],
      ["lib/broker/x.ts", `import { NimbusApi } from "../client/api-client.js";`, "the broker never imports the SDK"],
      ["lib/broker/x.ts", `const m = await import("../storage/aws/index.js");`, "nor an adapter"],
      ["lib/broker/x.ts", `import { handler } from "../../functions/send.js";`, "nor functions/"],
      ["lib/broker/x.ts", `import type { NimbusConfig } from "../config/nimbus-config.js";`, "nor the config"],
      ["lib/storage/aws/x.ts", `import { keys } from "../../broker/tables.js";`, "adapters never import the broker"],
      ["lib/storage/local/x.ts", `import { x } from "../aws/index.js";`, "nor each other"],
      [
        "lib/http/x.ts",
        `import { createLocalStorage } from "../storage/local/index.js";`,
        "only wiring picks adapters",
      ],
      ["lib/grpc/x.ts", `import { createLocalStorage } from "../storage/local/index.js";`, "gRPC picks no adapter"],
      ["lib/http/x.ts", `import { startGrpcServer } from "../grpc/index.js";`, "HTTP does not import gRPC"],
      ["lib/broker/x.ts", `import { ROCKET_CODE } from "../grpc/codes.js";`, "the broker knows no protocol"],
      [
        "lib/dev/x.ts",
        `import { handler } from "../../functions/send.js";`,
        "the local server never imports functions/",
      ],
      ["functions/x.ts", `import { createLocalStorage } from "../lib/storage/local/index.js";`, "Lambda has no SQLite"],
      ["infra/x.ts", `import { BROKER_TABLES } from "../lib/broker/tables.js";`, "infra evaluates no broker code"],
    ];
    for (const [file, text, rule] of canaries) {
      assert.equal(wrongWayImports([{ path: file, text }]).length, 1, `${rule}: ${file}: ${text}`);
    }
    assert.deepEqual(wrongWayImports([{ path: "lib/broker/x.ts", text: `import { z } from "zod";` }]), []);
  });

  it("reads multi-line, type-only and re-export specifiers", () => {
    const text = [
      `import {`,
      `  a,`,
      `  type B,`,
      `} from "./a.js";`,
      `import type { C } from '../c.js';`,
      `export * from "./d.js";`,
      `import "node:fs";`,
      `const e = await import("./e.js");`,
    ].join("\n");
    assert.deepEqual(importsOf(text), ["./a.js", "../c.js", "./d.js", "./e.js"]);
  });
});
